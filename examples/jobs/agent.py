# An agent that hires the off-chain compute market (CIP-2) for the three
# kinds of work runners do: an HTTP fetch, an LLM completion and an MCP tool
# call. Each ask_* submits a job with runtime.submit_job; a committee of 3
# runners executes it, the aggregator submits their signed results, and the
# Result Verifier accepts the value a majority agrees on at vote_field. The
# escrow (max_price + tip) comes from this actor's balance, so deploy it with
# some CBY. Verified results (or failures) arrive as on_result(res).
#
# Inputs are JSON text built by the caller (see docs/RUNNER.md for each
# executor's input format); results() lists [job_id, kind, status, result].
from cowboy_sdk import actor, runtime

RESULT_VERIFIER = bytes(19) + b"\x03"
HTTP, LLM, MCP = 2, 1, 3


@actor
class Agent:
    def __init__(self, max_price=10**17, runners=3, timeout_blocks=40):
        self.storage["cfg"] = [max_price, runners, timeout_blocks]
        self.storage["jobs"] = []

    def _submit(self, kind, label, job_input, vote_field, json_schema=None, domain=None, max_tokens=0):
        max_price, runners, timeout = self.storage["cfg"]
        spec = {
            "job_type": kind,
            "input": job_input,
            "max_price": max_price,
            "timeout_blocks": timeout,
            "handler": "on_result",
            "runners": runners,
            "mode": 3,  # MajorityVote over the JSON value at vote_field
            "vote_field": vote_field,
            "data_format": 3,  # JSON
            "max_return_bytes": 2048,
            "max_wall_time_ms": 10000,
            "expected_execution_ms": 2000,
            "max_memory_bytes": 16 * 1024 * 1024,
        }
        if json_schema is not None:
            spec["json_schema"] = json_schema
        if domain is not None:
            spec["required_domains"] = [domain]
        if max_tokens:
            spec["max_tokens"] = max_tokens
        job_id = runtime.submit_job(spec)
        jobs = self.storage["jobs"]
        jobs.append([job_id, label, "pending", None])
        self.storage["jobs"] = jobs
        return job_id

    def ask_http(self, job_input, vote_field, domain):
        return self._submit(HTTP, "http", job_input, vote_field, domain=domain)

    def ask_llm(self, job_input, vote_field, json_schema, max_tokens=256):
        return self._submit(LLM, "llm", job_input, vote_field, json_schema=json_schema, max_tokens=max_tokens)

    def ask_mcp(self, job_input, vote_field):
        return self._submit(MCP, "mcp", job_input, vote_field)

    def on_result(self, res):
        if runtime.caller() != RESULT_VERIFIER:
            raise ValueError("results come only from the Result Verifier")
        jobs = self.storage["jobs"]
        for j in jobs:
            if j[0] == res["job_id"]:
                j[2] = res["status"]
                if res["status"] == "verified":
                    j[3] = res["result"].decode("utf-8")
                else:
                    j[3] = "fail_reason %d" % res["fail_reason"]
                self.storage["jobs"] = jobs
                return
        raise ValueError("not a job of this agent")

    def results(self):
        return self.storage["jobs"]
