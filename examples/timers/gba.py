"""Gas Bidding Agent (CIP-1): bids for a timer's execution at block time.

When a timer that names this actor as its GBA is due, the block producer
calls `get_gas_bid(context)` read-only (at most 100,000 cycles) with

    trigger_block_height, current_block_height, basefee_cycle, basefee_cell,
    last_block_cycle_usage, owner_actor_balance, timer_id, owner, handler,
    deferrals

and runs the timer with the returned fee parameters

    [cycles_limit, cells_limit, max_fee_per_cycle, max_fee_per_cell,
     tip_per_cycle, tip_per_cell]

(a dict with those keys works too). Any error falls back to the network
default bid. This agent tips more the longer the timer has waited: the tip
doubles with every block of delay, up to `max_tip`, and it never bids more
than the owner can pay.
"""

from cowboy_sdk import actor


@actor
class DelayBidder:
    def __init__(self, base_tip=1, max_tip=1000000, cycles_limit=200000, cells_limit=4000):
        self.storage["cfg"] = [base_tip, max_tip, cycles_limit, cells_limit]

    def get_gas_bid(self, ctx):
        base_tip, max_tip, cycles, cells = self.storage["cfg"]
        delay = max(0, ctx["current_block_height"] - ctx["trigger_block_height"])
        tip = min(max_tip, base_tip << min(delay, 40))
        fee_cycle = ctx["basefee_cycle"] * 2 + tip
        fee_cell = ctx["basefee_cell"] * 2
        # Do not bid more than the owner can reserve: the timer would fail.
        while tip > 0 and cycles * fee_cycle + cells * fee_cell > ctx["owner_actor_balance"]:
            tip //= 2
            fee_cycle = ctx["basefee_cycle"] * 2 + tip
        return [cycles, cells, fee_cycle, fee_cell, tip, 0]

    def config(self):
        return self.storage["cfg"]
