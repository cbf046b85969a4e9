"""AES-128 in CTR mode, the cipher of keystore v3 files.

The standard library has no AES. Keystore files hold one 32-byte private
key, so a small table-driven implementation of the forward cipher (all CTR
needs) is fast enough; it is checked against FIPS-197 Appendix C.1 and
NIST SP 800-38A F.5.1/F.5.2 vectors, and against go-ethereum-written
keystores. It is not constant-time (see docs/PYTHON.md).
"""

from __future__ import annotations

from typing import List

__all__ = ["aes128_ctr"]


def _sbox() -> List[int]:
    # Derive the S-box from the multiplicative inverse in GF(2^8) and the
    # affine map, rather than pasting 256 magic numbers.
    sbox = [0] * 256
    p = q = 1
    while True:
        p = p ^ ((p << 1) & 0xFF) ^ (0x1B if p & 0x80 else 0)  # p *= 3
        q ^= q << 1  # q /= 3
        q ^= q << 2
        q ^= q << 4
        q &= 0xFF
        if q & 0x80:
            q ^= 0x09
        x = q ^ _rotl8(q, 1) ^ _rotl8(q, 2) ^ _rotl8(q, 3) ^ _rotl8(q, 4)
        sbox[p] = x ^ 0x63
        if p == 1:
            break
    sbox[0] = 0x63
    return sbox


def _rotl8(x: int, s: int) -> int:
    return ((x << s) | (x >> (8 - s))) & 0xFF


def _xtime(b: int) -> int:
    return ((b << 1) ^ 0x1B) & 0xFF if b & 0x80 else b << 1


_S = _sbox()
# T-table of SubBytes+MixColumns for the first column position; the others
# are byte rotations of it.
_T0 = [(_xtime(s) << 24) | (s << 16) | (s << 8) | (_xtime(s) ^ s) for s in _S]
_T1 = [((t >> 8) | (t << 24)) & 0xFFFFFFFF for t in _T0]
_T2 = [((t >> 16) | (t << 16)) & 0xFFFFFFFF for t in _T0]
_T3 = [((t >> 24) | (t << 8)) & 0xFFFFFFFF for t in _T0]


def _expand(key: bytes) -> List[int]:
    w = [int.from_bytes(key[4 * i : 4 * i + 4], "big") for i in range(4)]
    rcon = 1
    for i in range(4, 44):
        t = w[i - 1]
        if i % 4 == 0:
            t = ((t << 8) | (t >> 24)) & 0xFFFFFFFF
            t = (_S[t >> 24] << 24) | (_S[(t >> 16) & 0xFF] << 16) | (_S[(t >> 8) & 0xFF] << 8) | _S[t & 0xFF]
            t ^= rcon << 24
            rcon = _xtime(rcon)
        w.append(w[i - 4] ^ t)
    return w


def _encrypt_block(w: List[int], block: bytes) -> bytes:
    s0, s1, s2, s3 = (int.from_bytes(block[4 * i : 4 * i + 4], "big") ^ w[i] for i in range(4))
    T0, T1, T2, T3 = _T0, _T1, _T2, _T3
    for rnd in range(1, 10):
        k = 4 * rnd
        t0 = T0[s0 >> 24] ^ T1[(s1 >> 16) & 0xFF] ^ T2[(s2 >> 8) & 0xFF] ^ T3[s3 & 0xFF] ^ w[k]
        t1 = T0[s1 >> 24] ^ T1[(s2 >> 16) & 0xFF] ^ T2[(s3 >> 8) & 0xFF] ^ T3[s0 & 0xFF] ^ w[k + 1]
        t2 = T0[s2 >> 24] ^ T1[(s3 >> 16) & 0xFF] ^ T2[(s0 >> 8) & 0xFF] ^ T3[s1 & 0xFF] ^ w[k + 2]
        t3 = T0[s3 >> 24] ^ T1[(s0 >> 16) & 0xFF] ^ T2[(s1 >> 8) & 0xFF] ^ T3[s2 & 0xFF] ^ w[k + 3]
        s0, s1, s2, s3 = t0, t1, t2, t3
    S = _S
    out = bytearray()
    for i, (a, b, c, d) in enumerate(((s0, s1, s2, s3), (s1, s2, s3, s0), (s2, s3, s0, s1), (s3, s0, s1, s2))):
        v = (S[a >> 24] << 24) | (S[(b >> 16) & 0xFF] << 16) | (S[(c >> 8) & 0xFF] << 8) | S[d & 0xFF]
        out += (v ^ w[40 + i]).to_bytes(4, "big")
    return bytes(out)


def aes128_encrypt_block(key: bytes, block: bytes) -> bytes:
    """One AES-128 block encryption (for tests against FIPS-197)."""
    if len(key) != 16 or len(block) != 16:
        raise ValueError("AES-128 needs a 16-byte key and a 16-byte block")
    return _encrypt_block(_expand(key), block)


def aes128_ctr(key: bytes, iv: bytes, data: bytes) -> bytes:
    """Encrypt or decrypt ``data`` with AES-128-CTR (big-endian 128-bit counter)."""
    if len(key) != 16:
        raise ValueError(f"AES-128 key must be 16 bytes, got {len(key)}")
    if len(iv) != 16:
        raise ValueError(f"CTR IV must be 16 bytes, got {len(iv)}")
    w = _expand(key)
    ctr = int.from_bytes(iv, "big")
    out = bytearray()
    for off in range(0, len(data), 16):
        ks = _encrypt_block(w, ctr.to_bytes(16, "big"))
        chunk = data[off : off + 16]
        out += bytes(a ^ b for a, b in zip(chunk, ks))
        ctr = (ctr + 1) & ((1 << 128) - 1)
    return bytes(out)
