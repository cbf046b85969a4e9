"""The asyncio client: the same :mod:`cowboy._core` operations as
:class:`cowboy.Client`, driven by a small HTTP/1.1 client over
``asyncio.open_connection`` — no threads, nothing that blocks the loop
(signing and hashing are CPU work of a few milliseconds)."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Dict, List, Optional, Tuple, TypeVar, Union

from . import _core
from ._core import Op, Request, Response, Sleep, TxOptions
from .client import DEFAULT_NODE_URL, _split
from .errors import TransportError, error_from_response
from .fees import FeeEstimate
from .instructions import (Instruction, JobSpec, TokenApprove, TokenBurn, TokenCreate, TokenMint, TokenTransfer,
                           TokenTransferFrom)
from .keys import PrivateKey
from .proof import AccountState
from .sse import INITIAL_BACKOFF, MAX_BACKOFF, SSEParser
from .tx import Transaction
from .types import Address, Hash

__all__ = ["AsyncClient"]

T = TypeVar("T")
AddrLike = Union[str, bytes]
_MAX_BODY = 64 << 20


class _Body:
    """Reads an HTTP/1.1 response body: Content-Length, chunked, or to EOF."""

    def __init__(self, reader: asyncio.StreamReader, headers: Dict[str, str]) -> None:
        self.r = reader
        self.chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        cl = headers.get("content-length")
        self.left: Optional[int] = int(cl) if cl is not None and not self.chunked else None
        self.chunk_left = 0
        self.done = False

    async def read_some(self) -> bytes:
        """The next piece of the body; b"" at its end."""
        if self.done:
            return b""
        if self.chunked:
            if self.chunk_left == 0:
                size_line = await self.r.readline()
                if not size_line:
                    raise TransportError("connection closed inside a chunked body")
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while (await self.r.readline()) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    self.done = True
                    return b""
                self.chunk_left = size
            data = await self.r.read(min(self.chunk_left, 65536))
            if not data:
                raise TransportError("connection closed inside a chunk")
            self.chunk_left -= len(data)
            if self.chunk_left == 0:
                await self.r.readexactly(2)  # CRLF after the chunk
            return data
        if self.left is not None:
            if self.left == 0:
                self.done = True
                return b""
            data = await self.r.read(min(self.left, 65536))
            if not data:
                raise TransportError("connection closed before the end of the body")
            self.left -= len(data)
            return data
        data = await self.r.read(65536)
        if not data:
            self.done = True
        return data

    async def read_all(self) -> bytes:
        out = bytearray()
        while True:
            d = await self.read_some()
            if not d:
                return bytes(out)
            out += d
            if len(out) > _MAX_BODY:
                raise TransportError("response body too large")


class AsyncClient:
    """An asyncio client of one node. Use ``async with AsyncClient(url) as c``
    or call methods directly; each request opens its own connection."""

    def __init__(self, url: str = DEFAULT_NODE_URL, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self._host, self._port, self._prefix = _split(self.url)
        self.timeout = timeout

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None

    async def _open(self, method: str, path: str, body: Optional[bytes], headers: Dict[str, str]
                    ) -> Tuple[asyncio.StreamWriter, int, _Body]:
        try:
            reader, writer = await asyncio.open_connection(self._host, self._port)
        except OSError as e:
            raise TransportError(f"{method} {self.url}{path}: {e}") from e
        try:
            h = {"Host": f"{self._host}:{self._port}", "Connection": "close", "User-Agent": "cowboy-py"}
            h.update(headers)
            if body is not None:
                h["Content-Length"] = str(len(body))
            head = f"{method} {self._prefix}{path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) + "\r\n"
            writer.write(head.encode("latin-1") + (body or b""))
            await writer.drain()
            status_line = await reader.readline()
            parts = status_line.decode("latin-1").split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/"):
                raise TransportError(f"{method} {path}: not an HTTP response: {status_line!r}")
            status = int(parts[1])
            hdrs: Dict[str, str] = {}
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b"\n", b""):
                    break
                k, _, v = line.decode("latin-1").partition(":")
                hdrs[k.strip().lower()] = v.strip()
            return writer, status, _Body(reader, hdrs)
        except BaseException:
            writer.close()
            raise

    async def _do(self, req: Request) -> Response:
        headers = {"Accept": "application/json"}
        if req.content_type:
            headers["Content-Type"] = req.content_type
        try:
            writer, status, body = await asyncio.wait_for(self._open(req.method, req.path, req.body, headers), self.timeout)
            try:
                data = await asyncio.wait_for(body.read_all(), self.timeout)
            finally:
                writer.close()
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            raise TransportError(f"{req.method} {self.url}{req.path}: {e}") from e
        except asyncio.TimeoutError:
            raise TransportError(f"{req.method} {self.url}{req.path}: timed out after {self.timeout:g}s") from None
        return Response(status, data)

    async def _run(self, op: Op[T]) -> T:
        try:
            item = next(op)
            while True:
                if isinstance(item, Sleep):
                    await asyncio.sleep(item.seconds)
                    item = op.send(None)
                else:
                    item = op.send(await self._do(item))
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]

    # -- chain -----------------------------------------------------------
    async def get(self, path: str) -> Any:
        return await self._run(_core.get(path))

    async def status(self) -> Dict[str, Any]:
        return await self._run(_core.status())

    async def fees(self) -> Dict[str, Any]:
        return await self._run(_core.fees())

    async def account(self, addr: AddrLike) -> Dict[str, Any]:
        return await self._run(_core.account(addr))

    async def balance(self, addr: AddrLike) -> int:
        return await self._run(_core.balance(addr))

    async def verified_account(self, addr: AddrLike, height: Optional[int] = None,
                               trusted_root: Optional[bytes] = None) -> AccountState:
        return await self._run(_core.verified_account(addr, height, trusted_root))

    async def verified_storage(self, actor: AddrLike, key: bytes, height: Optional[int] = None,
                        trusted_root: Optional[bytes] = None) -> Optional[bytes]:
        """An actor storage slot (canonical CBOR) as proven by a state proof; None if absent."""
        return await self._run(_core.verified_storage(actor, key, height, trusted_root))

    async def proof(self, key: bytes, height: Optional[int] = None) -> Dict[str, Any]:
        return await self._run(_core.proof(key, height))

    async def block(self, block_id: Union[int, str] = "latest", receipts: bool = False) -> Dict[str, Any]:
        return await self._run(_core.block(block_id, receipts))

    async def tx(self, h: AddrLike) -> Dict[str, Any]:
        return await self._run(_core.tx(h))

    async def events(self, emitter: Optional[AddrLike] = None, topic: str = "", from_height: int = 0,
                     to_height: int = 0, limit: int = 0, cursor: str = "") -> Dict[str, Any]:
        return await self._run(_core.events(emitter, topic, from_height, to_height, limit, cursor))

    async def faucet(self, addr: AddrLike, value: int) -> Hash:
        return await self._run(_core.faucet(addr, value))

    # -- transactions ----------------------------------------------------
    async def submit(self, tx: Transaction) -> Hash:
        return await self._run(_core.submit(tx))

    async def submit_raw(self, raw: bytes) -> Hash:
        return await self._run(_core.submit_raw(raw))

    async def wait(self, h: Union[AddrLike, Transaction], timeout: float = 30.0, check: bool = True) -> Dict[str, Any]:
        return await self._run(_core.wait(h, timeout, check))

    async def estimate_fees(self, to: Optional[AddrLike], instruction: Optional[Instruction] = None,
                            expect_cycles: int = 0, expect_cells: int = 0, options: TxOptions = TxOptions()) -> FeeEstimate:
        payload = instruction.encode() if instruction is not None else b""
        return await self._run(_core.estimate_fees(None if to is None else Address(to), instruction, payload,
                                                   expect_cycles, expect_cells, options))

    async def build_tx(self, key: PrivateKey, to: Optional[AddrLike], value: int = 0, instruction: Optional[Instruction] = None,
                       expect_cycles: int = 0, expect_cells: int = 0, options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.build_tx(key, to, value, instruction, expect_cycles, expect_cells, options))

    async def send(self, key: PrivateKey, to: Optional[AddrLike], value: int = 0, instruction: Optional[Instruction] = None,
                   expect_cycles: int = 0, expect_cells: int = 0, options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.send(key, to, value, instruction, expect_cycles, expect_cells, options))

    async def transfer(self, key: PrivateKey, to: AddrLike, value: int, options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.transfer(key, to, value, options))

    # -- actors and libraries --------------------------------------------
    async def deploy(self, key: PrivateKey, code: Union[str, bytes], salt: Union[str, bytes] = b"", init_handler: str = "",
                     init_args: bytes = b"", requires: bytes = b"", value: int = 0,
                     options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.deploy(key, code, salt, init_handler, init_args, requires, value, options))

    async def call(self, key: PrivateKey, actor: AddrLike, handler: str, args: bytes = b"", value: int = 0,
                   options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.call(key, actor, handler, args, value, options))

    async def query(self, actor: AddrLike, handler: str, args: bytes = b"", caller: Optional[AddrLike] = None) -> Any:
        return await self._run(_core.query(actor, handler, args, caller))

    async def query_raw(self, actor: AddrLike, handler: str, args: bytes = b"",
                        caller: Optional[AddrLike] = None) -> Dict[str, Any]:
        return await self._run(_core.query_raw(actor, handler, args, caller))

    async def actor(self, addr: AddrLike) -> Dict[str, Any]:
        return await self._run(_core.actor(addr))

    async def actor_code(self, addr: AddrLike) -> bytes:
        return await self._run(_core.actor_code(addr))

    async def code(self, h: AddrLike) -> bytes:
        return await self._run(_core.code(h))

    async def actor_state(self, addr: AddrLike, key_text: str = "", cursor: str = "", limit: int = 0) -> Dict[str, Any]:
        return await self._run(_core.actor_state(addr, key_text, cursor, limit))

    async def publish_library(self, key: PrivateKey, name: str, code: Union[str, bytes],
                              options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.publish_library(key, name, code, options))

    async def remove_library(self, key: PrivateKey, name: str, options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.remove_library(key, name, options))

    async def libraries(self, publisher: AddrLike) -> List[Dict[str, Any]]:
        return await self._run(_core.libraries(publisher))

    # -- off-chain jobs, timers, storage ---------------------------------
    async def submit_job(self, key: PrivateKey, spec: Union[JobSpec, bytes], options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.submit_job(key, spec, options))

    async def job(self, job_id: AddrLike) -> Dict[str, Any]:
        return await self._run(_core.job(job_id))

    async def wait_job(self, job_id: AddrLike, statuses: Tuple[str, ...] = ("verified", "failed", "finalized"),
                       timeout: float = 60.0) -> Dict[str, Any]:
        return await self._run(_core.wait_job(job_id, statuses, timeout))

    async def runners(self, all: bool = False) -> List[Dict[str, Any]]:
        return await self._run(_core.runners(all))

    async def runner(self, addr: AddrLike) -> Dict[str, Any]:
        return await self._run(_core.runner(addr))

    async def offchain_params(self) -> Dict[str, Any]:
        return await self._run(_core.offchain_params())

    async def timers(self, owner: AddrLike) -> Dict[str, Any]:
        return await self._run(_core.timers(owner))

    async def timer(self, timer_id: AddrLike) -> Dict[str, Any]:
        return await self._run(_core.timer(timer_id))

    async def timer_stats(self) -> Dict[str, Any]:
        return await self._run(_core.timer_stats())

    async def volume(self, volume_id: AddrLike) -> Dict[str, Any]:
        return await self._run(_core.volume(volume_id))

    async def relays(self, all: bool = False) -> List[Dict[str, Any]]:
        return await self._run(_core.relays(all))

    # -- CIP-20 platform tokens (the Go sdk's CreateToken, TransferToken, ...) --
    async def token_create(self, key: PrivateKey, name: str, symbol: str, decimals: int = 18, cap: Optional[int] = None,
                     initial: Optional[int] = None, options: TxOptions = TxOptions()) -> Transaction:
        """Create a token (sender: its admin, receives ``initial``); the id is
        ``token_id(wait(tx))``. ``cap`` None or 0: uncapped."""
        return await self._run(_core.send_token(key, TokenCreate(name, symbol, decimals, cap, initial), options))

    async def token_transfer(self, key: PrivateKey, token: AddrLike, to: AddrLike, amount: int,
                       options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.send_token(key, TokenTransfer(Hash(token), Address(to), amount), options))

    async def token_transfer_from(self, key: PrivateKey, token: AddrLike, owner: AddrLike, to: AddrLike, amount: int,
                            options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.send_token(key, TokenTransferFrom(Hash(token), Address(owner), Address(to), amount),
                                                options))

    async def token_approve(self, key: PrivateKey, token: AddrLike, spender: AddrLike, amount: int,
                      options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.send_token(key, TokenApprove(Hash(token), Address(spender), amount), options))

    async def token_mint(self, key: PrivateKey, token: AddrLike, to: AddrLike, amount: int,
                   options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.send_token(key, TokenMint(Hash(token), Address(to), amount), options))

    async def token_burn(self, key: PrivateKey, token: AddrLike, amount: int, options: TxOptions = TxOptions()) -> Transaction:
        return await self._run(_core.send_token(key, TokenBurn(Hash(token), amount), options))

    async def tokens(self) -> List[Dict[str, Any]]:
        return await self._run(_core.tokens())

    async def token_info(self, token: AddrLike) -> Dict[str, Any]:
        """Metadata and supply: id, name, symbol, decimals, cap ("0": uncapped), supply, admin."""
        return await self._run(_core.token(token))

    async def token_balance(self, token: AddrLike, holder: AddrLike, spender: Optional[AddrLike] = None) -> Dict[str, Any]:
        """``holder``'s balance (an int) and, with ``spender``, its allowance."""
        return await self._run(_core.token_balance(token, holder, spender))

    # -- stream ----------------------------------------------------------
    async def subscribe(self, from_height: Optional[int] = None, reconnect: bool = True) -> AsyncIterator[Dict[str, Any]]:
        """Async iterator of blocks; resumes with Last-Event-ID (see Client.subscribe)."""
        if from_height is not None and from_height < 0:
            raise ValueError(f"from_height must be >= 0, got {from_height}")
        next_h = from_height if from_height is not None else int((await self.status())["height"]) + 1
        last_id: Optional[int] = None
        backoff = INITIAL_BACKOFF
        while True:
            headers = {"Accept": "text/event-stream"}
            path = "/v1/stream"
            if last_id is not None:
                headers["Last-Event-ID"] = str(last_id)
            else:
                path += f"?from={next_h}"
            writer = None
            try:
                writer, status, body = await asyncio.wait_for(self._open("GET", path, None, headers), self.timeout)
                if status != 200:
                    raise error_from_response(status, await body.read_all())
                backoff = INITIAL_BACKOFF
                p = SSEParser()
                buf = b""
                while True:
                    # Keep-alives arrive every 15 s; 60 s of silence is a dead connection.
                    data = await asyncio.wait_for(body.read_some(), 60)
                    if not data:
                        break
                    buf += data
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        ev = p.feed(line.decode("utf-8"))
                        if ev is None or ev.event != "block":
                            continue
                        b = ev.json()
                        h = int(b["header"]["height"])
                        if h < next_h:
                            continue
                        next_h, last_id = h + 1, h
                        yield b
            except (OSError, TransportError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
                if not reconnect:
                    raise TransportError(f"stream: {e}") from e
            finally:
                if writer is not None:
                    writer.close()
            if not reconnect:
                return
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)
