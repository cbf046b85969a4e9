"""Keccak-256 as Ethereum and Cowboy use it (the original Keccak padding 0x01,
not the FIPS-202 SHA3 padding 0x06: ``hashlib.sha3_256`` gives different
digests). A straightforward keccak-f[1600] over 25 64-bit lanes; tested
against go-ethereum's ``crypto.Keccak256`` vectors."""

from __future__ import annotations

from typing import List

__all__ = ["keccak256"]

_RC = [
    0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
    0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
    0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
    0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
    0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
]
# Rotation offsets r[x + 5y] and the pi permutation as a source index per target.
_ROT = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14]
_M = (1 << 64) - 1
_PI = [(x + 5 * y, y + 5 * ((2 * x + 3 * y) % 5), _ROT[x + 5 * y]) for x in range(5) for y in range(5)]
_RATE = 136  # bytes, for a 256-bit output


def _f1600(a: List[int]) -> None:
    m = _M
    for rc in _RC:
        # theta
        c = [a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] for x in range(5)]
        d = [c[(x - 1) % 5] ^ (((c[(x + 1) % 5] << 1) | (c[(x + 1) % 5] >> 63)) & m) for x in range(5)]
        for i in range(25):
            a[i] ^= d[i % 5]
        # rho and pi: B[y, 2x+3y] = rot(A[x, y], r[x, y])
        b = [0] * 25
        for i, j, r in _PI:
            v = a[i]
            b[j] = ((v << r) | (v >> (64 - r))) & m if r else v
        # chi
        for y in range(0, 25, 5):
            b0, b1, b2, b3, b4 = b[y], b[y + 1], b[y + 2], b[y + 3], b[y + 4]
            a[y] = b0 ^ (~b1 & b2)
            a[y + 1] = b1 ^ (~b2 & b3)
            a[y + 2] = b2 ^ (~b3 & b4)
            a[y + 3] = b3 ^ (~b4 & b0)
            a[y + 4] = b4 ^ (~b0 & b1)
        # iota
        a[0] ^= rc


def keccak256(*parts: bytes) -> bytes:
    """Keccak-256 of the concatenation of ``parts`` (32 bytes)."""
    data = b"".join(bytes(p) for p in parts)
    padded = bytearray(data)
    padded.append(0x01)
    padded.extend(b"\x00" * ((-len(padded)) % _RATE))
    padded[-1] |= 0x80
    a = [0] * 25
    for off in range(0, len(padded), _RATE):
        block = padded[off : off + _RATE]
        for i in range(_RATE // 8):
            a[i] ^= int.from_bytes(block[8 * i : 8 * i + 8], "little")
        _f1600(a)
    return b"".join(a[i].to_bytes(8, "little") for i in range(4))
