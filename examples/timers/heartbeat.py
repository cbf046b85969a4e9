"""Heartbeat: an actor that beats every `every` blocks on its own, with
native timers (spec 002 §3.3) instead of an off-chain keeper.

Each beat is a one-shot timer whose handler schedules the next one, so the
actor can change its period or stop at any time. The timer message calls
`beat(n)` on this actor and is paid from the actor's balance: fund it when
deploying (`--value`). Scheduling holds a refundable deposit (returned when
the beat fires or is cancelled) and burns a small surcharge.

If `gba` is set, that Gas Bidding Agent actor (see gba.py) is asked at block
time how much to bid for running the beat; otherwise the network default
bid is used.
"""

from cowboy_sdk import actor, runtime

# The caller of timer messages: the timer escrow system address 0x…0010.
TIMER = bytes(18) + b"\x00\x10"


@actor
class Heartbeat:
    def __init__(self, every=5, gba=None):
        every = int(every)
        if every <= 0:
            raise ValueError("every must be a positive number of blocks")
        self.storage["every"] = every
        self.storage["gba"] = gba
        self.storage["beats"] = 0
        self.storage["last"] = 0
        self.storage["timer"] = None

    def start(self):
        """Schedule the first beat; returns the timer id."""
        if self.storage["timer"] is None:
            self.schedule(1)
        return self.storage["timer"]

    def beat(self, n):
        """Timer handler: record the beat and schedule the next one."""
        if runtime.caller() != TIMER:
            raise PermissionError("beat is run by the timer")
        h = runtime.block_info()["height"]
        self.storage["beats"] = n
        self.storage["last"] = h
        runtime.emit_event("Heartbeat", {"n": n, "height": h})
        self.schedule(n + 1)

    def stop(self):
        """Cancel the pending beat; returns the refunded deposit."""
        tid = self.storage["timer"]
        if tid is None:
            return 0
        self.storage["timer"] = None
        return runtime.cancel_timer(tid)

    def status(self):
        return {"beats": self.storage["beats"], "last": self.storage["last"],
                "every": self.storage["every"], "timer": self.storage["timer"]}

    def schedule(self, n):
        h = runtime.block_info()["height"]
        self.storage["timer"] = runtime.set_timer(h + self.storage["every"], "beat", n, self.storage["gba"])
