#!/usr/bin/env python3
"""An agent written with cowboy-py: it deploys an actor, has it post an LLM
job to the off-chain compute market (CIP-2), follows the job through
assignment, commitments, reveal and verification over the node's SSE block
stream, and reads the verified result that the Result Verifier delivered to
the actor's callback.

The actor is examples/jobs/agent.py (its manifest allows LLM jobs). The job
asks for a JSON answer {"sentiment": …} checked against a JSON Schema and
accepted by MajorityVote of a committee of 3 runners over /sentiment.

What must run (nothing is started here):

    bin/cowboyd --dev &                                      # the devnet (faucet on)
    bin/cowboy-runner llm-standin --listen 127.0.0.1:8600 &  # OpenAI-compatible stand-in
    cat > /tmp/llm.toml <<'TOML'
    [[executors.llm.models]]
    name = "cowboy-local-standin"
    base_url = "http://127.0.0.1:8600/v1"
    TOML
    for r in 1 2 3; do                                       # three LLM runners
      COWBOY_PASSWORD= bin/cowboy-runner init --home /tmp/r$r --stake 10 --job-types llm \\
          --listen 127.0.0.1:0 --metrics 127.0.0.1:0 --light-kdf --append /tmp/llm.toml | tee /tmp/r$r.init
      bin/cowboy faucet $(awk '/^account/ {print $2}' /tmp/r$r.init) --value 20
      COWBOY_PASSWORD= bin/cowboy-runner run --home /tmp/r$r > /tmp/r$r.log 2>&1 &
    done
    pip install ./sdk/python
    python3 examples/python/agent.py

With a real model, point base_url at any OpenAI-compatible endpoint and set
COWBOY_LLM_MODEL to its model name. Environment: COWBOY_NODE (default
http://127.0.0.1:8545); COWBOY_KEY (hex private key; default: a fresh key
funded from the devnet faucet).
"""

from __future__ import annotations

import json
import os
import sys
import time

from cowboy import Client, PrivateKey, encode_args, encode_manifest
from cowboy._core import created_address
from cowboy.errors import CowboyError

CBY = 10**18
HERE = os.path.dirname(os.path.abspath(__file__))
ACTOR = os.path.join(HERE, "..", "jobs", "agent.py")
MANIFEST = os.path.join(HERE, "..", "jobs", "agent.manifest.json")
SCHEMA = {"type": "object", "properties": {"sentiment": {"type": "string", "enum": ["positive", "negative", "neutral"]}},
          "required": ["sentiment"], "additionalProperties": False}


def main() -> int:
    c = Client(os.environ.get("COWBOY_NODE", "http://127.0.0.1:8545"))
    st = c.status()
    print(f"node {c.url}: chain {st['chain_id']}, height {st['height']}")

    if os.environ.get("COWBOY_KEY"):
        key = PrivateKey(os.environ["COWBOY_KEY"])
    else:
        key = PrivateKey.generate()
        c.wait(c.faucet(key.address, 50 * CBY))
    print(f"agent account {key.address}: {c.balance(key.address) / CBY:g} CBY")

    healthy = [r for r in c.runners() if r.get("healthy")]
    print(f"{len(healthy)} healthy runners")
    if len(healthy) < 3:
        print("need 3 healthy LLM runners: see this file's docstring", file=sys.stderr)
        return 2

    # 1. Deploy the actor with its manifest; 1 CBY pays for its job escrow.
    with open(ACTOR, "rb") as f:
        code = f.read()
    with open(MANIFEST) as f:
        manifest = encode_manifest(json.load(f)["requires"])
    r = c.wait(c.deploy(key, code, salt=os.urandom(8), init_args=encode_args(max_price=CBY // 10, runners=3,
                                                                             timeout_blocks=60), requires=manifest,
                        value=CBY))
    actor = created_address(r)
    print(f"deployed agent actor {actor} (tx {r['tx']['hash']}, fee {int(r['receipt']['fee_paid']) / CBY:g} CBY)")

    # 2. The actor posts the LLM job (runtime.submit_job inside ask_llm).
    model = os.environ.get("COWBOY_LLM_MODEL", "cowboy-local-standin")
    job_input = json.dumps({"model": model, "prompt": "Sentiment of: I love this chain", "temperature": 0, "seed": 7})
    r = c.wait(c.call(key, actor, "ask_llm", encode_args(job_input, "/sentiment", json.dumps(SCHEMA), 256)))
    job_id = "0x" + c.query(actor, "results")[-1][0].hex()
    start = r["block_height"]
    print(f"job {job_id} submitted in block {start}")

    # 3. Follow the job over the SSE block stream: the Job Dispatcher (0x…02)
    # and Result Verifier (0x…03) emit an event at every step, and the
    # callback to the actor arrives as a receipt after the block's transactions.
    called_back = settled = delivered = False
    deadline = time.monotonic() + 120
    for block in c.subscribe(from_height=start):
        height = block["header"]["height"]
        for rc in block.get("receipts") or []:
            for ev in rc.get("events") or []:
                d = ev.get("decoded")
                if not isinstance(d, dict) or d.get("job_id") != job_id:
                    continue
                print(f"  block {height}: {ev['topic']}{_detail(ev['topic'], d)}")
                called_back |= ev["topic"] == "JobCallback"
                settled |= ev["topic"] == "JobSettled"
        if called_back and not delivered:
            for jid, label, status, result in c.query(actor, "results"):
                if "0x" + jid.hex() == job_id:
                    print(f"callback delivered: {label} job {status}: {result}")
                    if status != "verified":
                        return 1
                    delivered = True
            if delivered and not settled:
                print("  (waiting for the challenge window to close and the payout)")
        if delivered and (settled or os.environ.get("COWBOY_AGENT_NO_SETTLE")):
            j = c.job(job_id)
            print(f"job {j['status']}; committee {', '.join(j.get('committee') or [])}")
            return 0
        if time.monotonic() > deadline:
            print(f"job not settled within 120 s: {c.job(job_id)['status']}", file=sys.stderr)
            return 1
    return 1


def _detail(topic: str, d: dict) -> str:
    if topic == "JobAssigned":
        return f" committee {', '.join(d.get('runners') or [])}, aggregator {d.get('aggregator')}"
    if topic == "JobCommitted":
        return f" by {d.get('runner')}"
    if topic == "JobVerified":
        return f" agreed {len(d.get('agreed') or [])}"
    if topic == "JobSettled":
        return f" payment {int(d.get('payment', 0)) / CBY:g} CBY, refund {int(d.get('refund', 0)) / CBY:g} CBY"
    if topic == "JobSubmitted":
        return f" escrow {int(d.get('escrow', 0)) / CBY:g} CBY, {d.get('candidates')} candidates"
    return ""

if __name__ == "__main__":
    try:
        sys.exit(main())
    except CowboyError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
