"""The clients' stream resume: a loopback TCP proxy in front of the node
cuts the first stream after two blocks; both clients must reconnect with
``Last-Event-ID`` and deliver every block exactly once."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import List
from urllib.parse import urlsplit

from cowboy import AsyncClient, Client


class CuttingProxy:
    """Forwards to the node; the first connection is dropped after two whole
    ``event: block`` frames (mid-chunk). Records each request's head."""

    def __init__(self, node_url: str) -> None:
        u = urlsplit(node_url)
        self.target = (u.hostname or "127.0.0.1", u.port or 80)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.requests: List[bytes] = []
        self.conns = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns += 1
            threading.Thread(target=self._serve, args=(c, self.conns == 1), daemon=True).start()

    def _serve(self, c: socket.socket, cut: bool) -> None:
        up = socket.create_connection(self.target)
        seen = 0
        try:
            head = b""
            while b"\r\n\r\n" not in head:
                d = c.recv(65536)
                if not d:
                    break
                head += d
            self.requests.append(head)
            up.sendall(head)
            while True:
                d = up.recv(65536)
                if not d:
                    break
                if cut:
                    # Drop the connection right before the third block frame.
                    pos = -1
                    while seen < 3:
                        pos = d.find(b"event: block", pos + 1)
                        if pos < 0:
                            break
                        seen += 1
                    if seen >= 3:
                        c.sendall(d[:pos])
                        break
                c.sendall(d)
        except OSError:
            pass  # the client closed its end (it stops after five blocks)
        finally:
            c.close()
            up.close()

    def close(self) -> None:
        self.sock.close()


def test_sync_subscribe_resumes(client: Client) -> None:
    p = CuttingProxy(client.url)
    try:
        start = max(1, client.status()["height"] - 3)
        got = []
        for b in Client(p.url).subscribe(from_height=start):
            got.append(b["header"]["height"])
            if len(got) == 5:
                break
        assert got == list(range(start, start + 5))
        assert p.conns >= 2
        resumed = [r for r in p.requests if b"Last-Event-ID" in r]
        assert resumed and b"Last-Event-ID: %d" % got[1] in resumed[0]
    finally:
        p.close()


def test_async_subscribe_resumes(client: Client) -> None:
    p = CuttingProxy(client.url)

    async def main() -> List[int]:
        got: List[int] = []
        async for b in AsyncClient(p.url).subscribe(from_height=start):
            got.append(b["header"]["height"])
            if len(got) == 5:
                break
        return got

    try:
        start = max(1, client.status()["height"] - 3)
        got = asyncio.run(asyncio.wait_for(main(), 30))
        assert got == list(range(start, start + 5))
        resumed = [r for r in p.requests if b"Last-Event-ID" in r]
        assert resumed and b"Last-Event-ID: %d" % got[1] in resumed[0]
    finally:
        p.close()
