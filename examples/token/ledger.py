# The hand-written token ledger this example used to be, kept to compare its
# costs with the CIP-20 platform token (docs/TOKENS.md): balances keyed by
# address in actor storage, transfers and events, all in metered Python.
from cowboy_sdk import actor, public, runtime


def _hex(addr):
    # Addresses arrive as 20 bytes (from the runtime) or 0x-hex strings (from JSON).
    if hasattr(addr, "hex"):
        if len(addr) != 20:
            raise ValueError("an address is 20 bytes")
        return "0x" + addr.hex()
    if addr.startswith("0x") and len(addr) == 42:
        return addr.lower()
    raise ValueError("not an address: " + addr)


@actor
class Token:
    def __init__(self, supply=1000000):
        self.storage["supply"] = supply
        self.storage["bal:" + _hex(runtime.caller())] = supply

    @public
    def balance_of(self, addr):
        return self.storage.get("bal:" + _hex(addr), 0)

    @public
    def transfer(self, to, amount):
        sender = _hex(runtime.caller())
        to = _hex(to)
        if amount <= 0:
            raise ValueError("amount must be positive")
        have = self.storage.get("bal:" + sender, 0)
        if have < amount:
            raise ValueError("insufficient token balance")
        self.storage["bal:" + sender] = have - amount
        self.storage["bal:" + to] = self.storage.get("bal:" + to, 0) + amount
        runtime.emit_event("Transfer", {"from": sender, "to": to, "amount": amount})
        return True

    @public
    def total_supply(self):
        return self.storage["supply"]
