package execution_test

import (
	"os"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

func decodeReturn(r *types.Receipt, v any) error { return codec.Unmarshal(r.Return, v) }

// TestContinuationExample runs examples/jobs/continuation.py: a result
// reaches the @runner.continuation in a later block with the captured
// context and cancels the timeout timer; a job that never completes hits
// the @runner.timeout handler and its late failure is dropped.
func TestContinuationExample(t *testing.T) {
	src, err := os.ReadFile("../../examples/jobs/continuation.py")
	if err != nil {
		t.Fatal(err)
	}
	alice, _ := crypto.GenerateKey()
	c, runners := newJobChain(t, 3, alice)
	rmap := byAddr(runners)
	url := "https://api.example.com/btc"

	// give_up_blocks 30: the result comes first.
	w := deployValue(c, alice, string(src), "w1", genesis.CBY(50), cborArgs([]any{genesis.CBY(1), 3, 5, 30}))
	rs := c.ok(c.tx(alice, &w, &types.Call{Handler: "watch", Args: cborArgs([]any{"btc", url, 40})}, 0))
	var id types.Hash
	{
		var raw []byte
		if err := decodeReturn(rs[0], &raw); err != nil {
			t.Fatal(err)
		}
		id, _ = types.BytesToHash(raw)
	}
	if c.query(w, "waiting", []any{id[:]}) != true {
		t.Fatal("job not pending after watch")
	}
	reveals := map[types.Address]verify.Reveal{}
	for _, a := range readJob(t, c, id).Runners {
		reveals[a] = rmap[a].reveal(id, `{"price": 42}`)
	}
	runToVerified(t, c, id, rmap, reveals)
	if got := c.query(w, "alerts", nil).([]any); len(got) != 0 {
		t.Fatalf("continuation ran in the verifying block: %v", got)
	}
	verifiedAt := c.head().Height
	rs = c.ok()
	if len(rs) != 1 || !hasEvent(rs[0], types.ResultVerifierAddress, "JobCallback") || !hasEvent(rs[0], types.TimerEscrowAddress, execution.TopicTimerCancelled) {
		t.Fatalf("callback receipt %+v", rs)
	}
	alerts := c.query(w, "alerts", nil).([]any)
	if len(alerts) != 1 || alerts[0].([]any)[0] != "btc" || alerts[0].([]any)[1] != uint64(42) {
		t.Fatalf("alerts %v", alerts)
	}
	log := c.query(w, "log", nil).([]any)
	if len(log) != 1 || log[0].([]any)[1] != "price" || log[0].([]any)[3] != verifiedAt+1 {
		t.Fatalf("log %v", log)
	}
	if c.query(w, "waiting", []any{id[:]}) != false {
		t.Fatal("job still pending after its result")
	}

	// give_up_blocks 3: nobody commits, the timer fires first.
	w2 := deployValue(c, alice, string(src), "w2", genesis.CBY(50), cborArgs([]any{genesis.CBY(1), 3, 5, 3}))
	rs = c.ok(c.tx(alice, &w2, &types.Call{Handler: "watch", Args: cborArgs([]any{"eth", url, 1})}, 0))
	var raw []byte
	if err := decodeReturn(rs[0], &raw); err != nil {
		t.Fatal(err)
	}
	id2, _ := types.BytesToHash(raw)
	dropped := false
	for !readJob(t, c, id2).State.Terminal() || !dropped {
		for _, r := range c.ok() {
			dropped = dropped || hasEvent(r, w2, "RunnerResultDropped")
		}
		if c.head().Height > 200 {
			t.Fatal("job never ended")
		}
	}
	log = c.query(w2, "log", nil).([]any)
	if len(log) != 1 || log[0].([]any)[1] != "timeout" {
		t.Fatalf("log %v", log)
	}
	if j := readJob(t, c, id2); j.State != job.StateFailed {
		t.Fatalf("job %s", j.State)
	}
	auditSupply(t, c)
}

// TestCallbackBudgetSpills: callbacks beyond the block's callback budget
// wait, in order, for the next block.
func TestCallbackBudgetSpills(t *testing.T) {
	alice, _ := crypto.GenerateKey()
	def, _ := newJobChain(t, 0)
	if b := def.ex.CallbackBudget(); b == 0 || b != def.ex.LaneCaps().Reserved[fees.LaneRunner] {
		t.Fatalf("default callback budget %d, runner lane %d", b, def.ex.LaneCaps().Reserved[fees.LaneRunner])
	}
	c, _ := newJobChainWith(t, 1, func(p *execution.OffchainParams) { p.CallbackCycles, p.CallbackBlockCycles = 1_000_000, 1_000_000 }, alice)
	// Two jobs above every runner's max job value fail at submission, in one block.
	var oracles []types.Address
	var txs []*types.Tx
	for i := 0; i < 2; i++ {
		oracles = append(oracles, deployValue(c, alice, oracleActor, string(rune('a'+i)), genesis.CBY(50), nil))
	}
	for i := range oracles {
		txs = append(txs, c.tx(alice, &oracles[i], &types.Call{Handler: "ask", Args: cborArgs([]any{"https://api.example.com/x", genesis.CBY(21), 0, 5})}, 0))
	}
	c.ok(txs...)
	var pending []execution.PendingCallback
	c.st.View(func(v *store.View) (err error) { pending, err = execution.PendingCallbacks(v); return err })
	if len(pending) != 2 {
		t.Fatalf("queued %d callbacks", len(pending))
	}
	got := func() (n int) {
		for _, o := range oracles {
			n += len(c.query(o, "get", []any{"results"}).([]any))
		}
		return n
	}
	for want := 1; want <= 2; want++ {
		rs := c.ok()
		if len(rs) != 1 || !hasEvent(rs[0], types.ResultVerifierAddress, "JobCallback") || got() != want {
			t.Fatalf("block %d: %d receipts, %d callbacks delivered", want, len(rs), got())
		}
	}
	for _, o := range oracles {
		var st execution.CallbackStats
		c.st.View(func(v *store.View) (err error) { st, err = execution.ReadCallbackStats(v, o); return err })
		if st.Delivered != 1 || st.Failed != 0 {
			t.Fatalf("callback stats of %s: %+v", o, st)
		}
	}
	// A callback to a handler that does not exist fails on its own receipt
	// and counts against the actor.
	bad := deployValue(c, alice, badJobActor, "nohandler", genesis.CBY(50), nil)
	c.ok(c.tx(alice, &bad, &types.Call{Handler: "try_submit", Args: cborArgs([]any{map[string]any{"handler": "missing", "max_price": genesis.CBY(21), "vote_field": "/x"}})}, 0))
	rs := c.block()
	if len(rs) != 1 || rs[0].Status != types.ReceiptFailed || !hasEvent(rs[0], types.ResultVerifierAddress, "JobCallback") {
		t.Fatalf("failing callback receipt %+v", rs)
	}
	var st execution.CallbackStats
	c.st.View(func(v *store.View) (err error) { st, err = execution.ReadCallbackStats(v, bad); return err })
	if st.Delivered != 1 || st.Failed != 1 {
		t.Fatalf("callback stats of the failing actor: %+v", st)
	}
	auditSupply(t, c)
}

const publicContinuationActor = `from cowboy_sdk import actor, public, runner

@actor
class P:
    @public
    def ask(self, url):
        return runner.submit_job({
            "job_type": 2, "input": url, "max_price": 10**18, "timeout_blocks": 5, "runners": 1,
            "mode": 2, "max_wall_time_ms": 5000, "max_memory_bytes": 1048576,
            "expected_execution_ms": 1000, "max_return_bytes": 1024, "data_format": 3,
        }, self.done, context=url)

    @runner.continuation
    @public
    def done(self, res, ctx):
        self.storage["got"] = [res["status"], ctx]

    @public
    def got(self):
        return self.storage.get("got")

    def hidden(self):
        return 1
`

// TestContinuationInPublicClass: in a class that marks handlers @public, a
// continuation stacked with @public receives its result.
func TestContinuationInPublicClass(t *testing.T) {
	alice, _ := crypto.GenerateKey()
	c, runners := newJobChain(t, 1, alice)
	a := deployValue(c, alice, publicContinuationActor, "pub", genesis.CBY(5), nil)
	rs := c.ok(c.tx(alice, &a, &types.Call{Handler: "ask", Args: cborArgs([]any{"https://api.example.com/x"})}, 0))
	var raw []byte
	if err := decodeReturn(rs[0], &raw); err != nil {
		t.Fatal(err)
	}
	id, _ := types.BytesToHash(raw)
	runToVerified(t, c, id, byAddr(runners), map[types.Address]verify.Reveal{runners[0].addr: runners[0].reveal(id, `{"ok": true}`)})
	c.ok()
	got, ok := c.query(a, "got", nil).([]any)
	if !ok || len(got) != 2 || got[0] != "verified" || got[1] != "https://api.example.com/x" {
		t.Fatalf("continuation state %v", c.query(a, "got", nil))
	}
	if rs := c.block(c.tx(alice, &a, &types.Call{Handler: "hidden"}, 0)); rs[0].Status != types.ReceiptFailed {
		t.Fatal("non-public handler callable")
	}
}

// TestCallbacksShareRunnerLane: job callbacks get what the block's runner
// lane transactions leave of the lane's reservation, so a block never spends
// the runner lane's share twice.
func TestCallbacksShareRunnerLane(t *testing.T) {
	alice, _ := crypto.GenerateKey()
	c, rs := newJobChainWith(t, 1, func(p *execution.OffchainParams) { p.CallbackCycles, p.CallbackBlockCycles = 1_000_000, 1_000_000 }, alice)
	o := deployValue(c, alice, oracleActor, "a", genesis.CBY(50), nil)
	// A job above every runner's max job value fails at submission; its
	// callback is due in the next block.
	c.ok(c.tx(alice, &o, &types.Call{Handler: "ask", Args: cborArgs([]any{"https://api.example.com/x", genesis.CBY(21), 0, 5})}, 0))
	delivered := func() int { return len(c.query(o, "get", []any{"results"}).([]any)) }
	reg := types.RunnerRegistryAddress
	got := c.ok(c.tx(rs[0].key, &reg, &types.RunnerHeartbeat{}, 0))
	if len(got) != 1 || delivered() != 0 {
		t.Fatalf("runner heartbeat block: %d receipts, %d callbacks delivered; the heartbeat's runner-lane cycles should leave too little for the callback", len(got), delivered())
	}
	got = c.ok()
	if len(got) != 1 || !hasEvent(got[0], types.ResultVerifierAddress, "JobCallback") || delivered() != 1 {
		t.Fatalf("next block: %d receipts, %d callbacks delivered", len(got), delivered())
	}
	auditSupply(t, c)
}
