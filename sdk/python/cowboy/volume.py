"""CBFS volumes through the Go ``cowboy`` binary.

Why not a native client: a CBFS client speaks QUIC to the relays, encrypts
(AES-256-GCM), erasure-codes with Reed-Solomon, checks every shard against
the manifest Merkle root anchored on chain and presents capability tokens.
A Python copy would be a second implementation of a security-critical
protocol that must stay bit-compatible with the relays; the Go binary is
the one implementation, tested with the relays. This wrapper runs
``cowboy volume …`` with the keystore under ``home`` and maps failures to
:class:`VolumeError` (with the CLI's message).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from .errors import CowboyError

__all__ = ["Volumes", "AsyncVolumes", "VolumeError", "find_cowboy_binary"]

_CREATED = re.compile(r"Volume \S+ created: ([0-9a-f]{64})")


class VolumeError(CowboyError):
    """A ``cowboy volume`` command failed; ``stderr`` has the CLI's message."""

    def __init__(self, args: Sequence[str], code: int, stderr: str) -> None:
        super().__init__(f"cowboy {' '.join(args)}: exit {code}: {stderr.strip()}")
        self.returncode = code
        self.stderr = stderr


def find_cowboy_binary(explicit: Optional[str] = None) -> str:
    """``explicit``, else $COWBOY_BIN, else ``cowboy`` on PATH."""
    for c in (explicit, os.environ.get("COWBOY_BIN"), shutil.which("cowboy")):
        if c and os.access(c, os.X_OK):
            return c
    raise CowboyError("the Go cowboy binary was not found: pass binary=, set COWBOY_BIN or put cowboy on PATH")


@dataclass
class _Base:
    node_url: str
    home: str
    password: str = ""
    key_name: str = ""
    binary: Optional[str] = None

    def _argv(self, args: Sequence[str]) -> List[str]:
        argv = [find_cowboy_binary(self.binary), "--node", self.node_url, "--home", self.home, *args]
        if self.key_name and args and args[0] == "volume":
            argv += ["--from", self.key_name]
        return argv

    def _env(self) -> Dict[str, str]:
        env = dict(os.environ)
        env["COWBOY_PASSWORD"] = self.password
        return env


class Volumes(_Base):
    """Blocking volume operations as key ``key_name`` of the keystore in ``home``."""

    def _run(self, *args: str, timeout: float = 600) -> str:
        p = subprocess.run(self._argv(args), env=self._env(), capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            raise VolumeError(args, p.returncode, p.stderr or p.stdout)
        return p.stdout

    def create(self, name: str, k: int = 4, m: int = 2) -> str:
        """Create a volume; returns its id (hex)."""
        out = self._run("volume", "create", name, "--k", str(k), "--m", str(m))
        mt = _CREATED.search(out)
        if not mt:
            raise VolumeError(("volume", "create"), 0, f"unexpected output: {out!r}")
        return mt.group(1)

    def put(self, volume: str, local: str, remote: Optional[str] = None) -> None:
        """Upload a local file (atomically replaces ``remote``)."""
        self._run("volume", "put", volume, local, *([remote] if remote else []))

    def get(self, volume: str, remote: str, local: str) -> None:
        """Download ``remote`` into ``local`` (written to a temp file, then renamed)."""
        self._run("volume", "get", volume, remote, local)

    def read(self, volume: str, remote: str) -> bytes:
        """Download ``remote`` and return its bytes."""
        p = subprocess.run(self._argv(("volume", "get", volume, remote, "-")), env=self._env(), capture_output=True, timeout=600)
        if p.returncode != 0:
            raise VolumeError(("volume", "get", volume, remote, "-"), p.returncode, p.stderr.decode("utf-8", "replace"))
        return p.stdout

    def ls(self, volume: str, prefix: str = "") -> Any:
        return json.loads(self._run("volume", "ls", volume, *([prefix] if prefix else []), "--json"))

    def rm(self, volume: str, path: str) -> None:
        self._run("volume", "rm", volume, path)


class AsyncVolumes(_Base):
    """The same operations as :class:`Volumes` for asyncio (subprocesses run
    under the event loop, which is never blocked)."""

    async def _run(self, *args: str, stdout_bytes: bool = False) -> Any:
        p = await asyncio.create_subprocess_exec(*self._argv(args), env=self._env(),
                                                 stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await p.communicate()
        if p.returncode != 0:
            raise VolumeError(args, p.returncode or 1, err.decode("utf-8", "replace"))
        return out if stdout_bytes else out.decode()

    async def create(self, name: str, k: int = 4, m: int = 2) -> str:
        out = await self._run("volume", "create", name, "--k", str(k), "--m", str(m))
        mt = _CREATED.search(out)
        if not mt:
            raise VolumeError(("volume", "create"), 0, f"unexpected output: {out!r}")
        return mt.group(1)

    async def put(self, volume: str, local: str, remote: Optional[str] = None) -> None:
        await self._run("volume", "put", volume, local, *([remote] if remote else []))

    async def get(self, volume: str, remote: str, local: str) -> None:
        await self._run("volume", "get", volume, remote, local)

    async def read(self, volume: str, remote: str) -> bytes:
        out: bytes = await self._run("volume", "get", volume, remote, "-", stdout_bytes=True)
        return out

    async def ls(self, volume: str, prefix: str = "") -> Any:
        return json.loads(await self._run("volume", "ls", volume, *([prefix] if prefix else []), "--json"))
