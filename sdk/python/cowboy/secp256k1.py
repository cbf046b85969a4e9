"""secp256k1 ECDSA as go-ethereum's ``crypto.Sign`` / ``crypto.SigToPub``.

Signatures are deterministic (RFC 6979 nonces with HMAC-SHA256, no extra
data — what libsecp256k1 and decred's secp256k1 use), normalised to low S,
and carry the recovery id, so a Python signature of a given hash with a given
key is byte-identical to the Go one. Pure Python with Jacobian coordinates:
a signature or a recovery takes a few milliseconds. It is not constant-time;
see docs/PYTHON.md for what that means for a client SDK.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Optional, Tuple

from .keccak import keccak256

__all__ = [
    "N", "P", "G", "SignatureError", "generate_private_key", "private_to_public",
    "public_to_address", "sign", "recover", "verify", "compress",
]

P = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (
    0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
    0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8,
)
HALF_N = N >> 1

_Jac = Tuple[int, int, int]
_INF: _Jac = (0, 1, 0)


class SignatureError(ValueError):
    """A key, signature or recovery is invalid."""


def _to_jac(p: Tuple[int, int]) -> _Jac:
    return (p[0], p[1], 1)


def _from_jac(p: _Jac) -> Optional[Tuple[int, int]]:
    x, y, z = p
    if z == 0:
        return None
    zi = pow(z, -1, P)
    zi2 = zi * zi % P
    return (x * zi2 % P, y * zi2 * zi % P)


def _dbl(p: _Jac) -> _Jac:
    x, y, z = p
    if z == 0 or y == 0:
        return _INF
    ysq = y * y % P
    s = 4 * x * ysq % P
    m = 3 * x * x % P  # a = 0
    nx = (m * m - 2 * s) % P
    ny = (m * (s - nx) - 8 * ysq * ysq) % P
    nz = 2 * y * z % P
    return (nx, ny, nz)


def _add(p: _Jac, q: _Jac) -> _Jac:
    if p[2] == 0:
        return q
    if q[2] == 0:
        return p
    x1, y1, z1 = p
    x2, y2, z2 = q
    z1s, z2s = z1 * z1 % P, z2 * z2 % P
    u1, u2 = x1 * z2s % P, x2 * z1s % P
    s1, s2 = y1 * z2s * z2 % P, y2 * z1s * z1 % P
    if u1 == u2:
        return _dbl(p) if s1 == s2 else _INF
    h = (u2 - u1) % P
    r = (s2 - s1) % P
    h2 = h * h % P
    h3 = h * h2 % P
    u1h2 = u1 * h2 % P
    nx = (r * r - h3 - 2 * u1h2) % P
    ny = (r * (u1h2 - nx) - s1 * h3) % P
    nz = h * z1 * z2 % P
    return (nx, ny, nz)


def _mul(p: _Jac, k: int) -> _Jac:
    r = _INF
    for bit in bin(k)[2:]:
        r = _dbl(r)
        if bit == "1":
            r = _add(r, p)
    return r


def _on_curve(p: Tuple[int, int]) -> bool:
    x, y = p
    return 0 <= x < P and 0 <= y < P and (y * y - x * x * x - 7) % P == 0


def generate_private_key() -> bytes:
    """A fresh 32-byte private key from the OS's CSPRNG."""
    while True:
        d = int.from_bytes(secrets.token_bytes(32), "big")
        if 0 < d < N:
            return d.to_bytes(32, "big")


def _scalar(priv: bytes) -> int:
    if len(priv) != 32:
        raise SignatureError(f"private key must be 32 bytes, got {len(priv)}")
    d = int.from_bytes(priv, "big")
    if not 0 < d < N:
        raise SignatureError("private key out of range")
    return d


def private_to_public(priv: bytes) -> bytes:
    """The 65-byte uncompressed public key (0x04 ‖ X ‖ Y)."""
    pt = _from_jac(_mul(_to_jac(G), _scalar(priv)))
    assert pt is not None
    return b"\x04" + pt[0].to_bytes(32, "big") + pt[1].to_bytes(32, "big")


def compress(pub: bytes) -> bytes:
    """The 33-byte compressed form of a 65-byte public key."""
    if len(pub) != 65 or pub[0] != 4:
        raise SignatureError("want a 65-byte uncompressed public key")
    return bytes([2 + (pub[64] & 1)]) + pub[1:33]


def public_to_address(pub: bytes) -> bytes:
    """Last 20 bytes of keccak256 of the uncompressed point (as Ethereum)."""
    if len(pub) != 65 or pub[0] != 4:
        raise SignatureError("want a 65-byte uncompressed public key")
    return keccak256(pub[1:])[12:]


def _bits2int(b: bytes) -> int:
    return int.from_bytes(b, "big")  # qlen = hlen = 256


def _rfc6979(d: int, h: bytes):  # type: ignore[no-untyped-def]
    """RFC 6979 §3.2 nonce generator for SHA-256 and the secp256k1 order."""
    x = d.to_bytes(32, "big")
    h1 = (_bits2int(h) % N).to_bytes(32, "big")
    v = b"\x01" * 32
    k = b"\x00" * 32
    k = hmac.new(k, v + b"\x00" + x + h1, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    k = hmac.new(k, v + b"\x01" + x + h1, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    while True:
        v = hmac.new(k, v, hashlib.sha256).digest()
        t = _bits2int(v)
        if 0 < t < N:
            yield t
        k = hmac.new(k, v + b"\x00", hashlib.sha256).digest()
        v = hmac.new(k, v, hashlib.sha256).digest()


def sign(msg_hash: bytes, priv: bytes) -> Tuple[int, bytes, bytes]:
    """Sign a 32-byte hash; returns ``(y_parity, r, s)`` with low S.

    Identical to go-ethereum's ``crypto.Sign`` (which returns r ‖ s ‖ v).
    """
    if len(msg_hash) != 32:
        raise SignatureError(f"hash must be 32 bytes, got {len(msg_hash)}")
    d = _scalar(priv)
    z = int.from_bytes(msg_hash, "big")
    for k in _rfc6979(d, msg_hash):
        pt = _from_jac(_mul(_to_jac(G), k))
        assert pt is not None
        r = pt[0] % N
        if r == 0:
            continue
        s = pow(k, -1, N) * (z + r * d) % N
        if s == 0:
            continue
        v = (pt[1] & 1) | (2 if pt[0] >= N else 0)
        if s > HALF_N:
            s = N - s
            v ^= 1
        if v > 1:  # x ≥ N: probability ~2^-128; Ethereum's v has no room for it
            continue
        return v, r.to_bytes(32, "big"), s.to_bytes(32, "big")
    raise AssertionError("unreachable")


def recover(msg_hash: bytes, y_parity: int, r: bytes, s: bytes) -> bytes:
    """Recover the 65-byte public key that signed ``msg_hash``.

    Like the node (``types.Tx.Sender``) it refuses high S and out-of-range
    values, so one transaction has exactly one valid signature.
    """
    if len(msg_hash) != 32 or len(r) != 32 or len(s) != 32:
        raise SignatureError("hash, r and s must be 32 bytes")
    if y_parity not in (0, 1):
        raise SignatureError(f"y_parity {y_parity} not in {{0, 1}}")
    ri, si = int.from_bytes(r, "big"), int.from_bytes(s, "big")
    if not (0 < ri < N and 0 < si <= HALF_N):
        raise SignatureError("signature values out of range (r, or s above n/2)")
    x = ri
    alpha = (x * x * x + 7) % P
    y = pow(alpha, (P + 1) // 4, P)
    if y * y % P != alpha:
        raise SignatureError("r is not the x coordinate of a curve point")
    if y & 1 != y_parity:
        y = P - y
    rp = (x, y)
    z = int.from_bytes(msg_hash, "big")
    rinv = pow(ri, -1, N)
    u1 = (-z * rinv) % N
    u2 = si * rinv % N
    q = _from_jac(_add(_mul(_to_jac(G), u1), _mul(_to_jac(rp), u2)))
    if q is None or not _on_curve(q):
        raise SignatureError("recovered the point at infinity")
    return b"\x04" + q[0].to_bytes(32, "big") + q[1].to_bytes(32, "big")


def verify(msg_hash: bytes, y_parity: int, r: bytes, s: bytes, address: bytes) -> bool:
    """Whether the signature recovers to ``address``."""
    try:
        return public_to_address(recover(msg_hash, y_parity, r, s)) == bytes(address)
    except SignatureError:
        return False
