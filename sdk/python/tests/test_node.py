"""The sync client against a real ``cowboyd --dev``: transfers, fees,
receipts, proofs, errors, actors, libraries, timers, jobs and the SSE stream."""

from __future__ import annotations

import dataclasses
import http.client
import json
import os
from urllib.parse import urlsplit

import pytest

from cowboy import Client, PrivateKey, TxOptions, encode_args, encode_manifest
from cowboy import cbor, errors
from cowboy._core import created_address
from cowboy._core import job_id as submitted_job_id
from cowboy.instructions import JobSpec
from cowboy.proof import Proof, account_key, verify_account, verify_proof
from cowboy.types import Address, Hash, from_hex

from conftest import CBY, REPO

COUNTER = open(os.path.join(REPO, "examples", "counter", "counter.py"), "rb").read()
HEARTBEAT = open(os.path.join(REPO, "examples", "timers", "heartbeat.py"), "rb").read()


def test_status_and_fee_estimate(client: Client) -> None:
    st = client.status()
    assert st["chain_id"] > 0 and st["faucet"] is True
    f = client.fees()
    est = client.estimate_fees(Address(b"\x01" * 20))
    # A plain transfer: exactly the intrinsic cost; max fee 2 × basefee + 1.
    assert (est.cycles_limit, est.cells_limit) == (10_000, 0)
    assert est.max_fee_per_cycle == 2 * f["basefee_cycle"] + 1 and est.tip_per_cycle == 1


def test_transfer_wait_and_balances(client: Client, funded_key: PrivateKey) -> None:
    to = PrivateKey.generate().address
    before = client.balance(funded_key.address)
    t = client.transfer(funded_key, to, 3 * CBY)
    r = client.wait(t)
    assert r["status"] == "included" and r["receipt"]["status"] == "success"
    assert r["tx"]["hash"] == str(t.hash) and r["tx"]["from"] == str(funded_key.address)
    assert r["tx"]["raw"].removeprefix("0x") == t.encode().hex()
    assert client.balance(to) == 3 * CBY
    fee = int(r["receipt"]["fee_paid"])
    assert 0 < fee <= t.cycles_limit * t.max_fee_per_cycle
    assert client.balance(funded_key.address) == before - 3 * CBY - fee
    acc = client.account(funded_key.address)
    assert acc["nonce"] == 1 and acc["pending_nonce"] == 1


def test_verified_account_and_tampering(client: Client, funded_key: PrivateKey) -> None:
    a = client.verified_account(funded_key.address)
    assert a.balance == client.balance(funded_key.address) and a.nonce == 0 and a.code_hash is None
    # Absence is proven too.
    nobody = PrivateKey.generate().address
    assert client.verified_account(nobody).balance == 0
    p = client.proof(account_key(funded_key.address))
    root = from_hex(p["state_root"])
    verify_account(root, funded_key.address, p)
    with pytest.raises(errors.ProofError):
        verify_account(bytes(32), funded_key.address, p)
    value = from_hex(p["value"])
    with pytest.raises(errors.ProofError):  # a different balance does not verify
        verify_proof(root, account_key(funded_key.address), value[:-1] + bytes([value[-1] ^ 1]), Proof.from_json(p["proof"]))
    with pytest.raises(errors.ProofError):  # nor does claiming absence of a present key
        verify_proof(root, account_key(funded_key.address), None, Proof.from_json(p["proof"]))


def test_error_codes_map_to_exceptions(client: Client, funded_key: PrivateKey) -> None:
    with pytest.raises(errors.NotFoundError) as e:
        client.tx(Hash(b"\x07" * 32))
    assert e.value.code == "not_found" and e.value.status == 404
    with pytest.raises(errors.BadRequestError) as e2:
        client.get("/v1/accounts/0x1234")
    assert e2.value.code == "bad_address"
    t = client.transfer(funded_key, PrivateKey.generate().address, 1)
    client.wait(t)
    with pytest.raises(errors.APIError) as e3:  # resubmitting: already included or nonce used
        client.submit(t)
    assert e3.value.code in ("already_known", "nonce_too_low")
    stale = client.build_tx(funded_key, PrivateKey.generate().address, 1, options=TxOptions(nonce=0))
    with pytest.raises(errors.NonceError) as e4:
        client.submit(stale)
    assert e4.value.code == "nonce_too_low"
    poor = PrivateKey.generate()
    with pytest.raises(errors.InsufficientBalanceError):
        client.transfer(poor, funded_key.address, 1)
    wrong_chain = dataclasses.replace(client.build_tx(funded_key, poor.address, 1), signature=None)
    wrong_chain = dataclasses.replace(wrong_chain, chain_id=wrong_chain.chain_id + 1).sign(funded_key)
    with pytest.raises(errors.InvalidTransactionError) as e5:
        client.submit(wrong_chain)
    assert e5.value.code == "wrong_chain_id"
    with pytest.raises(errors.InvalidTransactionError) as e6:
        client.submit_raw(b"\x80")
    assert e6.value.code == "malformed_tx"


def test_actor_deploy_call_query(client: Client, funded_key: PrivateKey) -> None:
    t = client.deploy(funded_key, COUNTER, salt="py-counter")
    r = client.wait(t)
    actor = created_address(r)
    meta = client.actor(actor)
    assert meta["owner"] == str(funded_key.address)
    assert client.query(actor, "get") == 0
    r = client.wait(client.call(funded_key, actor, "increment", encode_args(5)))
    assert r["receipt"]["status"] == "success"
    assert client.query(actor, "get") == 5
    client.wait(client.call(funded_key, actor, "increment", encode_args(by=2)))
    assert client.query(actor, "get") == 7
    ev = [e for e in r["receipt"]["events"] if e["topic"] == "incremented"]
    assert ev and ev[0]["decoded"]["count"] == 5
    page = client.events(emitter=actor, topic="incremented")
    assert [e["decoded"]["count"] for e in page["events"]] == [5, 7]
    assert cbor.decode(from_hex(page["events"][0]["data"])) == {"by": 5, "count": 5}
    st = client.actor_state(actor, key_text="count")
    assert st["entries"][0]["decoded"] == 7
    # The slot, Merkle-proven against the head block's state root.
    slot = client.verified_storage(actor, from_hex(st["entries"][0]["key"]))
    assert slot is not None and cbor.decode(slot) == 7
    assert client.verified_storage(actor, b"no-such-key") is None
    assert b"class Counter" in client.actor_code(actor)
    # A failing handler fails the receipt; wait(check=True) raises.
    with pytest.raises(errors.TransactionFailedError) as e:
        client.wait(client.call(funded_key, actor, "increment", encode_args(-1)))
    assert "increment must be positive" in str(e.value)
    with pytest.raises(errors.QueryFailedError):
        client.query(actor, "increment", encode_args(-1))
    with pytest.raises(errors.InvalidCodeError):
        client.deploy(funded_key, b"import os\n", salt="bad")


def test_library_publish(client: Client, funded_key: PrivateKey) -> None:
    code = b"def double(x):\n    return 2 * x\n"
    r = client.wait(client.publish_library(funded_key, "pylib", code))
    assert r["receipt"]["status"] == "success"
    libs = client.libraries(funded_key.address)
    assert [lib["name"] for lib in libs] == ["pylib"]
    assert client.code(libs[0]["code_hash"]) == code
    client.wait(client.remove_library(funded_key, "pylib"))
    assert client.libraries(funded_key.address) == []


def test_timers_api(client: Client, funded_key: PrivateKey) -> None:
    r = client.wait(client.deploy(funded_key, HEARTBEAT, salt="py-hb", init_args=encode_args(every=50),
                                  requires=encode_manifest(["timers"]), value=CBY))
    hb = created_address(r)
    assert client.actor(hb)["requires"][0]["entitlement"] == "timers"
    client.wait(client.call(funded_key, hb, "start"))
    tl = client.timers(hb)
    assert len(tl["timers"]) == 1
    tid = tl["timers"][0]["id"]
    assert client.timer(tid)["owner"] == str(hb)
    assert client.timer_stats()["depth"] >= 1
    client.wait(client.call(funded_key, hb, "stop"))
    with pytest.raises(errors.NotFoundError):
        client.timer(tid)


def test_job_submit_and_status(client: Client, funded_key: PrivateKey) -> None:
    spec = JobSpec(job_type=1, callback_actor=funded_key.address, callback_handler="on_result", max_price=CBY // 10,
                   timeout_blocks=20, max_tokens=64, max_wall_time_ms=5000, max_memory_bytes=16 << 20, max_return_bytes=1024, data_format=2,
                   input=json.dumps({"prompt": "hi"}).encode())
    before = client.balance(funded_key.address)
    r = client.wait(client.submit_job(funded_key, spec))
    job_id = submitted_job_id(r)
    j = client.job(job_id)
    assert j["id"] == str(job_id) and j["job_type"] == "llm"
    assert j["status"] in ("pending", "assigned", "failed")
    assert client.wait_job(job_id, statuses=("pending", "assigned", "failed"), timeout=5)["id"] == str(job_id)
    with pytest.raises(errors.TimeoutError):
        client.wait_job(job_id, statuses=("verified",), timeout=0.5)
    assert before - client.balance(funded_key.address) >= spec.escrow or j["status"] == "failed"


def test_subscribe_resumes_without_gaps(client: Client) -> None:
    start = max(3, client.status()["height"])
    got = []
    for b in client.subscribe(from_height=start - 2):
        got.append(b["header"]["height"])
        assert b["header"]["height"] == start - 2 + len(got) - 1 and "tx_hashes" in b
        if len(got) == 4:
            break
    assert got == list(range(start - 2, start + 2))
    # Resume with Last-Event-ID: the node continues right after it.
    u = urlsplit(client.url)
    conn = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port, timeout=10)
    conn.request("GET", "/v1/stream", headers={"Last-Event-ID": str(got[-1]), "Accept": "text/event-stream"})
    resp = conn.getresponse()
    while True:
        line = resp.readline().decode()
        if line.startswith("id:"):
            assert int(line[3:]) == got[-1] + 1
            break
    conn.close()
