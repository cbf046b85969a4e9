"""The synchronous client: :mod:`cowboy._core` operations driven by blocking
``http.client`` calls."""

from __future__ import annotations

import http.client
import socket
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple, TypeVar, Union
from urllib.parse import urlsplit

from . import _core
from ._core import Op, Request, Response, Sleep, TxOptions
from .errors import TransportError, error_from_response
from .fees import FeeEstimate
from .instructions import (Instruction, JobSpec, TokenApprove, TokenBurn, TokenCreate, TokenMint, TokenTransfer,
                           TokenTransferFrom)
from .keys import PrivateKey
from .proof import AccountState
from .sse import INITIAL_BACKOFF, MAX_BACKOFF, SSEParser
from .tx import Transaction
from .types import Address, Hash

__all__ = ["Client", "TxOptions", "DEFAULT_NODE_URL"]

T = TypeVar("T")
AddrLike = Union[str, bytes]
DEFAULT_NODE_URL = "http://127.0.0.1:8545"


def _split(url: str) -> Tuple[str, int, str]:
    u = urlsplit(url.rstrip("/"))
    if u.scheme != "http":
        raise ValueError(f"node URL must be http://host:port, got {url!r}")
    return u.hostname or "127.0.0.1", u.port or 80, u.path


class Client:
    """A blocking client of one node (the Go ``sdk.Client``)."""

    def __init__(self, url: str = DEFAULT_NODE_URL, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self._host, self._port, self._prefix = _split(self.url)
        self.timeout = timeout

    # -- transport -------------------------------------------------------
    def _do(self, req: Request) -> Response:
        conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
        try:
            headers = {"Accept": "application/json"}
            if req.content_type:
                headers["Content-Type"] = req.content_type
            conn.request(req.method, self._prefix + req.path, body=req.body, headers=headers)
            r = conn.getresponse()
            return Response(r.status, r.read())
        except (OSError, http.client.HTTPException) as e:
            raise TransportError(f"{req.method} {self.url}{req.path}: {e}") from e
        finally:
            conn.close()

    def _run(self, op: Op[T]) -> T:
        try:
            item = next(op)
            while True:
                if isinstance(item, Sleep):
                    time.sleep(item.seconds)
                    item = op.send(None)
                else:
                    item = op.send(self._do(item))
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]

    # -- chain -----------------------------------------------------------
    def get(self, path: str) -> Any:
        """Any GET route of the API as JSON."""
        return self._run(_core.get(path))

    def status(self) -> Dict[str, Any]:
        return self._run(_core.status())

    def fees(self) -> Dict[str, Any]:
        return self._run(_core.fees())

    def account(self, addr: AddrLike) -> Dict[str, Any]:
        return self._run(_core.account(addr))

    def balance(self, addr: AddrLike) -> int:
        return self._run(_core.balance(addr))

    def verified_account(self, addr: AddrLike, height: Optional[int] = None,
                         trusted_root: Optional[bytes] = None) -> AccountState:
        """The account as proven by a state proof (see _core.verified_account)."""
        return self._run(_core.verified_account(addr, height, trusted_root))

    def verified_storage(self, actor: AddrLike, key: bytes, height: Optional[int] = None,
                        trusted_root: Optional[bytes] = None) -> Optional[bytes]:
        """An actor storage slot (canonical CBOR) as proven by a state proof; None if absent."""
        return self._run(_core.verified_storage(actor, key, height, trusted_root))

    def proof(self, key: bytes, height: Optional[int] = None) -> Dict[str, Any]:
        return self._run(_core.proof(key, height))

    def block(self, block_id: Union[int, str] = "latest", receipts: bool = False) -> Dict[str, Any]:
        return self._run(_core.block(block_id, receipts))

    def tx(self, h: AddrLike) -> Dict[str, Any]:
        return self._run(_core.tx(h))

    def events(self, emitter: Optional[AddrLike] = None, topic: str = "", from_height: int = 0,
               to_height: int = 0, limit: int = 0, cursor: str = "") -> Dict[str, Any]:
        return self._run(_core.events(emitter, topic, from_height, to_height, limit, cursor))

    def faucet(self, addr: AddrLike, value: int) -> Hash:
        return self._run(_core.faucet(addr, value))

    # -- transactions ----------------------------------------------------
    def submit(self, tx: Transaction) -> Hash:
        return self._run(_core.submit(tx))

    def submit_raw(self, raw: bytes) -> Hash:
        return self._run(_core.submit_raw(raw))

    def wait(self, h: Union[AddrLike, Transaction], timeout: float = 30.0, check: bool = True) -> Dict[str, Any]:
        """Wait for inclusion; a failed receipt raises TransactionFailedError when ``check``."""
        return self._run(_core.wait(h, timeout, check))

    def estimate_fees(self, to: Optional[AddrLike], instruction: Optional[Instruction] = None,
                      expect_cycles: int = 0, expect_cells: int = 0, options: TxOptions = TxOptions()) -> FeeEstimate:
        payload = instruction.encode() if instruction is not None else b""
        return self._run(_core.estimate_fees(None if to is None else Address(to), instruction, payload,
                                             expect_cycles, expect_cells, options))

    def build_tx(self, key: PrivateKey, to: Optional[AddrLike], value: int = 0, instruction: Optional[Instruction] = None,
                 expect_cycles: int = 0, expect_cells: int = 0, options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.build_tx(key, to, value, instruction, expect_cycles, expect_cells, options))

    def send(self, key: PrivateKey, to: Optional[AddrLike], value: int = 0, instruction: Optional[Instruction] = None,
             expect_cycles: int = 0, expect_cells: int = 0, options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.send(key, to, value, instruction, expect_cycles, expect_cells, options))

    def transfer(self, key: PrivateKey, to: AddrLike, value: int, options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.transfer(key, to, value, options))

    # -- actors and libraries --------------------------------------------
    def deploy(self, key: PrivateKey, code: Union[str, bytes], salt: Union[str, bytes] = b"", init_handler: str = "",
               init_args: bytes = b"", requires: bytes = b"", value: int = 0, options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.deploy(key, code, salt, init_handler, init_args, requires, value, options))

    def call(self, key: PrivateKey, actor: AddrLike, handler: str, args: bytes = b"", value: int = 0,
             options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.call(key, actor, handler, args, value, options))

    def query(self, actor: AddrLike, handler: str, args: bytes = b"", caller: Optional[AddrLike] = None) -> Any:
        return self._run(_core.query(actor, handler, args, caller))

    def query_raw(self, actor: AddrLike, handler: str, args: bytes = b"", caller: Optional[AddrLike] = None) -> Dict[str, Any]:
        return self._run(_core.query_raw(actor, handler, args, caller))

    def actor(self, addr: AddrLike) -> Dict[str, Any]:
        return self._run(_core.actor(addr))

    def actor_code(self, addr: AddrLike) -> bytes:
        return self._run(_core.actor_code(addr))

    def code(self, h: AddrLike) -> bytes:
        return self._run(_core.code(h))

    def actor_state(self, addr: AddrLike, key_text: str = "", cursor: str = "", limit: int = 0) -> Dict[str, Any]:
        return self._run(_core.actor_state(addr, key_text, cursor, limit))

    def publish_library(self, key: PrivateKey, name: str, code: Union[str, bytes], options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.publish_library(key, name, code, options))

    def remove_library(self, key: PrivateKey, name: str, options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.remove_library(key, name, options))

    def libraries(self, publisher: AddrLike) -> List[Dict[str, Any]]:
        return self._run(_core.libraries(publisher))

    # -- off-chain jobs, timers, storage ---------------------------------
    def submit_job(self, key: PrivateKey, spec: Union[JobSpec, bytes], options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.submit_job(key, spec, options))

    def job(self, job_id: AddrLike) -> Dict[str, Any]:
        return self._run(_core.job(job_id))

    def wait_job(self, job_id: AddrLike, statuses: Tuple[str, ...] = ("verified", "failed", "finalized"),
                 timeout: float = 60.0) -> Dict[str, Any]:
        return self._run(_core.wait_job(job_id, statuses, timeout))

    def runners(self, all: bool = False) -> List[Dict[str, Any]]:
        return self._run(_core.runners(all))

    def runner(self, addr: AddrLike) -> Dict[str, Any]:
        return self._run(_core.runner(addr))

    def offchain_params(self) -> Dict[str, Any]:
        return self._run(_core.offchain_params())

    def timers(self, owner: AddrLike) -> Dict[str, Any]:
        return self._run(_core.timers(owner))

    def timer(self, timer_id: AddrLike) -> Dict[str, Any]:
        return self._run(_core.timer(timer_id))

    def timer_stats(self) -> Dict[str, Any]:
        return self._run(_core.timer_stats())

    def volume(self, volume_id: AddrLike) -> Dict[str, Any]:
        return self._run(_core.volume(volume_id))

    def relays(self, all: bool = False) -> List[Dict[str, Any]]:
        return self._run(_core.relays(all))

    # -- CIP-20 platform tokens (the Go sdk's CreateToken, TransferToken, ...) --
    def token_create(self, key: PrivateKey, name: str, symbol: str, decimals: int = 18, cap: Optional[int] = None,
                     initial: Optional[int] = None, options: TxOptions = TxOptions()) -> Transaction:
        """Create a token (sender: its admin, receives ``initial``); the id is
        ``token_id(wait(tx))``. ``cap`` None or 0: uncapped."""
        return self._run(_core.send_token(key, TokenCreate(name, symbol, decimals, cap, initial), options))

    def token_transfer(self, key: PrivateKey, token: AddrLike, to: AddrLike, amount: int,
                       options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.send_token(key, TokenTransfer(Hash(token), Address(to), amount), options))

    def token_transfer_from(self, key: PrivateKey, token: AddrLike, owner: AddrLike, to: AddrLike, amount: int,
                            options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.send_token(key, TokenTransferFrom(Hash(token), Address(owner), Address(to), amount),
                                                options))

    def token_approve(self, key: PrivateKey, token: AddrLike, spender: AddrLike, amount: int,
                      options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.send_token(key, TokenApprove(Hash(token), Address(spender), amount), options))

    def token_mint(self, key: PrivateKey, token: AddrLike, to: AddrLike, amount: int,
                   options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.send_token(key, TokenMint(Hash(token), Address(to), amount), options))

    def token_burn(self, key: PrivateKey, token: AddrLike, amount: int, options: TxOptions = TxOptions()) -> Transaction:
        return self._run(_core.send_token(key, TokenBurn(Hash(token), amount), options))

    def tokens(self) -> List[Dict[str, Any]]:
        return self._run(_core.tokens())

    def token_info(self, token: AddrLike) -> Dict[str, Any]:
        """Metadata and supply: id, name, symbol, decimals, cap ("0": uncapped), supply, admin."""
        return self._run(_core.token(token))

    def token_balance(self, token: AddrLike, holder: AddrLike, spender: Optional[AddrLike] = None) -> Dict[str, Any]:
        """``holder``'s balance (an int) and, with ``spender``, its allowance."""
        return self._run(_core.token_balance(token, holder, spender))

    # -- stream ----------------------------------------------------------
    def subscribe(self, from_height: Optional[int] = None, reconnect: bool = True) -> Iterator[Dict[str, Any]]:
        """Blocks (with receipts and events) from ``from_height`` (default: the
        next block) in order, following the head. A dropped connection is
        resumed with ``Last-Event-ID`` after the last block delivered, so
        every block is seen exactly once."""
        if from_height is not None and from_height < 0:
            raise ValueError(f"from_height must be >= 0, got {from_height}")
        next_h = from_height if from_height is not None else int(self.status()["height"]) + 1
        last_id: Optional[int] = None
        backoff = INITIAL_BACKOFF
        while True:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=60)
            try:
                headers = {"Accept": "text/event-stream"}
                path = self._prefix + "/v1/stream"
                if last_id is not None:
                    headers["Last-Event-ID"] = str(last_id)  # resume after the last block seen
                else:
                    path += f"?from={next_h}"
                conn.request("GET", path, headers=headers)
                r = conn.getresponse()
                if r.status != 200:
                    raise error_from_response(r.status, r.read())
                backoff = INITIAL_BACKOFF
                p = SSEParser()
                while True:
                    line = r.readline()
                    if not line:
                        break
                    ev = p.feed(line.decode("utf-8"))
                    if ev is None or ev.event != "block":
                        continue
                    b = ev.json()
                    h = int(b["header"]["height"])
                    if h < next_h:
                        continue
                    next_h, last_id = h + 1, h
                    yield b
            except (OSError, http.client.HTTPException, socket.timeout) as e:
                if not reconnect:
                    raise TransportError(f"stream: {e}") from e
            finally:
                conn.close()
            if not reconnect:
                return
            time.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)
