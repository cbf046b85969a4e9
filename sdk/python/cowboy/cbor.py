"""Canonical CBOR (RFC 8949 §4.2.1 core deterministic encoding), as chain/codec.

The encoder writes exactly what Go's fxamacker/cbor produces with
``CoreDetEncOptions`` and ``BigIntConvertShortest``: minimal-length heads,
map keys sorted bytewise by their encoding, definite lengths only, floats in
the shortest of half/single/double precision that keeps the value, and
integers outside the 64-bit range as bignum tags 2/3 with minimal bytes.

The decoder accepts one well-formed item with no trailing bytes and then
re-encodes it: input that is not the canonical encoding of what it decodes to
is refused (:class:`NonCanonicalError`), exactly as the node refuses it.

Python values map as: ``int`` ↔ major types 0/1 (or tags 2/3), ``bytes`` ↔
byte string, ``str`` ↔ text string, ``list``/``tuple`` → array (decoded as
``list``), ``dict`` ↔ map, ``bool``, ``None`` ↔ null, ``float`` ↔ float.
"""

from __future__ import annotations

import math
import struct
from typing import Any, Dict, List, Tuple

__all__ = ["encode", "decode", "Tag", "CBORError", "NonCanonicalError", "MAX_DEPTH"]

#: Nesting limit of the node's decoder (chain/codec MaxNestedLevels).
MAX_DEPTH = 32
_MAX_ITEMS = 1 << 20


class CBORError(ValueError):
    """Input is not well-formed CBOR, or a value cannot be encoded."""


class NonCanonicalError(CBORError):
    """Input decodes but is not the canonical encoding of its value."""


class Tag:
    """A tagged item other than the bignum tags 2 and 3."""

    __slots__ = ("tag", "value")

    def __init__(self, tag: int, value: Any) -> None:
        self.tag = tag
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tag) and (self.tag, self.value) == (other.tag, other.value)

    def __repr__(self) -> str:
        return f"Tag({self.tag}, {self.value!r})"


def _head(major: int, n: int) -> bytes:
    if n < 24:
        return bytes([major << 5 | n])
    if n < 1 << 8:
        return bytes([major << 5 | 24, n])
    if n < 1 << 16:
        return bytes([major << 5 | 25]) + n.to_bytes(2, "big")
    if n < 1 << 32:
        return bytes([major << 5 | 26]) + n.to_bytes(4, "big")
    return bytes([major << 5 | 27]) + n.to_bytes(8, "big")


def _float(f: float) -> bytes:
    if math.isnan(f) or math.isinf(f):
        raise CBORError("NaN and infinities are not allowed (the node refuses them)")
    # Shortest of half, single and double precision that round-trips.
    try:
        h = struct.pack(">e", f)
        if struct.unpack(">e", h)[0] == f:
            return b"\xf9" + h
    except OverflowError:
        pass
    try:
        s = struct.pack(">f", f)
        if struct.unpack(">f", s)[0] == f:
            return b"\xfa" + s
    except OverflowError:
        pass
    return b"\xfb" + struct.pack(">d", f)


def _enc(v: Any, out: bytearray, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise CBORError(f"nesting deeper than {MAX_DEPTH}")
    if v is None:
        out += b"\xf6"
    elif v is True:
        out += b"\xf5"
    elif v is False:
        out += b"\xf4"
    elif isinstance(v, int):
        if 0 <= v < 1 << 64:
            out += _head(0, v)
        elif -(1 << 64) <= v < 0:
            out += _head(1, -1 - v)
        else:
            tag, mag = (2, v) if v > 0 else (3, -1 - v)
            b = mag.to_bytes((mag.bit_length() + 7) // 8, "big")
            out += _head(6, tag) + _head(2, len(b)) + b
    elif isinstance(v, (bytes, bytearray, memoryview)):
        raw = bytes(v)
        out += _head(2, len(raw)) + raw
    elif isinstance(v, str):
        b = v.encode("utf-8")
        out += _head(3, len(b)) + b
    elif isinstance(v, float):
        out += _float(v)
    elif isinstance(v, (list, tuple)):
        out += _head(4, len(v))
        for e in v:
            _enc(e, out, depth + 1)
    elif isinstance(v, dict):
        items: List[Tuple[bytes, bytes]] = []
        for k, e in v.items():
            kb, eb = bytearray(), bytearray()
            _enc(k, kb, depth + 1)
            _enc(e, eb, depth + 1)
            items.append((bytes(kb), bytes(eb)))
        items.sort(key=lambda kv: kv[0])
        for i in range(1, len(items)):
            if items[i][0] == items[i - 1][0]:
                raise CBORError("duplicate map key")
        out += _head(5, len(items))
        for key_enc, val_enc in items:
            out += key_enc + val_enc
    elif isinstance(v, Tag):
        out += _head(6, v.tag)
        _enc(v.value, out, depth + 1)
    elif hasattr(v, "__cbor__"):
        _enc(v.__cbor__(), out, depth)
    else:
        raise CBORError(f"cannot encode {type(v).__name__}")


def encode(v: Any) -> bytes:
    """Return the canonical CBOR encoding of ``v``."""
    out = bytearray()
    _enc(v, out, 0)
    return bytes(out)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.b = data
        self.i = 0

    def take(self, n: int) -> bytes:
        if n > len(self.b) - self.i:
            raise CBORError("unexpected end of data")
        s = self.b[self.i : self.i + n]
        self.i += n
        return s

    def arg(self, info: int) -> int:
        if info < 24:
            return info
        if info == 24:
            return self.take(1)[0]
        if info == 25:
            return int.from_bytes(self.take(2), "big")
        if info == 26:
            return int.from_bytes(self.take(4), "big")
        if info == 27:
            return int.from_bytes(self.take(8), "big")
        if info == 31:
            raise CBORError("indefinite-length items are not allowed")
        raise CBORError(f"reserved additional information {info}")

    def item(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise CBORError(f"nesting deeper than {MAX_DEPTH}")
        ib = self.take(1)[0]
        major, info = ib >> 5, ib & 31
        if major == 7:
            if info == 20:
                return False
            if info == 21:
                return True
            if info == 22:
                return None
            if info == 25:
                f = struct.unpack(">e", self.take(2))[0]
            elif info == 26:
                f = struct.unpack(">f", self.take(4))[0]
            elif info == 27:
                f = struct.unpack(">d", self.take(8))[0]
            else:
                raise CBORError(f"unsupported simple value {info}")
            if math.isnan(f) or math.isinf(f):
                raise CBORError("NaN and infinities are not allowed")
            return f
        n = self.arg(info)
        if major == 0:
            return n
        if major == 1:
            return -1 - n
        if major == 2:
            return self.take(n)
        if major == 3:
            try:
                return self.take(n).decode("utf-8")
            except UnicodeDecodeError as e:
                raise CBORError(f"invalid UTF-8 in text string: {e}") from None
        if major == 4:
            if n > _MAX_ITEMS:
                raise CBORError("array too long")
            return [self.item(depth + 1) for _ in range(n)]
        if major == 5:
            if n > _MAX_ITEMS:
                raise CBORError("map too long")
            m: Dict[Any, Any] = {}
            for _ in range(n):
                k = self.item(depth + 1)
                if isinstance(k, (list, dict)):
                    raise CBORError("map keys must be scalars")
                if k in m:
                    raise CBORError("duplicate map key")
                m[k] = self.item(depth + 1)
            return m
        # major 6: tags
        v = self.item(depth + 1)
        if n in (2, 3):
            if not isinstance(v, bytes):
                raise CBORError("bignum tag on a non-byte-string")
            mag = int.from_bytes(v, "big")
            return mag if n == 2 else -1 - mag
        return Tag(n, v)


def decode(data: bytes, *, canonical: bool = True) -> Any:
    """Decode exactly one CBOR item from ``data``.

    With ``canonical`` (the default) the input must be the canonical
    encoding of the decoded value, as the node requires.
    """
    data = bytes(data)
    r = _Reader(data)
    v = r.item(0)
    if r.i != len(data):
        raise CBORError(f"{len(data) - r.i} trailing bytes")
    if canonical and encode(v) != data:
        raise NonCanonicalError("non-canonical CBOR encoding")
    return v
