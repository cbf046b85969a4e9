# A price oracle backed by the off-chain compute market (CIP-2).
#
# request(url) submits an HTTP job to the Job Dispatcher with
# runtime.submit_job: a committee of 3 runners fetches the URL, the
# aggregator submits their signed results, and the Result Verifier accepts
# the value at /price that a majority agrees on. The escrow (max_price +
# tip) comes from this actor's balance, so deploy it with some CBY. The
# verified result (or the failure) arrives as on_result(res), sent by the
# Result Verifier (0x…03).
from cowboy_sdk import actor, runtime

RESULT_VERIFIER = bytes(19) + b"\x03"


def _host(url):
    rest = url.split("://", 1)[-1]
    host = rest.split("/", 1)[0].split("?", 1)[0].split("@")[-1]
    if host.startswith("["):
        return host[1:host.index("]")]
    return host.split(":")[0].lower()


@actor
class PriceOracle:
    def __init__(self, max_price=10**17, tip=0, runners=3, timeout_blocks=20):
        self.storage["cfg"] = [max_price, tip, runners, timeout_blocks]
        self.storage["pending"] = []
        self.storage["history"] = []
        self.storage["latest"] = None

    def request(self, url, domain=None):
        # Runners fetch only domains the job declares (and this actor's
        # manifest allows), so a job always names the URL's host.
        if domain is None:
            domain = _host(url)
        max_price, tip, runners, timeout = self.storage["cfg"]
        spec = {
            "job_type": 2,  # Http
            "input": url,
            "max_price": max_price,
            "tip": tip,
            "timeout_blocks": timeout,
            "handler": "on_result",
            "runners": runners,
            "mode": 3,  # MajorityVote
            "vote_field": "/price",
            "data_format": 3,  # JSON
            "max_return_bytes": 1024,
            "max_wall_time_ms": 5000,
            "expected_execution_ms": 1000,
            "max_memory_bytes": 64 * 1024 * 1024,
        }
        spec["required_domains"] = [domain]
        job_id = runtime.submit_job(spec)
        pending = self.storage["pending"]
        pending.append(job_id)
        self.storage["pending"] = pending
        return job_id

    def on_result(self, res):
        if runtime.caller() != RESULT_VERIFIER:
            raise ValueError("results come only from the Result Verifier")
        # Anyone may name this actor as a job's callback: accept only our own jobs.
        pending = self.storage["pending"]
        if res["job_id"] not in pending:
            raise ValueError("not a job of this oracle")
        pending.remove(res["job_id"])
        self.storage["pending"] = pending
        history = self.storage["history"]
        history.append([res["job_id"], res["status"], res["fail_reason"]])
        self.storage["history"] = history
        if res["status"] == "verified":
            self.storage["latest"] = res["result"].decode("utf-8")

    def latest(self):
        return self.storage["latest"]

    def pending(self):
        return self.storage["pending"]

    def history(self):
        return self.storage["history"]
