"""Account keys and keystore v3 files, compatible with the Go CLI both ways.

``cowboy keys`` (sdk/keystore) keeps one go-ethereum keystore v3 file per key
under ``<home>/keys/<name>.json`` (scrypt + AES-128-CTR, MAC =
keccak256(derived[16:32] ‖ ciphertext)). :class:`KeyStore` reads and writes
the same directory with the same rules: a key written here is unlocked by
``cowboy --home H …`` and a key made by ``cowboy keys new`` is unlocked here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import uuid
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Union

from . import secp256k1
from .aes import aes128_ctr
from .keccak import keccak256
from .types import Address, from_hex

__all__ = [
    "PrivateKey", "KeyStore", "KeyEntry", "encrypt_key", "decrypt_key",
    "KeystoreError", "BadPasswordError", "KeyExistsError", "KeyNotFoundError", "BadKeyNameError",
    "STANDARD_SCRYPT", "LIGHT_SCRYPT",
]

#: go-ethereum's StandardScryptN/P and LightScryptN/P (sdk/keystore Standard, Light).
STANDARD_SCRYPT = (1 << 18, 1)
LIGHT_SCRYPT = (1 << 12, 6)
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class KeystoreError(Exception):
    """A keystore file is unreadable or malformed."""


class BadPasswordError(KeystoreError):
    """The password does not open the key (the MAC does not match)."""


class KeyExistsError(KeystoreError):
    """A key with this name already exists."""


class KeyNotFoundError(KeystoreError):
    """No key with this name."""


class BadKeyNameError(KeystoreError):
    """Key names are 1-64 characters of letters, digits, '-', '_' and '.'."""


class PrivateKey:
    """A secp256k1 account key."""

    __slots__ = ("_d", "_pub")

    def __init__(self, secret: Union[bytes, str]) -> None:
        b = from_hex(secret.strip()) if isinstance(secret, str) else bytes(secret)
        secp256k1._scalar(b)  # validates length and range
        self._d = b
        self._pub = secp256k1.private_to_public(b)

    @classmethod
    def generate(cls) -> "PrivateKey":
        return cls(secp256k1.generate_private_key())

    @property
    def secret(self) -> bytes:
        """The 32 private key bytes (handle with care)."""
        return self._d

    def hex(self) -> str:
        """The private key as bare hex, as ``cowboy keys export`` prints it."""
        return self._d.hex()

    @property
    def public_key(self) -> bytes:
        """The 65-byte uncompressed public key."""
        return self._pub

    @property
    def compressed_public_key(self) -> bytes:
        return secp256k1.compress(self._pub)

    @property
    def address(self) -> Address:
        return Address(secp256k1.public_to_address(self._pub))

    def sign_hash(self, h: bytes) -> "tuple[int, bytes, bytes]":
        """Sign a 32-byte hash: ``(y_parity, r, s)``, deterministic and low-S."""
        return secp256k1.sign(h, self._d)

    def __repr__(self) -> str:
        return f"PrivateKey(address={self.address})"


def encrypt_key(key: PrivateKey, password: str, *, light: bool = False,
                scrypt_n: Optional[int] = None, scrypt_p: Optional[int] = None) -> Dict[str, Any]:
    """A keystore v3 document for ``key`` (go-ethereum's EncryptKey)."""
    n, p = LIGHT_SCRYPT if light else STANDARD_SCRYPT
    n, p = scrypt_n or n, scrypt_p or p
    salt = secrets.token_bytes(32)
    iv = secrets.token_bytes(16)
    dk = _scrypt(password.encode(), salt, n, 8, p, 32)
    ct = aes128_ctr(dk[:16], iv, key.secret)
    mac = keccak256(dk[16:32], ct)
    return {
        "address": key.address.hex(),
        "crypto": {
            "cipher": "aes-128-ctr",
            "ciphertext": ct.hex(),
            "cipherparams": {"iv": iv.hex()},
            "kdf": "scrypt",
            "kdfparams": {"dklen": 32, "n": n, "p": p, "r": 8, "salt": salt.hex()},
            "mac": mac.hex(),
        },
        "id": str(uuid.uuid4()),
        "version": 3,
    }


def _scrypt(pw: bytes, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
    if n < 2 or n & (n - 1):
        raise KeystoreError(f"scrypt n={n} is not a power of two")
    maxmem = 128 * r * (n + p + 2) + (1 << 20)
    return hashlib.scrypt(pw, salt=salt, n=n, r=r, p=p, dklen=dklen, maxmem=maxmem)


def decrypt_key(doc: Union[Dict[str, Any], str, bytes], password: str) -> PrivateKey:
    """Open a keystore v3 document (scrypt or pbkdf2, aes-128-ctr)."""
    try:
        d = json.loads(doc) if isinstance(doc, (str, bytes)) else doc
        if d.get("version") != 3:
            raise KeystoreError(f"keystore version {d.get('version')!r}, want 3")
        c = d.get("crypto") or d.get("Crypto")
        if c["cipher"] != "aes-128-ctr":
            raise KeystoreError(f"cipher {c['cipher']!r} not supported")
        kp = c["kdfparams"]
        salt = bytes.fromhex(kp["salt"])
        dklen = int(kp["dklen"])
        if dklen < 32:
            raise KeystoreError(f"dklen {dklen} < 32")
        if c["kdf"] == "scrypt":
            dk = _scrypt(password.encode(), salt, int(kp["n"]), int(kp["r"]), int(kp["p"]), dklen)
        elif c["kdf"] == "pbkdf2":
            if kp.get("prf") != "hmac-sha256":
                raise KeystoreError(f"pbkdf2 prf {kp.get('prf')!r} not supported")
            dk = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, int(kp["c"]), dklen)
        else:
            raise KeystoreError(f"kdf {c['kdf']!r} not supported")
        ct = bytes.fromhex(c["ciphertext"])
        mac = bytes.fromhex(c["mac"])
        iv = bytes.fromhex(c["cipherparams"]["iv"])
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, KeystoreError):
            raise
        raise KeystoreError(f"malformed keystore file: {e}") from None
    if not hmac.compare_digest(keccak256(dk[16:32], ct), mac):
        raise BadPasswordError("could not decrypt key with given password")
    key = PrivateKey(aes128_ctr(dk[:16], iv, ct))
    if "address" in d and d["address"] and Address(d["address"]) != key.address:
        raise KeystoreError(f"keystore address {d['address']} does not match its key {key.address}")
    return key


@dataclass(frozen=True)
class KeyEntry:
    """A stored key: its name, address and file."""

    name: str
    address: Address
    path: str


class KeyStore:
    """The directory of named keys the Go CLI uses (``<home>/keys``)."""

    def __init__(self, directory: str) -> None:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        self.dir = directory

    @classmethod
    def for_home(cls, home: Optional[str] = None) -> "KeyStore":
        """The keystore under a CLI ``--home`` (default ``~/.cowboy``)."""
        return cls(os.path.join(home or os.path.expanduser("~/.cowboy"), "keys"))

    def _path(self, name: str) -> str:
        return os.path.join(self.dir, name + ".json")

    @staticmethod
    def _check(name: str) -> None:
        if not _NAME_RE.match(name) or name.startswith("."):
            raise BadKeyNameError(f"key names are 1-64 characters of letters, digits, '-', '_' and '.': {name!r}")

    def new(self, name: str, password: str, *, light: bool = False) -> KeyEntry:
        """Generate a key and store it under ``name``."""
        return self.import_key(name, PrivateKey.generate(), password, light=light)

    def import_key(self, name: str, key: Union[PrivateKey, bytes, str], password: str, *, light: bool = False) -> KeyEntry:
        """Store an existing key under ``name``; never replaces an existing key."""
        self._check(name)
        k = key if isinstance(key, PrivateKey) else PrivateKey(key)
        path = self._path(name)
        if os.path.exists(path):
            raise KeyExistsError(f"a key with this name already exists: {name}")
        blob = json.dumps(encrypt_key(k, password, light=light)).encode()
        tmp = f"{path}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
                f.flush()
                os.fsync(f.fileno())
            # Link, not rename: never replace a key that appeared meanwhile.
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise KeyExistsError(f"a key with this name already exists: {name}") from None
        finally:
            os.unlink(tmp)
        return KeyEntry(name, k.address, path)

    def get(self, name: str) -> KeyEntry:
        """The entry of ``name`` without decrypting it."""
        self._check(name)
        path = self._path(name)
        try:
            with open(path, "rb") as f:
                hdr = json.load(f)
        except FileNotFoundError:
            raise KeyNotFoundError(f"no such key: {name} (in {self.dir})") from None
        except ValueError as e:
            raise KeystoreError(f"{path} is not a keystore file: {e}") from None
        try:
            return KeyEntry(name, Address(hdr["address"]), path)
        except (KeyError, ValueError) as e:
            raise KeystoreError(f"{path}: {e}") from None

    def list(self) -> List[KeyEntry]:
        """All keys, sorted by name."""
        out = []
        for fn in sorted(os.listdir(self.dir)):
            if not fn.endswith(".json"):
                continue
            name = fn[:-5]
            if not _NAME_RE.match(name) or name.startswith(".") or os.path.isdir(os.path.join(self.dir, fn)):
                continue
            out.append(self.get(name))
        return out

    def unlock(self, name: str, password: str) -> PrivateKey:
        """Decrypt the key stored under ``name``."""
        e = self.get(name)
        with open(e.path, "rb") as f:
            doc = f.read()
        try:
            return decrypt_key(doc, password)
        except BadPasswordError:
            raise BadPasswordError(f"wrong password for key {name}") from None
