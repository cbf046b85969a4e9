"""Fixtures: the repository's Go binaries, a real ``cowboyd --dev`` node on a
free loopback port with a temporary home (stopped in teardown), funded
keys, and the Go interop vector generator."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Callable, Dict, Iterator, List

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SDK = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(SDK))
sys.path.insert(0, SDK)

from cowboy import Client, PrivateKey  # noqa: E402

CBY = 10**18


def bin_dir() -> str:
    return os.environ.get("COWBOY_BIN_DIR", os.path.join(REPO, "bin"))


def binary(name: str) -> str:
    p = os.path.join(bin_dir(), name)
    if not os.access(p, os.X_OK):
        pytest.fail(f"{p} is missing: run `make build` first (or set COWBOY_BIN_DIR)")
    return p


def wait_until(ok: Callable[[], bool], what: Callable[[], str], timeout: float = 60) -> None:
    """Polls ok every 250 ms; fails the test with what() after timeout seconds."""
    deadline = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > deadline:
            pytest.fail(what())
        time.sleep(0.25)


def stop_all(procs: List[subprocess.Popen]) -> None:
    """Terminates the daemons a test started, killing any still running after 10 s."""
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, proc: subprocess.Popen, log: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            with open(log) as f:
                raise RuntimeError(f"cowboyd exited with {proc.returncode}:\n{f.read()[-4000:]}")
        try:
            with urllib.request.urlopen(url + "/v1/status", timeout=2) as r:
                if json.load(r)["height"] >= 1:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"cowboyd did not serve {url} within {timeout}s")


@pytest.fixture(scope="session")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a fresh ``cowboyd --dev`` (200 ms blocks)."""
    home = tmp_path_factory.mktemp("cowboyd")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = str(home) + ".log"
    with open(log, "w") as lf:
        proc = subprocess.Popen([binary("cowboyd"), "--dev", "--home", str(home), "--rpc", f"127.0.0.1:{port}",
                                 "--block-interval", "200ms", "--log-level", "warn"], stdout=lf, stderr=subprocess.STDOUT)
    try:
        _wait_http(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def client(node: str) -> Client:
    return Client(node)


def fund(c: Client, key: PrivateKey, cby: int = 1000) -> None:
    c.wait(c.faucet(key.address, cby * CBY))


@pytest.fixture()
def funded_key(client: Client) -> PrivateKey:
    k = PrivateKey.generate()
    fund(client, k)
    return k


@pytest.fixture(scope="session")
def govectors(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Path of the built Go vector tool (sdk/python/tools/govectors)."""
    go = shutil.which("go")
    if go is None:
        pytest.fail("go is not on PATH: the interop tests need the Go toolchain")
    out = str(tmp_path_factory.mktemp("govectors") / "govectors")
    subprocess.run([go, "build", "-o", out, "./sdk/python/tools/govectors"], cwd=REPO, check=True)
    return out


@pytest.fixture(scope="session")
def vectors(govectors: str) -> Dict[str, list]:
    out = subprocess.run([govectors, "-mode", "vectors", "-seed", "20", "-n", "60"], check=True, capture_output=True)
    return json.loads(out.stdout)


def cli(home: str, node_url: str, *args: str, password: str = "pw", stdin: str = "") -> str:
    """Run the Go ``cowboy`` CLI; returns stdout, raises with stderr on failure."""
    env = dict(os.environ, COWBOY_PASSWORD=password)
    p = subprocess.run([binary("cowboy"), "--node", node_url, "--home", home, *args], env=env, input=stdin,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"cowboy {' '.join(args)} failed ({p.returncode}):\n{p.stderr}{p.stdout}")
    return p.stdout
