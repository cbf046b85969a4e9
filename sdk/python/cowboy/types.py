"""Addresses, hashes and hex helpers (chain/types/address.go)."""

from __future__ import annotations

from typing import Union

from .keccak import keccak256

__all__ = [
    "Address", "Hash", "to_hex", "from_hex", "system_address",
    "RUNNER_REGISTRY", "JOB_DISPATCHER", "RESULT_VERIFIER", "SECRETS_MANAGER",
    "TEE_VERIFIER", "DUAL_BASEFEE", "ENTITLEMENT_REGISTRY", "TREASURY", "GOVERNANCE",
    "STORAGE_MANAGER", "RELAY_REGISTRY", "TIMER_ESCROW", "keccak256",
]

BytesLike = Union[bytes, bytearray, memoryview, str]


def from_hex(s: str) -> bytes:
    """Decode 0x-prefixed (or bare) hex."""
    if s[:2] in ("0x", "0X"):
        s = s[2:]
    try:
        return bytes.fromhex(s)
    except ValueError:
        raise ValueError(f"invalid hex {s!r}") from None


def to_hex(b: bytes) -> str:
    """Lower-case 0x-hex, as the node renders bytes."""
    return "0x" + bytes(b).hex()


class _Fixed(bytes):
    SIZE = 0
    KIND = ""

    def __new__(cls, v: BytesLike) -> "_Fixed":
        b = from_hex(v) if isinstance(v, str) else bytes(v)
        if len(b) != cls.SIZE:
            raise ValueError(f"invalid {cls.KIND}: {len(b)} bytes, want {cls.SIZE}")
        return super().__new__(cls, b)

    def __str__(self) -> str:
        return "0x" + self.hex()

    def __repr__(self) -> str:
        return f"{type(self).__name__}('{self}')"

    @property
    def is_zero(self) -> bool:
        return not any(self)


class Address(_Fixed):
    """A 20-byte account, actor or system address; ``str()`` is 0x-hex."""

    SIZE = 20
    KIND = "address"

    @property
    def is_reserved(self) -> bool:
        """In the system range 0x0…0000–0x0…0100 (spec 002 §1.3)."""
        return not any(self[:18]) and int.from_bytes(self[18:], "big") <= 0x100


class Hash(_Fixed):
    """A 32-byte keccak256 digest; ``str()`` is 0x-hex."""

    SIZE = 32
    KIND = "hash"


def system_address(n: int) -> Address:
    """The reserved address whose last two bytes are ``n``."""
    return Address(bytes(18) + n.to_bytes(2, "big"))


RUNNER_REGISTRY = system_address(0x01)
JOB_DISPATCHER = system_address(0x02)
RESULT_VERIFIER = system_address(0x03)
SECRETS_MANAGER = system_address(0x04)
TEE_VERIFIER = system_address(0x05)
DUAL_BASEFEE = system_address(0x06)
ENTITLEMENT_REGISTRY = system_address(0x07)
TREASURY = system_address(0x08)
GOVERNANCE = system_address(0x09)
STORAGE_MANAGER = system_address(0x0A)
RELAY_REGISTRY = system_address(0x0B)
TOKEN_MODULE = system_address(0x0E)
TIMER_ESCROW = system_address(0x10)


def actor_address(deployer: BytesLike, salt: bytes, code: bytes) -> Address:
    """``last20(keccak256(deployer ‖ salt ‖ keccak256(code)))`` (docs/API.md).

    ``code`` must be the canonical source the chain stores; the node's
    receipt ``created`` is authoritative.
    """
    return Address(keccak256(bytes(Address(deployer)), salt, keccak256(code))[12:])
