"""examples/python/agent.py end to end: three real runner daemons serving LLM
jobs through ``cowboy-runner llm-standin`` (the local OpenAI-compatible
stand-in), the agent deploys its actor, posts the job and reads the
verified callback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Iterator, List

import pytest

from cowboy import Client

from conftest import CBY, REPO, SDK, binary, free_port, stop_all, wait_until


@pytest.fixture(scope="module")
def llm_runners(node: str, client: Client, tmp_path_factory: pytest.TempPathFactory) -> Iterator[List[str]]:
    procs: List[subprocess.Popen] = []
    base = tmp_path_factory.mktemp("llm")
    env = dict(os.environ, COWBOY_PASSWORD="")
    try:
        port = free_port()
        procs.append(subprocess.Popen([binary("cowboy-runner"), "llm-standin", "--listen", f"127.0.0.1:{port}"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        toml = base / "llm.toml"
        toml.write_text(f'[[executors.llm.models]]\nname = "cowboy-local-standin"\nbase_url = "http://127.0.0.1:{port}/v1"\n')
        addrs = []
        for i in range(3):
            home = str(base / f"r{i}")
            out = subprocess.run([binary("cowboy-runner"), "init", "--home", home, "--node", node, "--stake", "10",
                                  "--job-types", "llm", "--listen", f"127.0.0.1:{free_port()}", "--metrics", "127.0.0.1:0",
                                  "--light-kdf", "--append", str(toml)], env=env, capture_output=True, text=True, check=True).stdout
            addr = re.search(r"account\s+(0x[0-9a-fA-F]{40})", out).group(1)  # type: ignore[union-attr]
            client.wait(client.faucet(addr, 100 * CBY))
            log = open(home + ".log", "w")
            procs.append(subprocess.Popen([binary("cowboy-runner"), "run", "--home", home, "--grace", "2s"], env=env,
                                          stdout=log, stderr=subprocess.STDOUT))
            addrs.append(addr.lower())
        wait_until(lambda: sum(1 for r in client.runners() if r["address"].lower() in addrs and r.get("healthy")) >= 3,
                   lambda: f"runners not healthy: {json.dumps(client.runners())[:2000]}")
        yield addrs
    finally:
        stop_all(procs)


def test_agent_example_end_to_end(llm_runners: List[str], node: str) -> None:
    env = dict(os.environ, COWBOY_NODE=node, PYTHONPATH=SDK)
    p = subprocess.run([sys.executable, os.path.join(REPO, "examples", "python", "agent.py")], env=env,
                       capture_output=True, text=True, timeout=180)
    print(p.stdout)
    assert p.returncode == 0, p.stdout + p.stderr
    assert 'callback delivered: llm job verified: {"sentiment":"positive"}' in p.stdout, p.stdout
    assert re.search(r"job 0x[0-9a-f]{64} submitted", p.stdout)
    for step in ("JobAssigned", "JobCommitted", "JobVerified", "JobCallback", "JobSettled"):
        assert f": {step}" in p.stdout, step
    assert "job finalized" in p.stdout
