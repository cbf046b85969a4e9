# Two instances of this actor play ping-pong over asynchronous messages:
# each ping is delivered in the same block, in order, one level deeper.
from cowboy_sdk import actor, runtime


@actor
class Player:
    def __init__(self):
        self.storage["hits"] = 0

    def serve(self, other, rounds):
        runtime.send(other, "ping", [runtime.self_address(), rounds])

    def ping(self, sender, rounds):
        self.storage["hits"] += 1
        runtime.emit_event("ping", {"rounds_left": rounds - 1})
        if rounds > 1:
            runtime.send(sender, "ping", [runtime.self_address(), rounds - 1])

    def hits(self):
        return self.storage["hits"]
