"""Blobs (spec 002 §7, docs/BLOBS.md): outputs over 64 KiB live off chain,
content-addressed; an actor commits to one by its multihash
(``cowboy_sdk.blobs.commit``), which the receipt announces as a
``BlobCommitted`` event. This module reads those commitments and verifies
content fetched from anywhere (``cowboy blob get``, a mirror) against them.

A multihash is ``varint(code) ‖ varint(len) ‖ digest``; the chain accepts
sha2-256 (0x12) and blake3 (0x1e). The standard library has no BLAKE3, so
verifying a blake3 commitment raises :class:`UnsupportedHashError`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

from . import cbor
from .types import Address, from_hex

__all__ = ["SHA2_256", "BLAKE3", "INLINE_MAX", "BlobRef", "BlobMismatchError", "UnsupportedHashError",
           "multihash", "decode_multihash", "verify", "commits"]

SHA2_256 = 0x12
BLAKE3 = 0x1E
INLINE_MAX = 64 * 1024
TOPIC_BLOB_COMMITTED = "BlobCommitted"


class BlobMismatchError(ValueError):
    """Content does not match its committed multihash or size (code BlobMismatch)."""


class UnsupportedHashError(ValueError):
    """A multihash this SDK cannot compute or the chain does not accept."""


def _uvarint(b: bytes, i: int) -> Tuple[int, int]:
    v = shift = 0
    for n in range(9):
        if i + n >= len(b):
            break
        c = b[i + n]
        v |= (c & 0x7F) << shift
        if c < 0x80:
            if n > 0 and c == 0:
                raise ValueError("multihash: varint not minimally encoded")
            return v, i + n + 1
        shift += 7
    raise ValueError("multihash: bad varint")


def _varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def multihash(data: bytes, code: int = SHA2_256) -> bytes:
    """The multihash of ``data`` (sha2-256 only: the standard library has no BLAKE3)."""
    if code != SHA2_256:
        raise UnsupportedHashError(f"multihash: cannot compute code 0x{code:x} (0x12 sha2-256 only)")
    d = hashlib.sha256(data).digest()
    return _varint(code) + _varint(len(d)) + d


def decode_multihash(m: bytes) -> Tuple[int, bytes]:
    """Split a multihash into (code, digest); the digest length must match."""
    code, i = _uvarint(m, 0)
    n, i = _uvarint(m, i)
    if len(m) - i != n:
        raise ValueError(f"multihash: digest is {len(m) - i} bytes, header says {n}")
    return code, bytes(m[i:])


@dataclass(frozen=True)
class BlobRef:
    """A committed blob: multihash, size, CBFS volume and path, and the actor."""

    multihash: bytes
    size: int
    volume: bytes
    path: str
    actor: Address

    @property
    def hex(self) -> str:
        return self.multihash.hex()


def verify(ref: BlobRef, content: bytes) -> None:
    """Raise :class:`BlobMismatchError` unless ``content`` is the committed blob."""
    if ref.size and len(content) != ref.size:
        raise BlobMismatchError(f"blob {ref.hex}: {len(content)} bytes, the reference says {ref.size}")
    code, _ = decode_multihash(ref.multihash)
    if multihash(content, code) != ref.multihash:
        raise BlobMismatchError(f"blob {ref.hex}: content does not match its multihash")


def commits(result: Dict[str, Any]) -> List[BlobRef]:
    """The blobs a transaction committed to, from ``Client.tx``/``wait``'s result, in receipt order."""
    out: List[BlobRef] = []
    for ev in (result.get("receipt") or {}).get("events") or []:
        if ev.get("topic") != TOPIC_BLOB_COMMITTED:
            continue
        d = cbor.decode(from_hex(ev["data"]))
        if not isinstance(d, dict):
            raise ValueError("BlobCommitted: data is not a map")
        out.append(BlobRef(bytes(d["multihash"]), int(d["size"]), bytes(d["volume"]), str(d["path"]),
                           Address(ev["emitter"])))
    return out
