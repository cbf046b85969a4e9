"""Volume put/get through the Go ``cowboy`` binary against three real relay
daemons (QUIC on loopback) registered on the test node."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from typing import Iterator, List

import pytest

from cowboy import Client, KeyStore, PrivateKey
from cowboy.volume import AsyncVolumes, Volumes, VolumeError

from conftest import CBY, binary, fund, stop_all, wait_until


@pytest.fixture(scope="module")
def relays(node: str, client: Client, tmp_path_factory: pytest.TempPathFactory) -> Iterator[List[str]]:
    procs, ids = [], []
    try:
        for i in range(3):
            home = str(tmp_path_factory.mktemp(f"relay{i}"))
            subprocess.run([binary("cowboy-relay"), "init", "--home", home, "--listen", "127.0.0.1:0"], check=True,
                           capture_output=True)
            st = json.loads(subprocess.run([binary("cowboy-relay"), "status", "--home", home, "--json"], check=True,
                                           capture_output=True, text=True).stdout)
            client.wait(client.faucet(st["id"], 200 * CBY))
            log = open(home + ".log", "w")
            procs.append(subprocess.Popen([binary("cowboy-relay"), "run", "--home", home, "--node", node, "--stake", "100",
                                           "--heartbeat", "1s", "--log-level", "warn"], stdout=log, stderr=subprocess.STDOUT))
            ids.append(st["id"])
        wait_until(lambda: sum(1 for r in client.relays() if r["healthy"]) >= 3, lambda: f"relays not healthy: {client.relays()}")
        yield ids
    finally:
        stop_all(procs)


def test_volume_put_get(relays: List[str], node: str, client: Client, tmp_path) -> None:
    home = str(tmp_path / "home")
    k = PrivateKey.generate()
    KeyStore.for_home(home).import_key("owner", k, "pw", light=True)
    fund(client, k, 100)
    v = Volumes(node_url=node, home=home, password="pw", key_name="owner", binary=binary("cowboy"))
    vid = v.create("pyvol", k=2, m=1)
    assert client.volume(vid)["owner"] == str(k.address)
    data = os.urandom(300_000)
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    v.put("pyvol", str(src), "dir/data.bin")
    out = tmp_path / "out.bin"
    v.get("pyvol", "dir/data.bin", str(out))
    assert out.read_bytes() == data
    assert v.read("pyvol", "dir/data.bin") == data
    assert client.volume(vid)["version"] >= 1
    av = AsyncVolumes(node_url=node, home=home, password="pw", key_name="owner", binary=binary("cowboy"))
    assert asyncio.run(av.read("pyvol", "dir/data.bin")) == data
    with pytest.raises(VolumeError) as e:
        v.get("pyvol", "missing.bin", str(tmp_path / "x"))
    assert e.value.returncode != 0 and not (tmp_path / "x").exists()
    with pytest.raises(VolumeError):  # wrong password: the CLI cannot unlock the key
        Volumes(node_url=node, home=home, password="bad", key_name="owner", binary=binary("cowboy")).put("pyvol", str(src))
