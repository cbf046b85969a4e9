"""The client logic, written once and run by both clients.

Every operation is a generator that yields :class:`Request` (an HTTP call)
or :class:`Sleep` and receives a :class:`Response`; it returns its result.
:class:`cowboy.Client` drives these generators with blocking ``http.client``
calls and :class:`cowboy.AsyncClient` with asyncio streams, so the two
clients cannot drift apart and the async one never blocks its event loop.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from typing import Any, Dict, Generator, List, Optional, Sequence, Tuple, TypeVar, Union
from urllib.parse import quote, urlencode

from . import cbor
from .errors import NotFoundError, ProofError, TimeoutError, TransactionFailedError, error_from_response
from .fees import FeeEstimate, intrinsic, suggest
from .instructions import (Call, Deploy, Instruction, JobSpec, PublishLibrary, RemoveLibrary, TokenApprove,
                           TokenBurn, TokenCreate, TokenMint, TokenTransfer, TokenTransferFrom,
                           SubmitJob)
from .keys import PrivateKey
from .proof import AccountState, Proof, account_key, storage_key, verify_account, verify_proof
from .tx import AccessTuple, Transaction
from .types import JOB_DISPATCHER, TOKEN_MODULE, Address, Hash, from_hex, to_hex

T = TypeVar("T")

#: Default execution budgets of actor transactions (sdk/actors.go).
DEFAULT_ACTOR_CYCLES = 5_000_000
DEFAULT_ACTOR_CELLS = 50_000
#: Estimates for off-chain compute instructions (sdk/offchain.go).
OFFCHAIN_EXPECT_CYCLES = 2_000_000
OFFCHAIN_EXPECT_CELLS = 100_000


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: Optional[bytes] = None
    content_type: Optional[str] = None


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes


Op = Generator[Union[Request, Sleep], Optional[Response], T]


@dataclass(frozen=True)
class TxOptions:
    """Overrides for what transaction building fills in; zero/None fields are
    filled from the node (sdk.TxOptions)."""

    nonce: Optional[int] = None
    cycles_limit: int = 0
    cells_limit: int = 0
    max_fee_per_cycle: int = 0
    max_fee_per_cell: int = 0
    tip_per_cycle: int = 0
    tip_per_cell: int = 0
    access_list: Optional[Sequence[AccessTuple]] = None


def _call(method: str, path: str, body: Any = None) -> Op[Any]:
    raw = None if body is None else json.dumps(body).encode()
    resp = yield Request(method, path, raw, "application/json" if raw is not None else None)
    assert resp is not None
    if resp.status // 100 != 2:
        raise error_from_response(resp.status, resp.body)
    if not resp.body:
        return None
    try:
        return json.loads(resp.body)
    except ValueError as e:
        raise error_from_response(502, b"response is not JSON: " + str(e).encode()) from None


def _obj(method: str, path: str, body: Any = None) -> Op[Dict[str, Any]]:
    """A call whose answer must be a JSON object."""
    v = yield from _call(method, path, body)
    if not isinstance(v, dict):
        raise error_from_response(502, f"{method} {path}: answer is not a JSON object".encode())
    return v


def _arr(method: str, path: str) -> Op[List[Dict[str, Any]]]:
    """A call whose answer must be a JSON array (null: empty)."""
    v = yield from _call(method, path)
    if v is None:
        return []
    if not isinstance(v, list):
        raise error_from_response(502, f"{method} {path}: answer is not a JSON array".encode())
    return v


def _raw(path: str) -> Op[bytes]:
    resp = yield Request("GET", path)
    assert resp is not None
    if resp.status != 200:
        raise error_from_response(resp.status, resp.body)
    return resp.body


def get(path: str) -> Op[Any]:
    """Any GET route of the node API, as JSON."""
    return (yield from _call("GET", path))


def status() -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", "/v1/status"))


def fees() -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", "/v1/fees"))


def account(addr: Union[str, bytes]) -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", f"/v1/accounts/{Address(addr)}"))


def balance(addr: Union[str, bytes]) -> Op[int]:
    return int((yield from account(addr))["balance"])


def submit_raw(raw: bytes) -> Op[Hash]:
    r = yield from _obj("POST", "/v1/txs", {"tx": bytes(raw).hex()})
    return Hash(r["hash"])


def submit(tx: Transaction) -> Op[Hash]:
    return (yield from submit_raw(tx.encode()))


def tx(h: Union[str, bytes]) -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", f"/v1/txs/{Hash(h)}"))


def block(block_id: Union[int, str] = "latest", receipts: bool = False) -> Op[Dict[str, Any]]:
    path = f"/v1/blocks/{quote(str(block_id), safe='')}"
    return (yield from _obj("GET", path + ("?receipts=true" if receipts else "")))


def events(emitter: Optional[Union[str, bytes]] = None, topic: str = "", from_height: int = 0,
           to_height: int = 0, limit: int = 0, cursor: str = "") -> Op[Dict[str, Any]]:
    q: Dict[str, str] = {}
    if emitter is not None:
        q["emitter"] = str(Address(emitter))
    if topic:
        q["topic"] = topic
    if from_height:
        q["from"] = str(from_height)
    if to_height:
        q["to"] = str(to_height)
    if limit:
        q["limit"] = str(limit)
    if cursor:
        q["cursor"] = cursor
    return (yield from _obj("GET", "/v1/events?" + urlencode(q)))


def proof(key: bytes, height: Optional[int] = None) -> Op[Dict[str, Any]]:
    path = "/v1/proofs/" + to_hex(key)
    if height is not None:
        path += f"?height={height}"
    return (yield from _obj("GET", path))


def verified_account(addr: Union[str, bytes], height: Optional[int] = None,
                     trusted_root: Optional[bytes] = None) -> Op[AccountState]:
    """An account read with its Merkle proof checked. The root is
    ``trusted_root`` if given, else the ``state_root`` of the block header at
    the proof's height (fetched separately; it must match the proof's)."""
    p = yield from proof(account_key(Address(addr)), height)
    root = trusted_root
    if root is None:
        root = yield from _header_root(p)
    return verify_account(root, Address(addr), p)


def verified_storage(actor_addr: Union[str, bytes], key: bytes, height: Optional[int] = None,
                     trusted_root: Optional[bytes] = None) -> Op[Optional[bytes]]:
    """One actor storage slot read with its Merkle proof checked (None: the
    proof shows the slot is absent). The value is the slot's canonical CBOR.
    The root is chosen as in :func:`verified_account`."""
    k = storage_key(Address(actor_addr), key)
    p = yield from proof(k, height)
    root = trusted_root
    if root is None:
        root = yield from _header_root(p)
    if from_hex(p["key"]) != k:
        raise ProofError(f"proof is for key {p['key']}, not {to_hex(k)}")
    value = None if p.get("value") is None else from_hex(p["value"])
    verify_proof(root, k, value, Proof.from_json(p["proof"]))
    return value


def _header_root(p: Dict[str, Any]) -> Op[bytes]:
    hdr = (yield from block(int(p["height"])))["header"]
    root = from_hex(hdr["state_root"])
    if root != from_hex(p["state_root"]):
        raise ProofError(f"proof state_root {p['state_root']} is not block {p['height']}'s {hdr['state_root']}")
    return root


def faucet(addr: Union[str, bytes], value: int) -> Op[Hash]:
    r = yield from _obj("POST", "/v1/faucet", {"address": str(Address(addr)), "value": str(int(value))})
    return Hash(r["hash"])


def wait(h: Union[str, bytes, Transaction], timeout: float = 30.0, check: bool = True,
         poll: float = 0.1) -> Op[Dict[str, Any]]:
    """Poll until the transaction is included; return ``GET /v1/txs`` for it.
    With ``check`` a failed receipt raises TransactionFailedError."""
    hh = h.hash if isinstance(h, Transaction) else Hash(h)
    deadline = time.monotonic() + timeout
    while True:
        try:
            r = yield from tx(hh)
            if r.get("status") == "included":
                rc = r.get("receipt") or {}
                if check and rc.get("status") == "failed":
                    raise TransactionFailedError(str(hh), rc)
                return r
        except NotFoundError:
            pass
        if time.monotonic() >= deadline:
            raise TimeoutError(f"receipt of {hh} not seen within {timeout:g}s")
        yield Sleep(poll)


def estimate_fees(to: Optional[Address], instruction: Optional[Instruction], payload: bytes,
                  expect_cycles: int = 0, expect_cells: int = 0, options: TxOptions = TxOptions()) -> Op[FeeEstimate]:
    """sdk.Client.EstimateFees: intrinsic cost + expected execution + 20%."""
    f = yield from fees()
    ic, ib = intrinsic(instruction, len(payload))
    est = suggest(int(f["basefee_cycle"]), int(f["basefee_cell"]), int(f["max_tx_cycles"]), int(f["max_tx_cells"]),
                  ic + expect_cycles, ib + expect_cells, options.tip_per_cycle, options.tip_per_cell)
    if instruction is None and expect_cycles == 0:
        est = FeeEstimate(ic, ib, est.max_fee_per_cycle, est.max_fee_per_cell, est.tip_per_cycle, est.tip_per_cell)
    return est


def build_tx(key: PrivateKey, to: Optional[Union[str, bytes]], value: int = 0,
             instruction: Optional[Instruction] = None, expect_cycles: int = 0, expect_cells: int = 0,
             options: TxOptions = TxOptions()) -> Op[Transaction]:
    """sdk.Client.BuildTx: chain id, nonce (counting pending transactions)
    and fees from the node, then sign."""
    st = yield from status()
    payload = instruction.encode() if instruction is not None else b""
    to_a = None if to is None else Address(to)
    est = yield from estimate_fees(to_a, instruction, payload, expect_cycles, expect_cells, options)
    o = options
    nonce = o.nonce
    if nonce is None:
        nonce = int((yield from account(key.address))["pending_nonce"])
    t = Transaction(
        chain_id=int(st["chain_id"]), nonce=nonce, to=to_a, value=int(value),
        cycles_limit=o.cycles_limit or est.cycles_limit, cells_limit=o.cells_limit or est.cells_limit,
        max_fee_per_cycle=o.max_fee_per_cycle or est.max_fee_per_cycle,
        max_fee_per_cell=o.max_fee_per_cell or est.max_fee_per_cell,
        tip_per_cycle=o.tip_per_cycle or est.tip_per_cycle, tip_per_cell=o.tip_per_cell or est.tip_per_cell,
        access_list=None if o.access_list is None else tuple(o.access_list), payload=payload,
    )
    return t.sign(key)


def send(key: PrivateKey, to: Optional[Union[str, bytes]], value: int = 0, instruction: Optional[Instruction] = None,
         expect_cycles: int = 0, expect_cells: int = 0, options: TxOptions = TxOptions()) -> Op[Transaction]:
    """Build, sign and submit; returns the signed transaction."""
    t = yield from build_tx(key, to, value, instruction, expect_cycles, expect_cells, options)
    yield from submit(t)
    return t


def transfer(key: PrivateKey, to: Union[str, bytes], value: int, options: TxOptions = TxOptions()) -> Op[Transaction]:
    return (yield from send(key, to, value, None, 0, 0, options))


def send_instruction(key: PrivateKey, to: Optional[Union[str, bytes]], instruction: Instruction, value: int = 0,
                     options: TxOptions = TxOptions()) -> Op[Transaction]:
    """sdk.Client.SendInstruction: actor and library instructions with the
    default actor budgets (unused limits are refunded)."""
    o = options
    if not o.cycles_limit:
        o = replace(o, cycles_limit=DEFAULT_ACTOR_CYCLES)
    if not o.cells_limit:
        o = replace(o, cells_limit=DEFAULT_ACTOR_CELLS + 100 + len(instruction.encode()))
    return (yield from send(key, to, value, instruction, 0, 0, o))


def deploy(key: PrivateKey, code: Union[str, bytes], salt: Union[str, bytes] = b"", init_handler: str = "",
           init_args: bytes = b"", requires: bytes = b"", value: int = 0,
           options: TxOptions = TxOptions()) -> Op[Transaction]:
    ins = Deploy(code.encode() if isinstance(code, str) else bytes(code),
                 salt.encode() if isinstance(salt, str) else bytes(salt), init_handler, bytes(init_args), bytes(requires))
    return (yield from send_instruction(key, None, ins, value, options))


def call(key: PrivateKey, actor_addr: Union[str, bytes], handler: str, args: bytes = b"", value: int = 0,
         options: TxOptions = TxOptions()) -> Op[Transaction]:
    return (yield from send_instruction(key, Address(actor_addr), Call(handler, bytes(args)), value, options))


def publish_library(key: PrivateKey, name: str, code: Union[str, bytes], options: TxOptions = TxOptions()) -> Op[Transaction]:
    ins = PublishLibrary(name, code.encode() if isinstance(code, str) else bytes(code))
    return (yield from send_instruction(key, None, ins, 0, options))


def remove_library(key: PrivateKey, name: str, options: TxOptions = TxOptions()) -> Op[Transaction]:
    return (yield from send_instruction(key, None, RemoveLibrary(name), 0, options))


def submit_job(key: PrivateKey, spec: Union[JobSpec, bytes], options: TxOptions = TxOptions()) -> Op[Transaction]:
    """sdk.Client.SubmitJob: escrow max_price + tip from the sender."""
    b = spec.encode() if isinstance(spec, JobSpec) else bytes(spec)
    return (yield from send(key, JOB_DISPATCHER, 0, SubmitJob(b), OFFCHAIN_EXPECT_CYCLES, OFFCHAIN_EXPECT_CELLS, options))


# -- CIP-20 platform tokens (sdk/tokens.go) ------------------------------

# The Platform Token Costs table of spec 002 §17.3 (chain/system/tokens):
# cycles and cells beyond the intrinsic cost, which the limits are set from.
TOKEN_COSTS: Dict[type, Tuple[int, int]] = {
    TokenTransfer: (1_000, 64), TokenTransferFrom: (1_500, 96), TokenApprove: (500, 32),
    TokenMint: (1_000, 64), TokenBurn: (500, 64),
}
TOKEN_CREATE_CYCLES, TOKEN_CREATE_BASE_CELLS = 10_000, 256


def token_cost(ins: Instruction) -> Tuple[int, int]:
    """tokens.InstructionCost: the cost table's cycles and cells of ``ins``."""
    if isinstance(ins, TokenCreate):
        return TOKEN_CREATE_CYCLES, TOKEN_CREATE_BASE_CELLS + len(ins.name.encode()) + len(ins.symbol.encode())
    return TOKEN_COSTS.get(type(ins), (0, 0))


def send_token(key: PrivateKey, ins: Instruction, options: TxOptions = TxOptions()) -> Op[Transaction]:
    """sdk.Client.SendToken: a token instruction to the token module."""
    cycles, cells = token_cost(ins)
    return (yield from send(key, TOKEN_MODULE, 0, ins, cycles, cells, options))


def tokens() -> Op[List[Dict[str, Any]]]:
    return (yield from _arr("GET", "/v1/tokens"))


def token(token_id: Union[str, bytes]) -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", f"/v1/tokens/{Hash(token_id)}"))


def token_balance(token_id: Union[str, bytes], holder: Union[str, bytes],
                  spender: Optional[Union[str, bytes]] = None) -> Op[Dict[str, Any]]:
    p = f"/v1/tokens/{Hash(token_id)}/balances/{Address(holder)}"
    if spender is not None:
        p += "?" + urlencode({"spender": str(Address(spender))})
    r = yield from _obj("GET", p)
    for k in ("balance", "allowance"):
        if k in r:
            r[k] = int(r[k])
    return r


def token_id(result: Dict[str, Any]) -> Hash:
    """The token id a ``token_create`` receipt returned."""
    rc = result.get("receipt") or {}
    ret = from_hex(rc.get("return") or "0x")
    v = cbor.decode(ret) if ret else None
    if not isinstance(v, bytes) or len(v) != 32:
        raise ValueError("receipt returned no token id")
    return Hash(v)


def actor(addr: Union[str, bytes]) -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", f"/v1/actors/{Address(addr)}"))


def actor_code(addr: Union[str, bytes]) -> Op[bytes]:
    return (yield from _raw(f"/v1/actors/{Address(addr)}/code"))


def code(h: Union[str, bytes]) -> Op[bytes]:
    return (yield from _raw(f"/v1/code/{Hash(h)}"))


def actor_state(addr: Union[str, bytes], key_text: str = "", cursor: str = "", limit: int = 0) -> Op[Dict[str, Any]]:
    q: Dict[str, str] = {}
    if key_text:
        q["key_text"] = key_text
    if cursor:
        q["cursor"] = cursor
    if limit:
        q["limit"] = str(limit)
    return (yield from _obj("GET", f"/v1/actors/{Address(addr)}/state?" + urlencode(q)))


def query(addr: Union[str, bytes], handler: str, args: bytes = b"", caller: Optional[Union[str, bytes]] = None) -> Op[Any]:
    """Run a read-only handler; returns the handler's value decoded from its
    canonical CBOR return (``query_raw`` gives the whole answer)."""
    r = yield from query_raw(addr, handler, args, caller)
    ret = from_hex(r.get("return") or "0x")
    return cbor.decode(ret) if ret else None


def query_raw(addr: Union[str, bytes], handler: str, args: bytes = b"",
              caller: Optional[Union[str, bytes]] = None) -> Op[Dict[str, Any]]:
    body: Dict[str, Any] = {"handler": handler, "args": to_hex(args)}
    if caller is not None:
        body["caller"] = str(Address(caller))
    return (yield from _obj("POST", f"/v1/actors/{Address(addr)}/query", body))


def libraries(publisher: Union[str, bytes]) -> Op[List[Dict[str, Any]]]:
    return (yield from _arr("GET", f"/v1/libraries/{Address(publisher)}"))


def job(job_id: Union[str, bytes]) -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", f"/v1/jobs/{Hash(job_id)}"))


def wait_job(job_id: Union[str, bytes], statuses: Tuple[str, ...] = ("verified", "failed", "finalized"),
             timeout: float = 60.0, poll: float = 0.25) -> Op[Dict[str, Any]]:
    """Poll a job until its status is one of ``statuses``."""
    deadline = time.monotonic() + timeout
    while True:
        j = yield from job(job_id)
        if j.get("status") in statuses:
            return j
        if time.monotonic() >= deadline:
            raise TimeoutError(f"job {Hash(job_id)} still {j.get('status')!r} after {timeout:g}s")
        yield Sleep(poll)


def runners(all: bool = False) -> Op[List[Dict[str, Any]]]:
    return (yield from _arr("GET", "/v1/runners" + ("?all=true" if all else "")))


def runner(addr: Union[str, bytes]) -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", f"/v1/runners/{Address(addr)}"))


def offchain_params() -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", "/v1/offchain/params"))


def timers(owner: Union[str, bytes]) -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", "/v1/timers?" + urlencode({"owner": str(Address(owner))})))


def timer(timer_id: Union[str, bytes]) -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", f"/v1/timers/{Hash(timer_id)}"))


def timer_stats() -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", "/v1/timers/stats"))


def volume(volume_id: Union[str, bytes]) -> Op[Dict[str, Any]]:
    return (yield from _obj("GET", f"/v1/volumes/{Hash(volume_id)}"))


def relays(all: bool = False) -> Op[List[Dict[str, Any]]]:
    return (yield from _arr("GET", "/v1/relays" + ("?all=true" if all else "")))


def created_address(result: Dict[str, Any]) -> Address:
    """The actor a deploy's receipt created."""
    rc = result.get("receipt") or {}
    if not rc.get("created"):
        raise ValueError("receipt created no actor")
    return Address(rc["created"])


def job_id(result: Dict[str, Any]) -> Hash:
    """The job id a ``submit_job`` receipt returned."""
    rc = result.get("receipt") or {}
    ret = from_hex(rc.get("return") or "0x")
    if len(ret) != 32:
        v = cbor.decode(ret) if ret else None
        if not isinstance(v, bytes) or len(v) != 32:
            raise ValueError("receipt returned no job id")
        ret = v
    return Hash(ret)
