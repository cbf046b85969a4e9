"""Price watcher: off-chain jobs as message-passing continuations.

Spec 002 "Message-Passing Continuation Model": a job's result arrives as a
separate message in a later block, so the actor

  - captures the context the continuation needs in the request (here the
    asset and the threshold the caller asked about) instead of relying on
    state that may change meanwhile;
  - matches responses to requests by correlation id (the job id that
    runner.submit_job returns); several requests may be in flight and their
    results may arrive in any order;
  - schedules a timeout timer with every request and cancels it when the
    response arrives (runner.submit_job(timeout_blocks=…, on_timeout=…)
    does both), so a job that never completes does not leave the actor
    waiting forever. A result arriving after the timeout is dropped.

watch(asset, url, threshold) asks a committee of 3 runners for the JSON at
url and accepts the "/price" a majority agrees on. on_price records whether
the price crossed the threshold; on_timeout records the give-up. The escrow
(max_price + tip) and the timer fees come from this actor's balance: deploy
it with some CBY.
"""

import json

from cowboy_sdk import actor, runner, runtime


@actor
class PriceWatcher:
    def __init__(self, max_price=10**17, runners=3, job_timeout_blocks=20, give_up_blocks=60):
        self.storage["cfg"] = [max_price, runners, job_timeout_blocks, give_up_blocks]
        self.storage["alerts"] = []
        self.storage["log"] = []

    def watch(self, asset, url, threshold):
        """Ask for the price of asset; returns the job (correlation) id."""
        max_price, runners, job_timeout, give_up = self.storage["cfg"]
        spec = {
            "job_type": 2,  # Http
            "input": url,
            "max_price": max_price,
            "timeout_blocks": job_timeout,
            "runners": runners,
            "mode": 3,  # MajorityVote
            "vote_field": "/price",
            "data_format": 3,  # JSON
            "max_return_bytes": 1024,
            "max_wall_time_ms": 5000,
            "expected_execution_ms": 1000,
            "max_memory_bytes": 64 * 1024 * 1024,
        }
        return runner.submit_job(spec, self.on_price, context={"asset": asset, "threshold": threshold},
                                 timeout_blocks=give_up, on_timeout=self.on_timeout)

    @runner.continuation
    def on_price(self, res, ctx):
        """The job's outcome, in a later block than watch()."""
        if res["status"] != "verified":
            self._log(ctx["asset"], "failed", res["fail_reason"])
            return
        price = json.loads(res["result"].decode("utf-8"))["price"]
        self._log(ctx["asset"], "price", price)
        if price >= ctx["threshold"]:
            alerts = self.storage["alerts"]
            alerts.append([ctx["asset"], price])
            self.storage["alerts"] = alerts

    @runner.timeout
    def on_timeout(self, job_id, ctx):
        """No result within give_up_blocks: stop waiting for it."""
        self._log(ctx["asset"], "timeout", job_id)

    def _log(self, asset, what, value):
        log = self.storage["log"]
        log.append([asset, what, value, runtime.block_info()["height"]])
        self.storage["log"] = log

    def alerts(self):
        return self.storage["alerts"]

    def log(self):
        return self.storage["log"]

    def waiting(self, job_id):
        return runner.pending(job_id)
