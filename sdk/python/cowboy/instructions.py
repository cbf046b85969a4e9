"""Transaction payloads (chain/types/instruction.go) and the structures they
carry: job specifications (chain/offchain/job) and deployment manifests
(chain/offchain/entitlement). Every ``encode()`` is byte-identical to the Go
encoder; tests compare them on generated vectors.

A payload is the canonical CBOR array ``[kind, fields…]``; an empty payload
is a plain transfer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import cbor
from .types import Address, Hash

__all__ = [
    "KIND_CALL", "KIND_DEPLOY", "KIND_PUBLISH_LIBRARY", "KIND_REMOVE_LIBRARY", "KIND_VOLUME_FUND",
    "KIND_SUBMIT_JOB", "Instruction", "Call", "Deploy", "PublishLibrary", "RemoveLibrary", "VolumeFund",
    "SubmitJob", "JobSpec", "Check", "encode_args", "encode_manifest", "decode_instruction",
    "JOB_LLM", "JOB_HTTP", "JOB_MCP", "JOB_CUSTOM",
    "KIND_TOKEN_CREATE", "KIND_TOKEN_TRANSFER", "KIND_TOKEN_TRANSFER_FROM", "KIND_TOKEN_APPROVE",
    "KIND_TOKEN_MINT", "KIND_TOKEN_BURN", "TokenCreate", "TokenTransfer", "TokenTransferFrom",
    "TokenApprove", "TokenMint", "TokenBurn",
]

KIND_CALL = 1
KIND_DEPLOY = 2
KIND_PUBLISH_LIBRARY = 3
KIND_REMOVE_LIBRARY = 4
KIND_VOLUME_FUND = 23
KIND_SUBMIT_JOB = 43
# CIP-20 platform tokens (chain/types/instruction_tokens.go), sent to the
# token module (TOKEN_MODULE) without value.
KIND_TOKEN_CREATE = 130
KIND_TOKEN_TRANSFER = 131
KIND_TOKEN_TRANSFER_FROM = 132
KIND_TOKEN_APPROVE = 133
KIND_TOKEN_MINT = 134
KIND_TOKEN_BURN = 135


class Instruction:
    """Base of the payload types; ``encode()`` gives the payload bytes."""

    kind: int = 0

    def fields(self) -> List[Any]:
        raise NotImplementedError

    def encode(self) -> bytes:
        return cbor.encode([self.kind, *self.fields()])


@dataclass(frozen=True)
class Call(Instruction):
    """``[1, handler, args]``: call ``handler`` of the actor in ``to``;
    ``args`` is canonical CBOR (see :func:`encode_args`), empty for none."""

    handler: str
    args: bytes = b""
    kind = KIND_CALL

    def fields(self) -> List[Any]:
        return [self.handler, bytes(self.args)]


@dataclass(frozen=True)
class Deploy(Instruction):
    """``[2, code, salt, init_handler, init_args(, requires)]`` (``to`` null).
    ``requires`` is an encoded manifest (:func:`encode_manifest`); the
    6-element form is used only when it is set, as in Go."""

    code: bytes
    salt: bytes = b""
    init_handler: str = ""
    init_args: bytes = b""
    requires: bytes = b""
    kind = KIND_DEPLOY

    def fields(self) -> List[Any]:
        f: List[Any] = [bytes(self.code), bytes(self.salt), self.init_handler, bytes(self.init_args)]
        if self.requires:
            f.append(bytes(self.requires))
        return f


@dataclass(frozen=True)
class PublishLibrary(Instruction):
    """``[3, name, code]``: publish a library under the sender's account."""

    name: str
    code: bytes
    kind = KIND_PUBLISH_LIBRARY

    def fields(self) -> List[Any]:
        return [self.name, bytes(self.code)]


@dataclass(frozen=True)
class RemoveLibrary(Instruction):
    """``[4, name]``."""

    name: str
    kind = KIND_REMOVE_LIBRARY

    def fields(self) -> List[Any]:
        return [self.name]


@dataclass(frozen=True)
class VolumeFund(Instruction):
    """``[23, volume_id]`` to the Storage Manager; the value funds the escrow."""

    volume: bytes
    kind = KIND_VOLUME_FUND

    def fields(self) -> List[Any]:
        return [bytes(Hash(self.volume))]


@dataclass(frozen=True)
class SubmitJob(Instruction):
    """``[43, spec]`` to the Job Dispatcher; ``spec`` is an encoded :class:`JobSpec`."""

    spec: bytes
    kind = KIND_SUBMIT_JOB

    def fields(self) -> List[Any]:
        return [bytes(self.spec)]


def _amount(v: Optional[int]) -> Optional[int]:
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise ValueError("an amount is a non-negative int")
    return int(v)


@dataclass(frozen=True)
class TokenCreate(Instruction):
    """``[130, name, symbol, decimals, cap, initial]``: create a token; the
    sender is its admin and receives ``initial``. ``cap`` None (or 0) is
    uncapped; None encodes as null, as the Go CLI sends an unset flag."""

    name: str
    symbol: str
    decimals: int = 18
    cap: Optional[int] = None
    initial: Optional[int] = None
    kind = KIND_TOKEN_CREATE

    def fields(self) -> List[Any]:
        if not 0 <= self.decimals <= 255:
            raise ValueError("decimals must be 0..255")
        return [self.name, self.symbol, int(self.decimals), _amount(self.cap), _amount(self.initial)]


@dataclass(frozen=True)
class TokenTransfer(Instruction):
    """``[131, token, to, amount]``: move ``amount`` of the sender's balance."""

    token: bytes
    to: bytes
    amount: int
    kind = KIND_TOKEN_TRANSFER

    def fields(self) -> List[Any]:
        return [bytes(Hash(self.token)), bytes(Address(self.to)), _amount(self.amount)]


@dataclass(frozen=True)
class TokenTransferFrom(Instruction):
    """``[132, token, owner, to, amount]``: against the sender's allowance from ``owner``."""

    token: bytes
    owner: bytes
    to: bytes
    amount: int
    kind = KIND_TOKEN_TRANSFER_FROM

    def fields(self) -> List[Any]:
        return [bytes(Hash(self.token)), bytes(Address(self.owner)), bytes(Address(self.to)), _amount(self.amount)]


@dataclass(frozen=True)
class TokenApprove(Instruction):
    """``[133, token, spender, amount]``: set ``spender``'s allowance (0 revokes)."""

    token: bytes
    spender: bytes
    amount: int
    kind = KIND_TOKEN_APPROVE

    def fields(self) -> List[Any]:
        return [bytes(Hash(self.token)), bytes(Address(self.spender)), _amount(self.amount)]


@dataclass(frozen=True)
class TokenMint(Instruction):
    """``[134, token, to, amount]``: the admin or a TokenMint holder, within the cap."""

    token: bytes
    to: bytes
    amount: int
    kind = KIND_TOKEN_MINT

    def fields(self) -> List[Any]:
        return [bytes(Hash(self.token)), bytes(Address(self.to)), _amount(self.amount)]


@dataclass(frozen=True)
class TokenBurn(Instruction):
    """``[135, token, amount]``: burn the sender's balance (the admin or a TokenBurn holder)."""

    token: bytes
    amount: int
    kind = KIND_TOKEN_BURN

    def fields(self) -> List[Any]:
        return [bytes(Hash(self.token)), _amount(self.amount)]


# Job types and verification modes (chain/offchain/job).
JOB_LLM, JOB_HTTP, JOB_MCP, JOB_CUSTOM = 1, 2, 3, 4
MODE_NONE, MODE_ECONOMIC_BOND, MODE_MAJORITY_VOTE = 1, 2, 3
MODE_STRUCTURED_MATCH, MODE_DETERMINISTIC, MODE_SEMANTIC_SIMILARITY = 4, 5, 6
FORMAT_BINARY, FORMAT_TEXT, FORMAT_JSON = 1, 2, 3


@dataclass(frozen=True)
class Check:
    """One StructuredMatch step ``[kind, field, schema, tolerance, min, max]``."""

    kind: int
    field: str = ""
    schema: Optional[bytes] = None
    tolerance: str = ""
    min: str = ""
    max: str = ""

    def __cbor__(self) -> List[Any]:
        return [self.kind, self.field, self.schema, self.tolerance, self.min, self.max]


def _opt_bytes(b: Optional[bytes]) -> Optional[bytes]:
    return None if b is None else bytes(b)


@dataclass(frozen=True)
class JobSpec:
    """The CIP-2 job specification (chain/offchain/job.JobSpec), field for
    field. ``None`` byte and list fields encode as null (Go's nil); the
    dispatcher fills ``job_id``, ``submitter`` and ``submitted_at``."""

    job_type: int
    callback_actor: Address
    callback_handler: str
    max_price: int
    timeout_blocks: int
    verification_mode: int = MODE_NONE
    runners: int = 1
    quorum_bps: int = 0
    vote_field: str = ""
    checks: Optional[Sequence[Check]] = None
    similarity_ppm: int = 0
    embedding_dim: int = 0
    max_tokens: int = 0
    max_wall_time_ms: int = 0
    max_memory_bytes: int = 0
    tip: int = 0
    max_return_bytes: int = 1024
    expected_execution_ms: int = 1000
    data_format: int = FORMAT_BINARY
    json_schema: Optional[bytes] = None
    required_runner_pool: Optional[bytes] = None
    tee_required: bool = False
    required_domains: Optional[Sequence[str]] = None
    toolchain_digest: bytes = bytes(32)
    input: Optional[bytes] = None
    job_id: bytes = bytes(32)
    submitter: bytes = bytes(20)
    submitted_at: int = 0

    def __cbor__(self) -> List[Any]:
        return [
            bytes(Hash(self.job_id)),
            self.job_type,
            [self.max_tokens, self.max_wall_time_ms, self.max_memory_bytes],
            [self.verification_mode, self.runners, self.quorum_bps, self.vote_field,
             None if self.checks is None else [c.__cbor__() for c in self.checks],
             self.similarity_ppm, self.embedding_dim],
            self.max_price,
            self.tip,
            self.timeout_blocks,
            [bytes(Address(self.callback_actor)), self.callback_handler],
            bytes(Address(self.submitter)),
            self.submitted_at,
            _opt_bytes(self.required_runner_pool),
            [self.max_return_bytes, self.expected_execution_ms, self.data_format, _opt_bytes(self.json_schema)],
            self.tee_required,
            None if self.required_domains is None else sorted(set(self.required_domains)),
            bytes(Hash(self.toolchain_digest)),
            _opt_bytes(self.input),
        ]

    def encode(self) -> bytes:
        return cbor.encode(self)

    @property
    def escrow(self) -> int:
        """What the dispatcher holds: max_price + tip."""
        return self.max_price + self.tip


def encode_args(*args: Any, **kwargs: Any) -> bytes:
    """Handler arguments as the PVM takes them: positional arguments as a CBOR
    array, keyword arguments as a map (not both); no arguments as empty bytes.
    This is what the Go SDK's ``JSONArgs`` produces for a JSON array/object."""
    if args and kwargs:
        raise ValueError("pass positional or keyword arguments, not both")
    if kwargs:
        return cbor.encode(kwargs)
    if args:
        return cbor.encode(list(args))
    return b""


# Manifest actions (chain/offchain/entitlement): jobs = RunnerSubmitJob [11],
# http = Custom("http") [17, b"http"], timers = Custom("timers") [17, b"timers"].
_ACTIONS = {"jobs": [11], "http": [17, b"http"], "timers": [17, b"timers"]}
_JOB_TYPES = {"llm", "http", "mcp", "custom"}


def encode_manifest(requires: Iterable[Union[str, Mapping[str, Any]]]) -> bytes:
    """Encode a deployment manifest (spec 002 §15) as the Go CLI does for
    ``--manifest FILE`` / ``--require``. Entries are ``"timers"``,
    ``"jobs:llm,http"``, ``"http:api.example.com"`` or the manifest file's
    objects ``{"entitlement", "params", "inheritable"}``."""
    entries: Dict[bytes, List[Any]] = {}
    for r in requires:
        if isinstance(r, str):
            name, _, rest = r.partition(":")
            params = [p for p in rest.split(",") if p] if rest else []
            inh = False
        else:
            name, params, inh = r["entitlement"], list(r.get("params") or []), bool(r.get("inheritable", False))
        if name not in _ACTIONS:
            raise ValueError(f"unknown entitlement {name!r} (want timers, jobs or http)")
        params = sorted(set(params))
        if name == "timers" and params:
            raise ValueError("timers takes no parameters")
        if name == "jobs" and (not params or not set(params) <= _JOB_TYPES):
            raise ValueError("jobs needs job types among llm, http, mcp, custom")
        if name == "http" and not params:
            raise ValueError("http needs the domains jobs may require")
        action = _ACTIONS[name]
        key = cbor.encode(action)
        if key in entries:
            raise ValueError(f"{name} declared twice")
        entries[key] = [action, params, inh]
    if not entries:
        raise ValueError("manifest: empty (omit it instead)")
    return cbor.encode([entries[k] for k in sorted(entries)])


_DECODERS: Dict[int, Tuple[int, Callable[[List[Any]], Instruction]]] = {
    KIND_CALL: (3, lambda f: Call(f[1], f[2])),
    KIND_PUBLISH_LIBRARY: (3, lambda f: PublishLibrary(f[1], f[2])),
    KIND_REMOVE_LIBRARY: (2, lambda f: RemoveLibrary(f[1])),
    KIND_SUBMIT_JOB: (2, lambda f: SubmitJob(f[1])),
    KIND_VOLUME_FUND: (2, lambda f: VolumeFund(f[1])),
    KIND_TOKEN_CREATE: (6, lambda f: TokenCreate(f[1], f[2], f[3], f[4], f[5])),
    KIND_TOKEN_TRANSFER: (4, lambda f: TokenTransfer(f[1], f[2], f[3])),
    KIND_TOKEN_TRANSFER_FROM: (5, lambda f: TokenTransferFrom(f[1], f[2], f[3], f[4])),
    KIND_TOKEN_APPROVE: (4, lambda f: TokenApprove(f[1], f[2], f[3])),
    KIND_TOKEN_MINT: (4, lambda f: TokenMint(f[1], f[2], f[3])),
    KIND_TOKEN_BURN: (3, lambda f: TokenBurn(f[1], f[2])),
}


def decode_instruction(payload: bytes) -> Optional[Instruction]:
    """Decode the payload kinds this SDK builds (None for a transfer)."""
    if not payload:
        return None
    f = cbor.decode(payload)
    if not isinstance(f, list) or not f or not isinstance(f[0], int):
        raise ValueError("payload is not an instruction array")
    if f[0] == KIND_DEPLOY:
        if len(f) == 6 and not f[5]:
            raise cbor.NonCanonicalError("deploy: an empty manifest must be omitted")
        if len(f) not in (5, 6):
            raise ValueError(f"deploy: {len(f)} elements, want 5 or 6")
        return Deploy(f[1], f[2], f[3], f[4], f[5] if len(f) == 6 else b"")
    if f[0] not in _DECODERS:
        raise ValueError(f"instruction kind {f[0]} is not built by this SDK")
    n, mk = _DECODERS[f[0]]
    if len(f) != n:
        raise ValueError(f"kind {f[0]}: {len(f)} elements, want {n}")
    return mk(f)
