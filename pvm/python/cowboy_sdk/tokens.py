"""CIP-20 platform tokens (spec 002 §17.3), served by the chain's token
module (0x...0E). The calling actor is the sender: it holds, spends,
approves, and (as a token's admin or with a TokenMint/TokenBurn
entitlement) mints and burns. Token ids are 32 bytes; addresses are 20
bytes or 0x-hex strings; amounts are ints in the token's base units.

A refused operation (beyond the balance or allowance, above the cap, not a
minter, ...) raises HostError whose text names the failure code (e.g.
"token_transfer: TokenBalance: ...") and changes nothing.
"""

import pvm_host


def _id(token):
    if type(token) is not bytes or len(token) != 32:
        raise ValueError("token must be a 32-byte id")
    return token


def _amount(v):
    if type(v) is not int or v < 0:
        raise ValueError("amount must be a non-negative int")
    return v


def create(name, symbol, decimals=18, cap=0, initial=0):
    """Create a token (10,000 cycles, 256 + name + symbol cells); this actor
    is its admin and receives `initial`. cap=0 means uncapped. Returns the id."""
    if type(name) is not str or type(symbol) is not str:
        raise ValueError("name and symbol must be strings")
    if type(decimals) is not int:
        raise ValueError("decimals must be an int")
    return pvm_host.host_call("token_create", name=name, symbol=symbol, decimals=decimals,
                              cap=_amount(cap), initial=_amount(initial))


def transfer(token, to, amount):
    """Move `amount` of this actor's balance to `to` (1,000 cycles, 64 cells)."""
    return pvm_host.host_call("token_transfer", token=_id(token), to=pvm_host._addr(to), amount=_amount(amount))


def transfer_from(token, owner, to, amount):
    """Move `amount` from `owner` to `to` against this actor's allowance (1,500 cycles, 96 cells)."""
    return pvm_host.host_call("token_transfer_from", token=_id(token), owner=pvm_host._addr(owner),
                              to=pvm_host._addr(to), amount=_amount(amount))


def approve(token, spender, amount):
    """Let `spender` move up to `amount` of this actor's balance (500 cycles, 32 cells)."""
    return pvm_host.host_call("token_approve", token=_id(token), spender=pvm_host._addr(spender),
                              amount=_amount(amount))


def balance_of(token, owner=None):
    """`owner`'s balance (default: this actor) (100 cycles)."""
    who = pvm_host._addr(owner) if owner is not None else pvm_host.self_address()
    return pvm_host.host_call("token_balance_of", token=_id(token), owner=who)


def mint(token, to, amount):
    """Mint `amount` to `to`, within the cap (1,000 cycles, 64 cells)."""
    return pvm_host.host_call("token_mint", token=_id(token), to=pvm_host._addr(to), amount=_amount(amount))


def burn(token, amount):
    """Burn `amount` of this actor's balance (500 cycles, 64 cells)."""
    return pvm_host.host_call("token_burn", token=_id(token), amount=_amount(amount))


def info(token):
    """The token's metadata and supply: a dict with id, name, symbol,
    decimals, cap (0: uncapped), supply and admin (100 cycles)."""
    return pvm_host.host_call("token_info", token=_id(token))
