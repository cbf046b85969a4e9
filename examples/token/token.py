# A CIP-20 platform token owned by an actor (cowboy_sdk.tokens, docs/TOKENS.md).
# Deploying it creates the token in the chain's token module with this actor as
# its admin and mints `supply` to the deployer, as ledger.py (the hand-written
# version) did in its own storage. Holders then move it with the platform:
# `cowboy token transfer`, or tokens.transfer from any actor, at the cost table
# of spec 002 §17.3 instead of metered Python.
from cowboy_sdk import actor, public, runtime, tokens


@actor
class Token:
    def __init__(self, supply=1000000, cap=0):
        tid = tokens.create("Example Token", "EXT", 0, cap, 0)
        self.storage["token"] = tid
        self.storage["owner"] = runtime.caller()
        if supply:
            tokens.mint(tid, runtime.caller(), supply)

    @public
    def token_id(self):
        return self.storage["token"]

    @public
    def balance_of(self, addr):
        return tokens.balance_of(self.storage["token"], addr)

    @public
    def total_supply(self):
        return tokens.info(self.storage["token"])["supply"]

    @public
    def mint(self, to, amount):
        # Only the deployer mints through the actor (the actor is the admin).
        if runtime.caller() != self.storage["owner"]:
            raise ValueError("only the deployer mints")
        return tokens.mint(self.storage["token"], to, amount)
