"""Sparse-Merkle state proofs (chain/state/smt, docs/STATE.md), verified
against nothing but a state root — a port of ``smt.VerifyProof`` and
``sdk.VerifyAccount``.

``leaf = keccak256(0x00 ‖ keccak256(key) ‖ keccak256(value))``,
``inner = keccak256(0x01 ‖ left ‖ right)``, empty subtree = 32 zero bytes.
A proof is ``{depth, bitmap, siblings, leaf?}``: bit i (MSB first) of the
bitmap says whether the sibling at level i is non-empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Tuple

from . import cbor
from .errors import ProofError
from .keccak import keccak256
from .types import Address, Hash, from_hex

__all__ = ["Proof", "verify_proof", "verify_account", "account_key", "storage_key", "AccountState"]

EMPTY_ROOT = bytes(32)
MAX_DEPTH = 256
PREFIX_ACCOUNT = 0x01
PREFIX_CODE = 0x02
PREFIX_STORAGE = 0x03


def account_key(addr: bytes) -> bytes:
    """State key of an account: ``0x01 ‖ address``."""
    return bytes([PREFIX_ACCOUNT]) + bytes(Address(addr))


def storage_key(actor: bytes, key: bytes) -> bytes:
    """State key of one actor storage slot: ``0x03 ‖ actor ‖ key``."""
    return bytes([PREFIX_STORAGE]) + bytes(Address(actor)) + bytes(key)


@dataclass(frozen=True)
class Proof:
    depth: int
    bitmap: bytes
    siblings: Tuple[bytes, ...]
    leaf: Optional[Tuple[bytes, bytes]] = None  # (path, value_hash)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Proof":
        try:
            leaf = None
            if d.get("leaf"):
                leaf = (from_hex(d["leaf"]["path"]), from_hex(d["leaf"]["valueHash"]))
            return cls(int(d["depth"]), from_hex(d["bitmap"]), tuple(from_hex(s) for s in d.get("siblings") or []), leaf)
        except (KeyError, TypeError, ValueError) as e:
            raise ProofError(f"malformed proof: {e}") from None

    def validate(self) -> None:
        if not 0 <= self.depth <= MAX_DEPTH:
            raise ProofError(f"depth {self.depth} out of range [0,{MAX_DEPTH}]")
        if len(self.bitmap) != (self.depth + 7) // 8:
            raise ProofError(f"bitmap has {len(self.bitmap)} bytes, want {(self.depth + 7) // 8}")
        r = self.depth % 8
        if r and self.bitmap[-1] & (0xFF >> r):
            raise ProofError("bitmap padding bits are not zero")
        if sum(bin(b).count("1") for b in self.bitmap) != len(self.siblings):
            raise ProofError("bitmap and sibling count disagree")
        for i, s in enumerate(self.siblings):
            if len(s) != 32:
                raise ProofError(f"sibling {i} has {len(s)} bytes")
            if s == EMPTY_ROOT:
                raise ProofError(f"sibling {i} is the empty hash")
        if self.leaf is not None and (len(self.leaf[0]) != 32 or len(self.leaf[1]) != 32):
            raise ProofError("leaf path and value hash must be 32 bytes")


def _bit(path: bytes, i: int) -> int:
    return (path[i >> 3] >> (7 - (i & 7))) & 1


def _common_prefix(a: bytes, b: bytes) -> int:
    for i in range(256):
        if _bit(a, i) != _bit(b, i):
            return i
    return 256


def verify_proof(root: bytes, key: bytes, value: Optional[bytes], proof: Proof) -> None:
    """Check that ``proof`` establishes ``key ↦ value`` (inclusion) or, with
    ``value`` None, that ``key`` is absent, under ``root``. Raises ProofError."""
    proof.validate()
    if value is not None and len(value) == 0:
        value = b"\x00"  # the store commits an empty value as one zero byte
    path = keccak256(key)
    if value:
        if proof.leaf is not None:
            raise ProofError(f"inclusion claimed for key {key.hex()} but the proof shows a different leaf")
        cur = keccak256(b"\x00", path, keccak256(value))
    elif proof.leaf is not None:
        lp, lv = proof.leaf
        if lp == path:
            raise ProofError("exclusion claimed but the proof leaf is the key's own leaf")
        if _common_prefix(lp, path) < proof.depth:
            raise ProofError("proof leaf does not share the proof's depth of path bits with the key")
        cur = keccak256(b"\x00", lp, lv)
    else:
        cur = EMPTY_ROOT
    nxt = len(proof.siblings)
    for level in range(proof.depth - 1, -1, -1):
        sib = EMPTY_ROOT
        if proof.bitmap[level >> 3] & (0x80 >> (level & 7)):
            nxt -= 1
            sib = proof.siblings[nxt]
        cur = keccak256(b"\x01", cur, sib) if _bit(path, level) == 0 else keccak256(b"\x01", sib, cur)
    if cur != bytes(root):
        kind = "inclusion" if value else "exclusion"
        raise ProofError(f"{kind} proof for key {key.hex()} computes root {cur.hex()}, want {bytes(root).hex()}")


@dataclass(frozen=True)
class AccountState:
    """An account as committed in the state: ``[balance, nonce, code_hash|null]``."""

    balance: int
    nonce: int
    code_hash: Optional[Hash]


def verify_account(root: bytes, addr: bytes, resp: Mapping[str, Any]) -> AccountState:
    """Verify a ``/v1/proofs`` (or ``/v1/accounts/{a}/proof``) answer for
    ``addr`` against a trusted ``root`` and return the proven account (zero
    when the proof shows absence)."""
    key = account_key(addr)
    if from_hex(resp["key"]) != key:
        raise ProofError(f"proof is for key {resp['key']}, not 0x{key.hex()}")
    value = None if resp.get("value") is None else from_hex(resp["value"])
    verify_proof(root, key, value, Proof.from_json(resp["proof"]))
    if value is None:
        return AccountState(0, 0, None)
    try:
        v = cbor.decode(value)
        bal, nonce, ch = v
        if not isinstance(bal, int) or bal < 0 or not isinstance(nonce, int):
            raise ValueError("bad balance or nonce")
        return AccountState(bal, nonce, None if ch is None else Hash(ch))
    except (ValueError, TypeError) as e:
        raise ProofError(f"account value does not decode: {e}") from None
