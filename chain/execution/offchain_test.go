package execution_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs/joblane"
	registry "github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

const oracleActor = `from cowboy_sdk import actor, runtime

@actor
class Oracle:
    def __init__(self):
        self.storage["results"] = []

    def ask(self, url, max_price, tip, timeout):
        jid = runtime.submit_job({
            "job_type": 2, "input": url, "max_price": max_price, "tip": tip,
            "timeout_blocks": timeout, "handler": "on_result", "runners": 3,
            "mode": 3, "vote_field": "/price", "max_wall_time_ms": 5000,
            "max_memory_bytes": 1048576, "expected_execution_ms": 1000,
            "max_return_bytes": 1024, "data_format": 3,
        })
        self.storage["job"] = jid
        return jid

    def on_result(self, res):
        r = self.storage["results"]
        r.append([res["status"], res["result"], res["fail_reason"], runtime.caller()])
        self.storage["results"] = r

    def get(self, k):
        return self.storage.get(k)
`

// testRunner is an in-test runner: its account key and its Ed25519 result key.
type testRunner struct {
	key  *ecdsa.PrivateKey
	addr types.Address
	ed   ed25519.PrivateKey
}

var (
	runnerBase = big.NewInt(10_000_000_000_000_000) // 0.01 CBY per job
	jobWindow  = uint64(2)                          // challenge window of the tests
	// unbondingBlocks is the unbonding period of the tests.
	unbondingBlocks = uint64(4)
)

// newJobChain is newChain with small off-chain parameters (min stake 10 CBY,
// challenge window 2 blocks) and n runners registered.
func newJobChain(t *testing.T, n int, funded ...*ecdsa.PrivateKey) (*chain, []testRunner) {
	return newJobChainWith(t, n, nil, funded...)
}

// newJobChainWith is newJobChain with tune applied to the off-chain parameters.
func newJobChainWith(t *testing.T, n int, tune func(*execution.OffchainParams), funded ...*ecdsa.PrivateKey) (*chain, []testRunner) {
	var rs []testRunner
	keys := append([]*ecdsa.PrivateKey(nil), funded...)
	for i := 0; i < n; i++ {
		k, _ := genKey()
		_, ed, _ := genEd25519()
		rs = append(rs, testRunner{key: k, addr: types.PubkeyToAddress(k.PublicKey), ed: ed})
		keys = append(keys, k)
	}
	faucet, _ := genKey()
	g := genesis.Dev(1, types.Address{0x0a, 0x11}, types.PubkeyToAddress(faucet.PublicKey))
	for _, k := range keys {
		g.Allocations[0].Balance.Sub(g.Allocations[0].Balance, genesis.CBY(1000))
		g.Allocations = append(g.Allocations, genesis.Allocation{Address: types.PubkeyToAddress(k.PublicKey), Balance: genesis.CBY(1000)})
	}
	st := openStore(t)
	if _, err := st.Commit(g.State(), func(root types.Hash) (*types.Block, []*types.Receipt, error) { return g.Block(root), nil, nil }); err != nil {
		t.Fatal(err)
	}
	jp := job.DefaultParams()
	jp.ChallengeWindowBlocks = jobWindow
	op := execution.OffchainParams{MinRunnerStake: genesis.CBY(10), HeartbeatTimeout: 1000, Job: jp,
		UnbondingBlocks: unbondingBlocks, ChallengeBond: genesis.CBY(100)}
	if tune != nil {
		tune(&op)
	}
	ex, err := execution.New(execution.Config{ChainID: g.ChainID, Fees: g.Fees, VM: sharedEngine(t), Offchain: op})
	if err != nil {
		t.Fatal(err)
	}
	c := &chain{t: t, st: st, ex: ex, g: g, nonce: map[types.Address]uint64{}}
	reg := types.RunnerRegistryAddress
	var txs []*types.Tx
	for _, r := range rs {
		txs = append(txs, c.txValue(r.key, &reg, &types.RunnerRegister{ResultKey: types.Bytes(r.ed.Public().(ed25519.PublicKey)),
			JobTypes: []uint64{uint64(job.JobTypeHTTP)}, Domains: []string{"api.example.com"}, RateBase: runnerBase,
			MaxConcurrentJobs: 4, MaxJobValue: genesis.CBY(20)}, genesis.CBY(100)))
	}
	for len(txs) > 0 { // block capacity: three 5M-cycle transactions per block
		k := min(3, len(txs))
		c.ok(txs[:k]...)
		txs = txs[k:]
	}
	return c, rs
}

func readJob(t *testing.T, c *chain, id types.Hash) *job.Job {
	t.Helper()
	var j *job.Job
	if err := c.st.View(func(v *store.View) (err error) { j, err = jobs.ReadJob(v, id); return err }); err != nil || j == nil {
		t.Fatalf("read job %s: %v %v", id, j, err)
	}
	return j
}

func readRunner(t *testing.T, c *chain, a types.Address) *registry.Runner {
	t.Helper()
	var r *registry.Runner
	if err := c.st.View(func(v *store.View) (err error) { r, err = registry.ReadRunner(v, a); return err }); err != nil || r == nil {
		t.Fatalf("read runner %s: %v %v", a, r, err)
	}
	return r
}

func burned(t *testing.T, c *chain) *big.Int {
	var b *big.Int
	c.st.View(func(v *store.View) (err error) { b, err = state.BigRecord(v, state.RecordBurned); return err })
	return b
}

func byAddr(rs []testRunner) map[types.Address]testRunner {
	m := map[types.Address]testRunner{}
	for _, r := range rs {
		m[r.addr] = r
	}
	return m
}

// reveal is a runner's signed result.
func (r testRunner) reveal(id types.Hash, result string) verify.Reveal {
	sig := verify.Sign(r.ed, id, r.addr, []byte(result), nil)
	return verify.Reveal{Runner: r.addr, Result: []byte(result), Signature: sig}
}

var salt int

// submitOracleJob deploys the oracle actor and has it submit a job.
func submitOracleJob(t *testing.T, c *chain, owner *ecdsa.PrivateKey, maxPrice, tip *big.Int, timeout uint64) (types.Address, types.Hash, *types.Receipt) {
	t.Helper()
	salt++
	oracle := deployValue(c, owner, oracleActor, fmt.Sprint("o", salt), genesis.CBY(50), nil)
	rs := c.ok(c.tx(owner, &oracle, &types.Call{Handler: "ask", Args: cborArgs([]any{"https://api.example.com/price", maxPrice, tip, timeout})}, 0))
	var raw []byte
	if err := codec.Unmarshal(rs[0].Return, &raw); err != nil {
		t.Fatal(err)
	}
	id, err := types.BytesToHash(raw)
	if err != nil {
		t.Fatal(err)
	}
	return oracle, id, rs[0]
}

func hasEvent(r *types.Receipt, emitter types.Address, topic string) bool {
	for _, ev := range r.Events {
		if ev.Emitter == emitter && ev.Topic == topic {
			return true
		}
	}
	return false
}

func TestJobLifecycleMajorityVote(t *testing.T) {
	alice, _ := genKey()
	c, runners := newJobChain(t, 6, alice)
	rmap := byAddr(runners)
	auditSupply(t, c)
	maxPrice, tip := genesis.CBY(1), big.NewInt(3_000_000_000_000_000)
	oracle, id, rcpt := submitOracleJob(t, c, alice, maxPrice, tip, 5)
	if !hasEvent(rcpt, types.JobDispatcherAddress, "JobSubmitted") || !hasEvent(rcpt, types.JobDispatcherAddress, "JobAssigned") {
		t.Fatalf("submission events %+v", rcpt.Events)
	}
	escrow := new(big.Int).Add(maxPrice, tip)
	if got := balanceOf(t, c, types.JobDispatcherAddress); got.Cmp(escrow) != 0 {
		t.Fatalf("dispatcher holds %s, want escrow %s", got, escrow)
	}
	auditSupply(t, c)
	j := readJob(t, c, id)
	if j.State != job.StateAssigned || len(j.Runners) != 3 || !slices.Contains(j.Runners, j.Aggregator) || j.Spec.Submitter != oracle {
		t.Fatalf("job after submission: %+v", j)
	}
	for _, a := range j.Runners {
		if r := readRunner(t, c, a); r.ActiveJobs != 1 {
			t.Fatalf("runner %s active jobs %d", a, r.ActiveJobs)
		}
	}
	// Two agree on 42 (the aggregator among them), one says 41.
	results := map[types.Address]string{}
	dissenter := false
	for _, a := range j.Runners {
		results[a] = `{"price": 42}`
		if a != j.Aggregator && !dissenter {
			results[a], dissenter = `{"price": 41}`, true
		}
	}
	var reveals []verify.Reveal
	var commits []*types.Tx
	disp := types.JobDispatcherAddress
	for _, a := range j.Runners {
		rv := rmap[a].reveal(id, results[a])
		reveals = append(reveals, rv)
		commits = append(commits, c.tx(rmap[a].key, &disp, &types.CommitResult{JobID: id, Commitment: verify.Commitment(rv.Result, rv.Signature)}, 0))
	}
	c.ok(commits...)
	j = readJob(t, c, id)
	if j.State != job.StateCommitted || len(j.Commitments) != 3 {
		t.Fatalf("job after commits: %s %d", j.State, len(j.Commitments))
	}
	// The aggregator verifies locally and submits.
	keys := map[types.Address]ed25519.PublicKey{}
	for _, a := range j.Runners {
		keys[a] = rmap[a].ed.Public().(ed25519.PublicKey)
	}
	out, err := verify.Verify(verify.Input{Spec: &j.Spec, Commitments: j.Commitments, Keys: keys, Reveals: reveals})
	if err != nil || !out.Accepted || len(out.Agreed) != 2 {
		t.Fatalf("local verify: %+v %v", out, err)
	}
	slices.SortFunc(reveals, func(a, b verify.Reveal) int { return strings.Compare(string(a.Runner[:]), string(b.Runner[:])) })
	sub := verify.Submission{Claim: out.Claim(id), Reveals: reveals}
	enc, err := sub.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// Only the aggregator may submit.
	verifier := types.ResultVerifierAddress
	var other testRunner
	for _, a := range j.Runners {
		if a != j.Aggregator {
			other = rmap[a]
		}
	}
	rs := c.block(c.tx(other.key, &verifier, &types.SubmitResult{JobID: id, Submission: enc}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "NotAggregator") {
		t.Fatalf("non-aggregator submission: %+v", rs[0])
	}
	rs = c.ok(c.tx(rmap[j.Aggregator].key, &verifier, &types.SubmitResult{JobID: id, Submission: enc}, 0))
	if !hasEvent(rs[0], types.ResultVerifierAddress, "JobVerified") || !hasEvent(rs[0], types.ResultVerifierAddress, "JobCallbackQueued") || len(rs[0].Messages) != 0 {
		t.Fatalf("verification receipt %+v", rs[0])
	}
	// The callback is a message in a later block, with its own receipt.
	if got := c.query(oracle, "get", []any{"results"}).([]any); len(got) != 0 {
		t.Fatalf("callback ran in the verifying transaction: %v", got)
	}
	rs = c.ok()
	if len(rs) != 1 || rs[0].TxHash != joblane.JobCallbackReceiptHash(id, "verified", c.head().Height) ||
		!hasEvent(rs[0], verifier, "JobCallback") || rs[0].CyclesUsed == 0 {
		t.Fatalf("callback receipt %+v", rs)
	}
	var ds []joblane.CallbackDelivery
	c.st.View(func(v *store.View) (err error) { ds, err = joblane.ReadCallbackDeliveries(v, id); return err })
	if len(ds) != 1 || !ds[0].OK || ds[0].Status != "verified" || ds[0].Hash != rs[0].TxHash || ds[0].Height != c.head().Height {
		t.Fatalf("callback deliveries %+v", ds)
	}
	got := c.query(oracle, "get", []any{"results"}).([]any)
	if len(got) != 1 {
		t.Fatalf("callback results %v", got)
	}
	cb := got[0].([]any)
	if cb[0] != "verified" || string(cb[1].([]byte)) != `{"price": 42}` || cb[2] != uint64(0) || !slices.Equal(cb[3].([]byte), verifier[:]) {
		t.Fatalf("callback %v", cb)
	}
	j = readJob(t, c, id)
	if j.State != job.StateVerified || !slices.Equal(j.Agreed, out.Agreed) {
		t.Fatalf("job after verification: %s", j.State)
	}
	for _, a := range j.Runners {
		if r := readRunner(t, c, a); r.ActiveJobs != 0 {
			t.Fatalf("runner %s still has %d active jobs", a, r.ActiveJobs)
		}
	}
	auditSupply(t, c)

	// Settlement after the challenge window, from the escrow.
	before := map[types.Address]*big.Int{}
	for _, a := range append(slices.Clone(j.Runners), oracle, types.TreasuryAddress) {
		before[a] = balanceOf(t, c, a)
	}
	burnBefore := burned(t, c)
	for i := uint64(0); i <= jobWindow; i++ {
		c.ok()
	}
	j = readJob(t, c, id)
	if j.State != job.StateFinalized {
		t.Fatalf("job after the challenge window: %s", j.State)
	}
	// X = 2 × 0.01 CBY (two agreeing runners at base rate), burn 10%, treasury
	// 1%, pool 89% with a 5% aggregator bonus, rest split equally; tip equal.
	x := new(big.Int).Mul(runnerBase, big.NewInt(2))
	burn := new(big.Int).Div(new(big.Int).Mul(x, big.NewInt(1000)), big.NewInt(10_000))
	treas := new(big.Int).Div(new(big.Int).Mul(x, big.NewInt(100)), big.NewInt(10_000))
	pool := new(big.Int).Sub(new(big.Int).Sub(x, burn), treas)
	bonus := new(big.Int).Div(new(big.Int).Mul(pool, big.NewInt(500)), big.NewInt(10_000))
	share := new(big.Int).Div(new(big.Int).Sub(pool, bonus), big.NewInt(2))
	tipShare := new(big.Int).Div(tip, big.NewInt(2))
	refund := new(big.Int).Sub(maxPrice, x)
	want := map[types.Address]*big.Int{oracle: refund, types.TreasuryAddress: treas}
	for _, a := range j.Runners {
		want[a] = new(big.Int)
		if slices.Contains(j.Agreed, a) {
			want[a].Add(share, tipShare)
			if a == j.Aggregator {
				want[a].Add(want[a], bonus)
			}
		}
	}
	for a, w := range want {
		if d := new(big.Int).Sub(balanceOf(t, c, a), before[a]); d.Cmp(w) != 0 {
			t.Errorf("%s received %s, want %s", a, d, w)
		}
	}
	if d := new(big.Int).Sub(burned(t, c), burnBefore); d.Cmp(burn) != 0 {
		t.Errorf("burned %s, want %s", d, burn)
	}
	if b := balanceOf(t, c, types.JobDispatcherAddress); b.Sign() != 0 {
		t.Errorf("dispatcher keeps %s after settlement", b)
	}
	var pays *jobs.JobPayments
	c.st.View(func(v *store.View) (err error) { pays, err = jobs.ReadJobPayments(v, id); return err })
	if pays == nil || pays.Payment.Cmp(x) != 0 || pays.Refund.Cmp(refund) != 0 {
		t.Fatalf("payments record %+v", pays)
	}
	auditSupply(t, c)
}

// committedJob runs a job up to Committed with the given results.
func committedJob(t *testing.T, c *chain, alice *ecdsa.PrivateKey, runners []testRunner, result func(i int, r testRunner, id types.Hash) (verify.Reveal, types.Hash)) (types.Hash, *job.Job, []verify.Reveal) {
	rmap := byAddr(runners)
	_, id, _ := submitOracleJob(t, c, alice, genesis.CBY(1), big.NewInt(0), 5)
	j := readJob(t, c, id)
	disp := types.JobDispatcherAddress
	var txs []*types.Tx
	var reveals []verify.Reveal
	for i, a := range j.Runners {
		rv, commit := result(i, rmap[a], id)
		reveals = append(reveals, rv)
		txs = append(txs, c.tx(rmap[a].key, &disp, &types.CommitResult{JobID: id, Commitment: commit}, 0))
	}
	c.ok(txs...)
	slices.SortFunc(reveals, func(a, b verify.Reveal) int { return strings.Compare(string(a.Runner[:]), string(b.Runner[:])) })
	return id, readJob(t, c, id), reveals
}

func TestJobSubmissionRejected(t *testing.T) {
	alice, _ := genKey()
	c, runners := newJobChain(t, 3, alice)
	rmap := byAddr(runners)
	verifier := types.ResultVerifierAddress
	claim := func(id types.Hash, reveals []verify.Reveal, agreed []types.Address) []byte {
		slices.SortFunc(agreed, func(a, b types.Address) int { return strings.Compare(string(a[:]), string(b[:])) })
		sub := verify.Submission{Claim: verify.VerifiedResult{JobID: id, ResultHash: types.Keccak256([]byte(`{"price": 42}`)), Agreed: agreed, Dissented: []types.Address{}}, Reveals: reveals}
		b, err := sub.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Commitment mismatch: runner 0 committed to 41 but reveals 42.
	id, j, reveals := committedJob(t, c, alice, runners, func(i int, r testRunner, id types.Hash) (verify.Reveal, types.Hash) {
		rv := r.reveal(id, `{"price": 42}`)
		if i == 0 {
			lie := r.reveal(id, `{"price": 41}`)
			return rv, verify.Commitment(lie.Result, lie.Signature)
		}
		return rv, verify.Commitment(rv.Result, rv.Signature)
	})
	oracle := j.Spec.Submitter
	before := balances(t, c, append(slices.Clone(j.Runners), oracle, types.JobDispatcherAddress, types.TreasuryAddress)...)
	rs := c.block(c.tx(rmap[j.Aggregator].key, &verifier, &types.SubmitResult{JobID: id, Submission: claim(id, reveals, slices.Clone(j.Runners))}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "InvalidSubmission") {
		t.Fatalf("commitment mismatch: %+v", rs[0])
	}
	// Only the submitter's fee moved.
	checkDeltas(t, c, before, map[types.Address]*big.Int{j.Aggregator: new(big.Int).Neg(rs[0].FeePaid)})
	if s := readJob(t, c, id).State; s != job.StateCommitted {
		t.Fatalf("job after a rejected submission: %s", s)
	}
	auditSupply(t, c)
	// Let the first job run out (aggregator timeout, then no reveals) so the
	// runners are free again: it fails and refunds.
	for i := uint64(0); i < 70; i++ {
		c.ok()
	}
	if j := readJob(t, c, id); j.State != job.StateFailed {
		t.Fatalf("abandoned job: %s", j.State)
	}
	// Runner fault: the whole escrow (1 CBY, no tip) went back to the actor.
	if d := sub(balanceOf(t, c, oracle), before[oracle]); d.Cmp(genesis.CBY(1)) != 0 {
		t.Fatalf("actor refunded %s", d)
	}
	if b := balanceOf(t, c, types.JobDispatcherAddress); b.Sign() != 0 {
		t.Fatalf("dispatcher keeps %s", b)
	}
	auditSupply(t, c)

	// Invalid signature: runner 0 signs with a key that is not its result key.
	_, wrong, _ := genEd25519()
	id, j, reveals = committedJob(t, c, alice, runners, func(i int, r testRunner, id types.Hash) (verify.Reveal, types.Hash) {
		if i == 0 {
			r.ed = wrong
		}
		rv := r.reveal(id, `{"price": 42}`)
		return rv, verify.Commitment(rv.Result, rv.Signature)
	})
	rs = c.block(c.tx(rmap[j.Aggregator].key, &verifier, &types.SubmitResult{JobID: id, Submission: claim(id, reveals, slices.Clone(j.Runners))}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "InvalidSubmission") {
		t.Fatalf("invalid signature: %+v", rs[0])
	}
	auditSupply(t, c)
}

func TestJobTimeoutReselectsThenRefunds(t *testing.T) {
	alice, _ := genKey()
	c, _ := newJobChain(t, 6, alice)
	oracle, id, _ := submitOracleJob(t, c, alice, genesis.CBY(1), big.NewInt(5), 3)
	j := readJob(t, c, id)
	first := slices.Clone(j.Runners)
	actorBefore := balanceOf(t, c, oracle)
	// Nobody commits: after the deadline the job is re-selected among the others.
	for readJob(t, c, id).Retry == 0 {
		c.ok()
	}
	j = readJob(t, c, id)
	if j.State != job.StateAssigned || j.Retry != 1 || len(j.Runners) != 3 {
		t.Fatalf("re-selection: %+v", j)
	}
	for _, a := range j.Runners {
		if slices.Contains(first, a) {
			t.Fatalf("timed-out runner %s re-selected", a)
		}
	}
	for _, a := range first {
		if r := readRunner(t, c, a); r.Reputation != 95 || r.ActiveJobs != 0 {
			t.Fatalf("timed-out runner %s: reputation %d, active %d", a, r.Reputation, r.ActiveJobs)
		}
	}
	auditSupply(t, c)
	// The second committee times out too; six runners cannot fill a third.
	// The sweep that fails the job records its events in a receipt.
	var sweep []*types.Receipt
	for !readJob(t, c, id).State.Terminal() {
		sweep = c.ok()
	}
	if len(sweep) != 1 || sweep[0].TxHash != joblane.JobSweepReceiptHash(c.head().Height) ||
		!hasEvent(sweep[0], types.JobDispatcherAddress, "JobFailed") || !hasEvent(sweep[0], types.JobDispatcherAddress, "JobSettled") {
		t.Fatalf("sweep receipts %+v", sweep)
	}
	c.ok() // delivers the failure callback
	j = readJob(t, c, id)
	if j.State != job.StateFailed || j.Fail != job.FailNoCandidates {
		t.Fatalf("final job: %s fail %d", j.State, j.Fail)
	}
	escrow := new(big.Int).Add(genesis.CBY(1), big.NewInt(5))
	if d := new(big.Int).Sub(balanceOf(t, c, oracle), actorBefore); d.Cmp(escrow) != 0 {
		t.Fatalf("actor refunded %s, want %s", d, escrow)
	}
	if b := balanceOf(t, c, types.JobDispatcherAddress); b.Sign() != 0 {
		t.Fatalf("dispatcher keeps %s", b)
	}
	got := c.query(oracle, "get", []any{"results"}).([]any)
	if len(got) != 1 || got[0].([]any)[0] != "failed" || got[0].([]any)[2] != uint64(job.FailNoCandidates) {
		t.Fatalf("failure callback %v", got)
	}
	auditSupply(t, c)
}

func TestJobAggregatorTimeoutIndividualReveals(t *testing.T) {
	alice, _ := genKey()
	c, runners := newJobChain(t, 3, alice)
	rmap := byAddr(runners)
	id, j, reveals := committedJob(t, c, alice, runners, func(_ int, r testRunner, id types.Hash) (verify.Reveal, types.Hash) {
		rv := r.reveal(id, `{"price": 7}`)
		return rv, verify.Commitment(rv.Result, rv.Signature)
	})
	oracle := j.Spec.Submitter
	verifier := types.ResultVerifierAddress
	// Reveals are refused while the aggregator's window is open.
	enc, _ := reveals[0].Encode()
	rs := c.block(c.tx(rmap[reveals[0].Runner].key, &verifier, &types.RevealResult{JobID: id, Reveal: enc}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "JobTransition") {
		t.Fatalf("early reveal: %+v", rs[0])
	}
	for readJob(t, c, id).State == job.StateCommitted {
		c.ok()
	}
	if r := readRunner(t, c, j.Aggregator); r.Reputation != 95 {
		t.Fatalf("late aggregator reputation %d", r.Reputation)
	}
	// A reveal for someone else, then each runner's own.
	rs = c.block(c.tx(rmap[reveals[1].Runner].key, &verifier, &types.RevealResult{JobID: id, Reveal: enc}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "InvalidReveal") {
		t.Fatalf("foreign reveal: %+v", rs[0])
	}
	var txs []*types.Tx
	for _, rv := range reveals {
		b, _ := rv.Encode()
		txs = append(txs, c.tx(rmap[rv.Runner].key, &verifier, &types.RevealResult{JobID: id, Reveal: b}, 0))
	}
	// The block runs them in its seed order; the last one to run verifies.
	rs = c.ok(txs...)
	var verified []*types.Receipt
	for _, r := range rs {
		if hasEvent(r, types.ResultVerifierAddress, "JobVerified") {
			verified = append(verified, r)
		}
	}
	if len(verified) != 1 || !hasEvent(verified[0], types.ResultVerifierAddress, "JobCallbackQueued") {
		t.Fatalf("reveal receipts %+v", rs)
	}
	c.ok() // delivers the callback
	if j := readJob(t, c, id); j.State != job.StateVerified || len(j.Agreed) != 3 {
		t.Fatalf("job after reveals: %s %v", j.State, j.Agreed)
	}
	got := c.query(oracle, "get", []any{"results"}).([]any)
	if len(got) != 1 || got[0].([]any)[0] != "verified" || string(got[0].([]any)[1].([]byte)) != `{"price": 7}` {
		t.Fatalf("callback %v", got)
	}
	before := balances(t, c, append(slices.Clone(j.Runners), oracle, types.TreasuryAddress)...)
	for readJob(t, c, id).State != job.StateFinalized {
		c.ok()
	}
	// The silent aggregator gets no bonus: 89% split equally among the
	// three (bounds priced at the base rate), the remainder to the lowest
	// address.
	x := new(big.Int).Mul(runnerBase, big.NewInt(3))
	burn, treas := mulDiv(x, 1_000, 10_000), mulDiv(x, 100, 10_000)
	pool := sub(sub(x, burn), treas)
	each := new(big.Int).Quo(pool, big.NewInt(3))
	lowest := slices.MinFunc(slices.Clone(j.Runners), func(a, b types.Address) int { return bytes.Compare(a[:], b[:]) })
	want := map[types.Address]*big.Int{oracle: sub(genesis.CBY(1), x), types.TreasuryAddress: treas}
	for _, a := range j.Runners {
		want[a] = new(big.Int).Set(each)
		if a == lowest {
			want[a] = add(each, sub(pool, new(big.Int).Mul(each, big.NewInt(3))))
		}
	}
	checkDeltas(t, c, before, want)
	if b := balanceOf(t, c, types.JobDispatcherAddress); b.Sign() != 0 {
		t.Fatalf("dispatcher keeps %s", b)
	}
	auditSupply(t, c)
}

const badJobActor = `from cowboy_sdk import actor, runtime, HostError

@actor
class Bad:
    def try_submit(self, spec):
        try:
            runtime.submit_job(spec)
        except HostError as e:
            return str(e)
        return "accepted"
`

func TestRunnerRegistryRules(t *testing.T) {
	alice, _ := genKey()
	c, runners := newJobChain(t, 1, alice)
	r := runners[0]
	reg := types.RunnerRegistryAddress
	edPub := types.Bytes(r.ed.Public().(ed25519.PublicKey))
	rec := readRunner(t, c, r.addr)
	if rec.Reputation != 100 || rec.Stake.Cmp(genesis.CBY(100)) != 0 || rec.Status != registry.RunnerActive {
		t.Fatalf("record %+v", rec)
	}
	if got := balanceOf(t, c, reg); got.Cmp(genesis.CBY(100)) != 0 {
		t.Fatalf("registry holds %s", got)
	}
	aliceAddr := types.PubkeyToAddress(alice.PublicKey)
	cases := []struct {
		in    types.RunnerRegister
		value *big.Int
		want  string
	}{
		{types.RunnerRegister{ResultKey: types.Bytes{1, 2}, JobTypes: []uint64{2}, MaxConcurrentJobs: 1}, genesis.CBY(20), "InvalidResultKey"},
		{types.RunnerRegister{ResultKey: edPub, JobTypes: []uint64{9}, MaxConcurrentJobs: 1}, genesis.CBY(20), "InvalidCapabilities"},
		{types.RunnerRegister{ResultKey: edPub, JobTypes: []uint64{2}}, genesis.CBY(20), "InvalidCapabilities"},
		{types.RunnerRegister{ResultKey: edPub, JobTypes: []uint64{2}, MaxConcurrentJobs: 1}, genesis.CBY(9), "InsufficientStake"},
		// 1.5 × 20 CBY = 30 CBY > 29 CBY.
		{types.RunnerRegister{ResultKey: edPub, JobTypes: []uint64{2}, MaxConcurrentJobs: 1, MaxJobValue: genesis.CBY(20)}, genesis.CBY(29), "InsufficientStake"},
		{types.RunnerRegister{ResultKey: edPub, JobTypes: []uint64{2}, MaxConcurrentJobs: 1, RateBase: big.NewInt(-1)}, genesis.CBY(20), "InvalidRateCard"},
	}
	for i, tc := range cases {
		in := tc.in
		rs := c.block(c.txValue(alice, &reg, &in, tc.value))
		if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, tc.want) {
			t.Fatalf("case %d: %+v", i, rs[0])
		}
	}
	in := types.RunnerRegister{ResultKey: edPub, JobTypes: []uint64{2}, MaxConcurrentJobs: 1, MaxJobValue: genesis.CBY(20)}
	c.ok(c.txValue(alice, &reg, &in, genesis.CBY(30)))
	// Value goes only with runner_register.
	disp := types.JobDispatcherAddress
	if _, err := c.ex.CheckTx(c.tx(alice, &reg, &types.RunnerHeartbeat{}, 1)); err == nil {
		t.Fatal("heartbeat with value accepted")
	}
	c.nonce[aliceAddr]--
	if _, err := c.ex.CheckTx(c.tx(alice, &disp, &types.RunnerHeartbeat{}, 0)); err == nil {
		t.Fatal("heartbeat to the dispatcher accepted")
	}
	c.nonce[aliceAddr]--
	// Busy runners cannot leave; idle ones get their stake back. r leaves
	// first so that alice is the only candidate.
	c.ok(c.tx(r.key, &reg, &types.RunnerDeregister{}, 0))
	_, id, _ := submitOracleJobN(t, c, alice, 1)
	if j := readJob(t, c, id); j.State != job.StateAssigned || j.Runners[0] != aliceAddr {
		t.Fatalf("job %+v", j)
	}
	before := balanceOf(t, c, aliceAddr)
	rs := c.block(c.tx(alice, &reg, &types.RunnerDeregister{}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "RunnerBusy") {
		t.Fatalf("busy deregister: %+v (job %s)", rs[0], id)
	}
	for !readJob(t, c, id).State.Terminal() {
		c.ok()
	}
	if rep := readRunner(t, c, aliceAddr).Reputation; rep >= 100 {
		t.Fatalf("timed-out runner kept reputation %d", rep)
	}
	// Leaving starts unbonding: the self-bond stays in the registry (still
	// slashable) until the unbonding period has passed, then is withdrawn.
	before = balanceOf(t, c, aliceAddr)
	rs = c.ok(c.tx(alice, &reg, &types.RunnerDeregister{}, 0))
	leftAt := c.head().Height
	want := new(big.Int).Sub(before, rs[0].FeePaid)
	if got := balanceOf(t, c, aliceAddr); got.Cmp(want) != 0 {
		t.Fatalf("after deregister %s, want %s", got, want)
	}
	if rec := readRunner(t, c, aliceAddr); rec.Status != registry.RunnerExited || rec.Stake.Sign() != 0 {
		t.Fatalf("exited record %+v", rec)
	}
	var tr []registry.Tranche
	c.st.View(func(v *store.View) (err error) { tr, err = registry.ReadTranches(v, aliceAddr); return err })
	if len(tr) != 1 || tr[0].Amount.Cmp(genesis.CBY(30)) != 0 || tr[0].Release != leftAt+unbondingBlocks {
		t.Fatalf("tranches %+v", tr)
	}
	auditSupply(t, c)
	rs = c.block(c.tx(alice, &reg, &types.RunnerWithdraw{}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "NothingToWithdraw") {
		t.Fatalf("early withdraw: %+v", rs[0])
	}
	for c.head().Height < leftAt+unbondingBlocks-1 {
		c.ok()
	}
	before = balanceOf(t, c, aliceAddr)
	rs = c.ok(c.tx(alice, &reg, &types.RunnerWithdraw{}, 0))
	want = new(big.Int).Sub(new(big.Int).Add(before, genesis.CBY(30)), rs[0].FeePaid)
	if got := balanceOf(t, c, aliceAddr); got.Cmp(want) != 0 {
		t.Fatalf("after withdraw %s, want %s", got, want)
	}
	auditSupply(t, c)

	// A bad spec through the host op is a catchable error and moves nothing.
	bad := deployValue(c, alice, badJobActor, "bad", genesis.CBY(5), nil)
	for _, tc := range []struct {
		spec map[string]any
		want string
	}{
		{map[string]any{"handler": "cb", "max_price": 1, "vote_field": "/x", "bogus": 1}, `unknown field "bogus"`},
		{map[string]any{"handler": "cb", "max_price": 0, "vote_field": "/x"}, "InvalidJobSpec"},
		{map[string]any{"handler": "cb", "max_price": genesis.CBY(6), "vote_field": "/x"}, "InsufficientBalance"},
	} {
		rs := c.ok(c.tx(alice, &bad, &types.Call{Handler: "try_submit", Args: cborArgs([]any{tc.spec})}, 0))
		var msg string
		codec.Unmarshal(rs[0].Return, &msg)
		if !strings.Contains(msg, tc.want) {
			t.Fatalf("spec %v: %q", tc.spec, msg)
		}
	}
	if got := balanceOf(t, c, bad); got.Cmp(genesis.CBY(5)) != 0 {
		t.Fatalf("actor balance %s after refused submissions", got)
	}
	auditSupply(t, c)
}

// submitOracleJobN is submitOracleJob with an M-runner EconomicBond job.
func submitOracleJobN(t *testing.T, c *chain, owner *ecdsa.PrivateKey, m int) (types.Address, types.Hash, *types.Receipt) {
	t.Helper()
	src := strings.Replace(strings.Replace(oracleActor, `"runners": 3`, fmt.Sprintf(`"runners": %d`, m), 1), `"mode": 3, "vote_field": "/price"`, `"mode": 2`, 1)
	salt++
	oracle := deployValue(c, owner, src, fmt.Sprint("n", salt), genesis.CBY(50), nil)
	rs := c.ok(c.tx(owner, &oracle, &types.Call{Handler: "ask", Args: cborArgs([]any{"https://api.example.com/x", genesis.CBY(1), 0, 3})}, 0))
	var raw []byte
	if err := codec.Unmarshal(rs[0].Return, &raw); err != nil {
		t.Fatal(err)
	}
	id, _ := types.BytesToHash(raw)
	return oracle, id, rs[0]
}

func TestJobAboveMaxJobValueFindsNoRunner(t *testing.T) {
	alice, _ := genKey()
	c, _ := newJobChain(t, 3, alice) // each declares a max job value of 20 CBY
	oracle, id, _ := submitOracleJob(t, c, alice, genesis.CBY(21), big.NewInt(0), 5)
	if j := readJob(t, c, id); j.State != job.StateFailed || j.Fail != job.FailNoCandidates {
		t.Fatalf("job %s fail %d", j.State, j.Fail)
	}
	c.ok() // delivers the failure callback
	if got := c.query(oracle, "get", []any{"results"}).([]any); len(got) != 1 || got[0].([]any)[0] != "failed" {
		t.Fatalf("callback %v", got)
	}
	if got := balanceOf(t, c, oracle); got.Cmp(genesis.CBY(50)) != 0 {
		t.Fatalf("actor balance %s, want the full 50 CBY back", got)
	}
	auditSupply(t, c)
}
