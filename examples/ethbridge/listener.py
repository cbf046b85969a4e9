# An actor that receives Ethereum events through the bridge (docs/ETHEREUM.md).
# Deploy it with the "eth" entitlement naming the contract (and event) it may
# hear from, subscribe it with `cowboy bridge subscribe`, and each confirmed
# log the bridge relays arrives at on_eth_event, once.
from cowboy_sdk import actor, eth_event


@actor
class Listener:
    def __init__(self):
        self.storage["events"] = []

    @eth_event
    def on_eth_event(self, ev):
        # ev: chain_id, contract, block_number, tx_hash, log_index, topics, data.
        # The vault's Deposit(address indexed from, bytes32 indexed to, uint256 amount).
        evs = self.storage["events"]
        evs.append({
            "eth_block": ev["block_number"],
            "tx_hash": "0x" + ev["tx_hash"].hex(),
            "log_index": ev["log_index"],
            "from": "0x" + ev["topics"][1][12:].hex(),
            "to": "0x" + ev["topics"][2][12:].hex(),
            "amount": int.from_bytes(ev["data"][:32], "big"),
        })
        self.storage["events"] = evs

    def count(self):
        return len(self.storage["events"])

    def last(self):
        evs = self.storage["events"]
        return evs[-1] if evs else None
