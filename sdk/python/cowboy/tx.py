"""Transactions: spec 002 §2.5 canonical CBOR, signing and recovery
(chain/types/tx.go, byte for byte).

A transaction is the 13-element array ``[chain_id, nonce, to, value,
cycles_limit, cells_limit, max_fee_per_cycle, max_fee_per_cell,
tip_per_cycle, tip_per_cell, access_list, payload, signature]``; its hash is
keccak256 of the whole encoding and the signing hash keccak256 of the
encoding with ``signature = null``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, List, Optional, Tuple

try:
    from typing import Protocol
except ImportError:  # pragma: no cover - Python < 3.8
    Protocol = object  # type: ignore

from . import cbor, secp256k1
from .keccak import keccak256
from .types import Address, Hash

__all__ = ["Transaction", "Signature", "AccessTuple", "MalformedTxError", "MAX_TX_SIZE"]

#: max_tx_size (spec 002 §12.1): 128 KiB of canonical CBOR.
MAX_TX_SIZE = 128 * 1024
_U64 = 1 << 64


class MalformedTxError(ValueError):
    """Bytes or fields that do not make a valid transaction."""


@dataclass(frozen=True)
class Signature:
    """A recoverable secp256k1 signature ``[y_parity, r, s]``."""

    y_parity: int
    r: bytes
    s: bytes

    def __cbor__(self) -> List[Any]:
        return [self.y_parity, bytes(self.r), bytes(self.s)]


@dataclass(frozen=True)
class AccessTuple:
    """An address and the storage keys a transaction touches. ``storage_keys``
    None encodes as CBOR null, an empty list as an empty array (as Go's nil
    and empty slices)."""

    address: Address
    storage_keys: Optional[Tuple[bytes, ...]] = None

    def __cbor__(self) -> List[Any]:
        keys = None if self.storage_keys is None else [bytes(k) for k in self.storage_keys]
        return [bytes(self.address), keys]


class PrivateKeyLike(Protocol):
    """Anything that signs a 32-byte hash as ``(y_parity, r, s)`` (cowboy.keys.PrivateKey)."""

    def sign_hash(self, h: bytes) -> Tuple[int, bytes, bytes]: ...


def _u64(name: str, v: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < _U64:
        raise MalformedTxError(f"{name} must be an unsigned 64-bit integer, got {v!r}")
    return v


@dataclass(frozen=True)
class Transaction:
    """An immutable transaction. Build one, then :meth:`sign` it."""

    chain_id: int
    nonce: int
    to: Optional[Address]
    value: int = 0
    cycles_limit: int = 0
    cells_limit: int = 0
    max_fee_per_cycle: int = 0
    max_fee_per_cell: int = 0
    tip_per_cycle: int = 0
    tip_per_cell: int = 0
    access_list: Optional[Tuple[AccessTuple, ...]] = None
    payload: bytes = b""
    signature: Optional[Signature] = None
    _encoded: bytes = field(default=b"", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for n in ("chain_id", "nonce", "cycles_limit", "cells_limit", "max_fee_per_cycle",
                  "max_fee_per_cell", "tip_per_cycle", "tip_per_cell"):
            _u64(n, getattr(self, n))
        if not isinstance(self.value, int) or self.value < 0:
            raise MalformedTxError(f"value must be a non-negative integer, got {self.value!r}")
        if self.to is not None:
            object.__setattr__(self, "to", Address(self.to))
        if self.access_list is not None:
            # Plain (address, keys) pairs are accepted too.
            pairs: Any = self.access_list
            object.__setattr__(self, "access_list", tuple(
                t if isinstance(t, AccessTuple) else AccessTuple(Address(t[0]), None if t[1] is None else tuple(bytes(k) for k in t[1]))
                for t in pairs))
        object.__setattr__(self, "payload", bytes(self.payload))
        s = self.signature
        if s is not None:
            if s.y_parity not in (0, 1) or len(s.r) != 32 or len(s.s) != 32:
                raise MalformedTxError("signature must be [y_parity 0|1, r 32 bytes, s 32 bytes]")
        object.__setattr__(self, "_encoded", cbor.encode(self._fields(self.signature)))

    def _fields(self, sig: Optional[Signature]) -> List[Any]:
        al = None if self.access_list is None else [t.__cbor__() for t in self.access_list]
        return [
            self.chain_id, self.nonce, None if self.to is None else bytes(self.to), self.value,
            self.cycles_limit, self.cells_limit, self.max_fee_per_cycle, self.max_fee_per_cell,
            self.tip_per_cycle, self.tip_per_cell, al, self.payload,
            None if sig is None else sig.__cbor__(),
        ]

    def encode(self) -> bytes:
        """The canonical CBOR encoding (what ``POST /v1/txs`` takes)."""
        return self._encoded

    @property
    def size(self) -> int:
        return len(self._encoded)

    @property
    def hash(self) -> Hash:
        """keccak256 of the full encoding, signature included."""
        return Hash(keccak256(self._encoded))

    @property
    def signing_hash(self) -> Hash:
        """keccak256(CBOR(tx with signature = null)) (spec 002 §2.5)."""
        return Hash(keccak256(cbor.encode(self._fields(None))))

    def sign(self, key: "PrivateKeyLike") -> "Transaction":
        """A signed copy (deterministic RFC 6979 signature, low S)."""
        v, r, s = key.sign_hash(self.signing_hash)
        return replace(self, signature=Signature(v, r, s))

    @property
    def sender(self) -> Address:
        """The recovered signer (raises MalformedTxError if unsigned or invalid)."""
        if self.signature is None:
            raise MalformedTxError("transaction is not signed")
        s = self.signature
        try:
            pub = secp256k1.recover(self.signing_hash, s.y_parity, s.r, s.s)
        except secp256k1.SignatureError as e:
            raise MalformedTxError(f"bad signature: {e}") from None
        return Address(secp256k1.public_to_address(pub))

    @classmethod
    def decode(cls, data: bytes) -> "Transaction":
        """Decode canonical bytes with the node's checks (types.DecodeTx)."""
        if len(data) > MAX_TX_SIZE:
            raise MalformedTxError(f"transaction too large: {len(data)} bytes > {MAX_TX_SIZE}")
        try:
            v = cbor.decode(data)
        except cbor.CBORError as e:
            raise MalformedTxError(str(e)) from None
        if not isinstance(v, list) or len(v) != 13:
            raise MalformedTxError("a transaction is a 13-element CBOR array")
        to = v[2]
        if to is not None and (not isinstance(to, bytes) or len(to) != 20):
            raise MalformedTxError("to must be a 20-byte string or null")
        if v[3] is None:
            raise MalformedTxError("value is null")
        if not isinstance(v[3], int) or isinstance(v[3], bool) or v[3] < 0:
            raise MalformedTxError("value must be a non-negative integer")
        if not isinstance(v[11], bytes):
            raise MalformedTxError("payload must be a byte string")
        al = v[10]
        tuples = None
        if al is not None:
            if not isinstance(al, list):
                raise MalformedTxError("access_list must be an array or null")
            tuples = []
            for t in al:
                if not (isinstance(t, list) and len(t) == 2 and isinstance(t[0], bytes) and len(t[0]) == 20
                        and (t[1] is None or (isinstance(t[1], list) and all(isinstance(k, bytes) for k in t[1])))):
                    raise MalformedTxError("access tuple must be [address, [key…] | null]")
                tuples.append(AccessTuple(Address(t[0]), None if t[1] is None else tuple(t[1])))
        sig = None
        if v[12] is not None:
            s = v[12]
            if not (isinstance(s, list) and len(s) == 3 and isinstance(s[0], int) and not isinstance(s[0], bool)
                    and isinstance(s[1], bytes) and isinstance(s[2], bytes)):
                raise MalformedTxError("signature must be [y_parity, r, s]")
            if not 0 <= s[0] < 256 or s[0] > 1:
                raise MalformedTxError(f"y_parity {s[0]}")
            sig = Signature(s[0], s[1], s[2])
        for i in (0, 1, 4, 5, 6, 7, 8, 9):
            if not isinstance(v[i], int) or isinstance(v[i], bool):
                raise MalformedTxError(f"field {i} must be an unsigned integer")
        tx = cls(v[0], v[1], None if to is None else Address(to), v[3], v[4], v[5], v[6], v[7], v[8], v[9],
                 None if tuples is None else tuple(tuples), v[11], sig)
        if tx.encode() != bytes(data):
            raise MalformedTxError("non-canonical transaction encoding")
        return tx


