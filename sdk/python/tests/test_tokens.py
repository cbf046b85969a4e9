"""CIP-20 platform token methods against a real ``cowboyd --dev``: create,
transfer, approve, transfer_from, mint, burn, balance and info, the cost
table's exact cycles and cells, and refusals with their codes."""

from __future__ import annotations

import pytest

from cowboy import Client, PrivateKey
from cowboy._core import token_cost, token_id
from cowboy.errors import TransactionFailedError
from cowboy.fees import intrinsic
from cowboy.instructions import TokenTransfer
from cowboy.tx import Transaction

from conftest import fund


def used(c: Client, t: Transaction) -> tuple:
    rc = c.wait(t)["receipt"]
    return rc["cycles_used"], rc["cells_used"]


def test_token_lifecycle(client: Client, funded_key: PrivateKey) -> None:
    c, alice = client, funded_key
    bob, carol = PrivateKey.generate(), PrivateKey.generate()
    fund(c, bob, 10)
    r = c.wait(c.token_create(alice, "Py Gold", "PYG", 6, cap=1_000, initial=100))
    tid = token_id(r)
    info = c.token_info(tid)
    assert (info["name"], info["symbol"], info["decimals"], info["cap"], info["supply"]) == ("Py Gold", "PYG", 6, "1000", "100")
    assert info["admin"] == str(alice.address)
    assert any(t["id"] == str(tid) for t in c.tokens())

    # Each transaction pays exactly the intrinsic cost plus the §17.3 row.
    t = c.token_transfer(alice, tid, bob.address, 30)
    ic, ib = intrinsic(TokenTransfer(tid, bob.address, 30), len(t.payload))
    assert used(c, t) == (ic + 1_000, ib + 64)
    assert c.token_balance(tid, bob.address)["balance"] == 30
    assert c.token_balance(tid, alice.address)["balance"] == 70

    c.wait(c.token_approve(bob, tid, carol.address, 20))
    b = c.token_balance(tid, bob.address, spender=carol.address)
    assert (b["balance"], b["allowance"]) == (30, 20)
    fund(c, carol, 10)
    c.wait(c.token_transfer_from(carol, tid, bob.address, carol.address, 15))
    assert c.token_balance(tid, carol.address)["balance"] == 15
    assert c.token_balance(tid, bob.address, spender=carol.address)["allowance"] == 5

    c.wait(c.token_mint(alice, tid, carol.address, 900))
    c.wait(c.token_burn(alice, tid, 70))
    assert c.token_info(tid)["supply"] == str(100 + 900 - 70)

    # Refusals: beyond the allowance, above the cap, by a non-minter. Each
    # receipt names its code and changes no balance.
    for send, code in (
        (lambda: c.token_transfer_from(carol, tid, bob.address, carol.address, 6), "TokenAllowance"),
        (lambda: c.token_mint(alice, tid, alice.address, 71), "SupplyCapExceeded"),
        (lambda: c.token_mint(bob, tid, bob.address, 1), "NotMinter"),
        (lambda: c.token_transfer(bob, tid, alice.address, 16), "TokenBalance"),
    ):
        with pytest.raises(TransactionFailedError) as e:
            c.wait(send())
        assert e.value.receipt["code_name"] == code, e.value.receipt
    assert c.token_balance(tid, bob.address)["balance"] == 15
    assert c.token_info(tid)["supply"] == "930"


def test_token_cost_matches_go_table() -> None:
    from cowboy.instructions import TokenApprove, TokenBurn, TokenCreate, TokenMint, TokenTransferFrom
    a, h = b"\x01" * 20, b"\x02" * 32
    assert token_cost(TokenCreate("Gold", "GLD")) == (10_000, 256 + 4 + 3)
    assert token_cost(TokenTransferFrom(h, a, a, 1)) == (1_500, 96)
    assert token_cost(TokenApprove(h, a, 1)) == (500, 32)
    assert token_cost(TokenMint(h, a, 1)) == (1_000, 64)
    assert token_cost(TokenBurn(h, 1)) == (500, 64)
