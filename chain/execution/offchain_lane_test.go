package execution_test

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs/joblane"
	"github.com/cowboy-foundation/cowboy/chain/timers/timerlane"
	"github.com/cowboy-foundation/cowboy/chain/types"
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
	alice, _ := genKey()
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
	if len(rs) != 1 || !hasEvent(rs[0], types.ResultVerifierAddress, "JobCallback") || !hasEvent(rs[0], types.TimerEscrowAddress, timerlane.TopicTimerCancelled) {
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
	alice, _ := genKey()
	def, _ := newJobChain(t, 0)
	if b := def.ex.CallbackBudget(); b == 0 || b != def.ex.LaneCaps().Reserved[fees.LaneRunner]/2 {
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
	var pending []jobs.PendingCallback
	c.st.View(func(v *store.View) (err error) { pending, err = jobs.PendingCallbacks(v); return err })
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
		var st joblane.CallbackStats
		c.st.View(func(v *store.View) (err error) { st, err = joblane.ReadCallbackStats(v, o); return err })
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
	var st joblane.CallbackStats
	c.st.View(func(v *store.View) (err error) { st, err = joblane.ReadCallbackStats(v, bad); return err })
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
	alice, _ := genKey()
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

// verifyAgrees has a second executor, with c's configuration, re-execute the
// block res built on c in Verify mode from the same state: it must accept
// the block and reach the same writes and receipts. Then res is committed.
func verifyAgrees(t *testing.T, c *chain, res *execution.Result) {
	t.Helper()
	ex2, err := execution.New(c.ex.Config())
	if err != nil {
		t.Fatal(err)
	}
	var vr *execution.Result
	env := c.env()
	if err := c.st.View(func(v *store.View) (err error) {
		vr, err = ex2.Apply(context.Background(), v, env, res.Included, execution.Verify)
		return err
	}); err != nil {
		t.Fatalf("second executor refuses the built block: %v", err)
	}
	if string(codec.MustMarshal(vr.Writes)) != string(codec.MustMarshal(res.Writes)) ||
		types.ReceiptsRoot(vr.Receipts) != types.ReceiptsRoot(res.Receipts) || vr.JobCallbackClaim != res.JobCallbackClaim {
		t.Fatal("second executor disagrees on the block's writes or receipts")
	}
	c.commit(res)
}

// jobCallbacks counts the delivered-callback receipts among res's job-lane
// receipts and checks their usage stays within the claim.
func jobCallbacks(t *testing.T, res *execution.Result) int {
	t.Helper()
	n := 0
	for _, r := range res.Receipts[len(res.Receipts)-res.JobReceipts:] {
		if hasEvent(r, types.ResultVerifierAddress, "JobCallback") {
			n++
		}
	}
	if res.JobCallbackCycles > res.JobCallbackClaim {
		t.Fatalf("callbacks used %d cycles beyond their claim %d", res.JobCallbackCycles, res.JobCallbackClaim)
	}
	return n
}

// queueFailedCallbacks has alice deploy n oracles whose jobs (above every
// runner's max job value) fail at submission in one block, queuing n
// callbacks due in the next block.
func queueFailedCallbacks(t *testing.T, c *chain, alice *ecdsa.PrivateKey, n int) []types.Address {
	t.Helper()
	var txs []*types.Tx
	var oracles []types.Address
	for i := 0; i < n; i++ {
		oracles = append(oracles, deployValue(c, alice, oracleActor, "q"+string(rune('a'+i)), genesis.CBY(50), nil))
	}
	for i := range oracles {
		txs = append(txs, c.tx(alice, &oracles[i], &types.Call{Handler: "ask", Args: cborArgs([]any{"https://api.example.com/x", genesis.CBY(21), 0, 5})}, 0))
	}
	c.ok(txs...)
	var pending []jobs.PendingCallback
	c.st.View(func(v *store.View) (err error) { pending, err = jobs.PendingCallbacks(v); return err })
	if len(pending) != n {
		t.Fatalf("queued %d callbacks, want %d", len(pending), n)
	}
	return oracles
}

// TestCallbackClaimBoundsBlock: the callbacks due in a block claim their
// cycles before the transactions, so transactions plus callbacks stay
// within MaxBlockCycles: Build defers what would not fit beside the claim,
// Verify refuses a block that ignores it, callbacks beyond the budget wait,
// and a second executor agrees on every block.
func TestCallbackClaimBoundsBlock(t *testing.T) {
	alice, _ := genKey()
	users := fundedKeys(5)
	tune := func(p *execution.OffchainParams) { p.CallbackCycles, p.CallbackBlockCycles = 1_000_000, 2_000_000 }
	c, _ := newJobChainWith(t, 1, tune, append(users, alice)...)
	queueFailedCallbacks(t, c, alice, 3)

	// Five 4M-cycle transfers fill the 20M block; with two of the three
	// callbacks claiming 2M, only four fit.
	var cands []*types.Tx
	for _, u := range users {
		to := types.Address{0x77}
		cands = append(cands, c.txLimits(u, &to, nil, 4_000_000, 1))
	}
	whole, err := execution.CanonicalOrder(cands, c.env().Seed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.apply(whole, execution.Verify); !errors.Is(err, execution.ErrLaneBudget) {
		t.Fatalf("Verify of 20M of transactions beside a 2M callback claim: %v, want ErrLaneBudget", err)
	}
	res, err := c.apply(cands, execution.Build)
	if err != nil {
		t.Fatal(err)
	}
	if res.JobCallbackClaim != 2_000_000 || len(res.Included) != 4 || len(res.Deferred) != 1 || res.Deferred[0] != cands[4] {
		t.Fatalf("claim %d, included %d, deferred %d", res.JobCallbackClaim, len(res.Included), len(res.Deferred))
	}
	var limits uint64
	for _, tx := range res.Included {
		limits += tx.CyclesLimit()
	}
	if total := c.ex.LaneCaps().Total; limits+res.JobCallbackClaim > total {
		t.Fatalf("built block reserves %d + %d cycles, the cap is %d", limits, res.JobCallbackClaim, total)
	}
	if n := jobCallbacks(t, res); n != 2 {
		t.Fatalf("delivered %d callbacks, the claim holds 2", n)
	}
	verifyAgrees(t, c, res)

	// The third waits for the next block, which claims only 1M for it.
	res, err = c.apply(nil, execution.Build)
	if err != nil {
		t.Fatal(err)
	}
	if res.JobCallbackClaim != 1_000_000 || jobCallbacks(t, res) != 1 {
		t.Fatalf("next block: claim %d, %d callbacks", res.JobCallbackClaim, jobCallbacks(t, res))
	}
	verifyAgrees(t, c, res)
	if res, _ = c.apply(nil, execution.Build); res.JobCallbackClaim != 0 {
		t.Fatalf("empty queue claims %d", res.JobCallbackClaim)
	}

	// A callback larger than the per-block budget could never be delivered.
	cfg := c.ex.Config()
	cfg.Offchain.CallbackCycles = 3_000_000
	if _, err := execution.New(cfg); err == nil {
		t.Fatal("a callback above the block's callback budget was accepted")
	}
	auditSupply(t, c)
}

// TestCallbacksShareRunnerLane: the callbacks' claim comes out of the runner
// lane's reservation first; the block's runner-lane transactions get what is
// left of it ahead of higher-paying users, and beyond it compete for the
// rest of the block — both run in the same block, within the cap.
func TestCallbacksShareRunnerLane(t *testing.T) {
	alice, _ := genKey()
	users := fundedKeys(5)
	tune := func(p *execution.OffchainParams) { p.CallbackCycles, p.CallbackBlockCycles = 1_000_000, 2_000_000 }
	c, rs := newJobChainWith(t, 2, tune, append(users, alice)...)
	caps := c.ex.LaneCaps()
	if caps.Reserved[fees.LaneRunner] != 2_500_000 || caps.Total != 20_000_000 {
		t.Fatalf("lane caps %+v", caps)
	}
	oracles := queueFailedCallbacks(t, c, alice, 1)

	// Priority order: high-paying users first (16M + 2M), then two runner
	// heartbeats. The callback claims 1M of the runner lane's 2.5M; the
	// 1.5M heartbeat takes the rest of the reservation ahead of the users,
	// the 0.5M one competes for the rest of the block and gets in, and the
	// 2M user no longer fits.
	to, reg := types.Address{0x77}, types.RunnerRegistryAddress
	var cands []*types.Tx
	for _, u := range users[:4] {
		cands = append(cands, c.txLimits(u, &to, nil, 4_000_000, 1_000))
	}
	late := c.txLimits(users[4], &to, nil, 2_000_000, 1_000)
	hb0 := c.txLimits(rs[0].key, &reg, &types.RunnerHeartbeat{}, 1_500_000, 0)
	hb1 := c.txLimits(rs[1].key, &reg, &types.RunnerHeartbeat{}, 500_000, 0)
	cands = append(cands, late, hb0, hb1)
	res, err := c.apply(cands, execution.Build)
	if err != nil {
		t.Fatal(err)
	}
	if res.JobCallbackClaim != 1_000_000 || len(res.Included) != 6 || len(res.Deferred) != 1 || res.Deferred[0] != late {
		t.Fatalf("claim %d, included %d, deferred %v", res.JobCallbackClaim, len(res.Included), res.Deferred)
	}
	if !slices.Contains(res.Included, hb0) || !slices.Contains(res.Included, hb1) {
		t.Fatal("runner heartbeats left out")
	}
	for _, r := range res.Receipts[:len(res.Included)] {
		if r.Status != types.ReceiptSuccess {
			t.Fatalf("tx %s failed: %s", r.TxHash, r.Error)
		}
	}
	if n := jobCallbacks(t, res); n != 1 {
		t.Fatalf("callback not delivered beside the runner transactions (%d)", n)
	}
	verifyAgrees(t, c, res)
	if got := len(c.query(oracles[0], "get", []any{"results"}).([]any)); got != 1 {
		t.Fatalf("oracle got %d callbacks", got)
	}
	auditSupply(t, c)
}
