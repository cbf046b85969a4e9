"""Canonical CBOR rules and secp256k1 edge cases (no node needed)."""

from __future__ import annotations

import pytest

from cowboy import cbor, secp256k1
from cowboy.keccak import keccak256
from cowboy.keys import PrivateKey
from cowboy.tx import MalformedTxError, Signature, Transaction
from cowboy.types import Address

H = bytes.fromhex


@pytest.mark.parametrize("bad", [
    "1800",          # 0 with a one-byte head
    "190017",        # 23 with a two-byte head
    "a2616201616101",  # map keys out of order ("b" before "a")
    "9f01ff",        # indefinite-length array
    "5f4101ff",      # indefinite-length byte string
    "fb3ff0000000000000",  # 1.0 as a double (half precision suffices)
    "c24101",        # bignum 1 (fits a plain integer)
])
def test_non_canonical_rejected(bad: str) -> None:
    with pytest.raises(cbor.CBORError):
        cbor.decode(H(bad))


@pytest.mark.parametrize("bad", ["0101", "61ff", "a201010102", "f97e00", "1c", "d9"])
def test_malformed_rejected(bad: str) -> None:
    # trailing bytes, invalid UTF-8, duplicate keys, NaN, reserved info, truncated
    with pytest.raises(cbor.CBORError):
        cbor.decode(H(bad))


def test_map_key_order_is_bytewise() -> None:
    # RFC 8949 §4.2.1's example: core deterministic order is bytewise over the
    # encoded keys (not RFC 7049's length-first order).
    m = {False: 0, (-1,): 0, (100,): 0, "aa": 0, "z": 0, -1: 0, 100: 0, 10: 0}
    enc = cbor.encode(m).hex()
    assert enc == "a8" + "".join(k + "00" for k in ("0a", "1864", "20", "617a", "626161", "811864", "8120", "f4"))


def test_encoder_rules() -> None:
    assert cbor.encode({"b": 1, "a": 2, "aa": 3}) == H("a3616102616201626161" + "03")
    assert cbor.encode(2**64) == H("c249010000000000000000")
    assert cbor.encode(-(2**64) - 1) == H("c349010000000000000000")
    assert cbor.encode(1.5) == H("f93e00") and cbor.encode(0.1) == H("fb3fb999999999999a")
    with pytest.raises(cbor.CBORError):
        cbor.encode(float("nan"))
    nested: list = []
    for _ in range(40):
        nested = [nested]
    with pytest.raises(cbor.CBORError):
        cbor.encode(nested)


def test_rfc6979_and_recovery() -> None:
    # The well-known secp256k1 RFC 6979 vector: key 1, sha256("Satoshi Nakamoto").
    import hashlib
    h = hashlib.sha256(b"Satoshi Nakamoto").digest()
    v, r, s = secp256k1.sign(h, (1).to_bytes(32, "big"))
    assert r.hex() == "934b1ea10a4b3c1757e2b0c017d0b6143ce3c9a7e6a4a49860d7a6ab210ee3d8"
    assert s.hex() == "2442ce9d2b916064108014783e923ec36b49743e2ffa1c4496f01a512aafd9e5"
    assert secp256k1.recover(h, v, r, s) == secp256k1.private_to_public((1).to_bytes(32, "big"))


def test_high_s_twin_is_refused() -> None:
    k = PrivateKey(b"\x05" * 32)
    t = Transaction(1, 0, Address(b"\x01" * 20), 1).sign(k)
    assert t.sender == k.address
    s = t.signature
    assert s is not None
    twin = Signature(s.y_parity ^ 1, s.r, (secp256k1.N - int.from_bytes(s.s, "big")).to_bytes(32, "big"))
    import dataclasses
    with pytest.raises(MalformedTxError):
        dataclasses.replace(t, signature=twin).sender


def test_known_address() -> None:
    k = PrivateKey("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
    assert str(k.address) == "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23"
    assert keccak256(b"abc").hex() == "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"
