package execution_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// deterministicTEEJob sets up a dev chain with two attested TEE runners
// (rate runnerBase) and submits a tee_required Deterministic job for two
// runners, committed by both with result; it returns the chain, the
// runners by address, the job and the runners' reveals.
func deterministicTEEJob(t *testing.T, result string) (*chain, map[types.Address]teeRunner, *job.Job, map[types.Address]verify.Reveal) {
	t.Helper()
	a, b := newTEERunner(t, "det-a"), newTEERunner(t, "det-b")
	owner := seededKey(t, "det-owner")
	c := newTEEChain(t, execution.TEEParams{}, a.key, b.key, owner)
	jp := job.DefaultParams()
	jp.ChallengeWindowBlocks, jp.AggregatorTimeoutBlocks, jp.RevealTimeoutBlocks = jobWindow, 8, 5
	ex, err := execution.New(execution.Config{ChainID: c.g.ChainID, Fees: c.g.Fees, VM: sharedEngine(t),
		Offchain: execution.OffchainParams{MinRunnerStake: genesis.CBY(10), HeartbeatTimeout: 1000, Job: jp}})
	if err != nil {
		t.Fatal(err)
	}
	c.ex = ex
	reg, tv := types.RunnerRegistryAddress, types.TEEVerifierAddress
	rmap := map[types.Address]teeRunner{a.addr: a, b.addr: b}
	for _, r := range []teeRunner{a, b} {
		c.ok(c.txValue(r.key, &reg, &types.RunnerRegister{ResultKey: types.Bytes(r.ed.Public().(ed25519.PublicKey)),
			JobTypes: []uint64{uint64(job.JobTypeHTTP)}, TEE: true, RateBase: runnerBase, MaxConcurrentJobs: 4}, genesis.CBY(100)))
	}
	c.ok(c.tx(a.key, &tv, a.attestIn(t), 0), c.tx(b.key, &tv, b.attestIn(t), 0))
	spec := &job.JobSpec{JobType: job.JobTypeHTTP, Bounds: job.ResourceBounds{MaxWallTimeMs: 1000, MaxMemoryBytes: 1 << 20},
		Verification: job.VerificationConfig{Mode: job.ModeDeterministic, Runners: 2}, MaxPrice: genesis.CBY(1), Tip: new(big.Int),
		TimeoutBlocks: 50, TEERequired: true, Callback: job.CallbackInfo{Actor: types.PubkeyToAddress(owner.PublicKey), Handler: "on_result"},
		ResultSchema: job.ResultSchema{MaxReturnBytes: 100, ExpectedExecutionMs: 100, DataFormat: job.FormatText}, Input: []byte("x")}
	sb, err := spec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	jd := types.JobDispatcherAddress
	rs := c.ok(c.tx(owner, &jd, &types.SubmitJob{Spec: sb}, 0))
	var idb []byte
	if err := codec.Unmarshal(rs[0].Return, &idb); err != nil || len(idb) != 32 {
		t.Fatalf("job id %x: %v", rs[0].Return, err)
	}
	id := types.Hash(idb)
	reveals := map[types.Address]verify.Reveal{}
	var commits []*types.Tx
	for _, a := range byAddress(rmap) {
		r := rmap[a]
		sig := verify.Sign(r.ed, id, r.addr, []byte(result), nil)
		reveals[r.addr] = verify.Reveal{Runner: r.addr, Result: []byte(result), Signature: sig}
		commits = append(commits, c.tx(r.key, &jd, &types.CommitResult{JobID: id, Commitment: verify.Commitment([]byte(result), sig)}, 0))
	}
	c.ok(commits...)
	j := readJob(t, c, id)
	if j.State != job.StateCommitted {
		t.Fatalf("job after commits: %s", j.State)
	}
	return c, rmap, j, reveals
}

// attestResultIn is r's tee_attest_result binding result for job id.
func (r teeRunner) attestResultIn(t *testing.T, id types.Hash, result string) *types.TEEAttestResult {
	h := types.Keccak256([]byte(result))
	e, err := r.att.Attest(context.Background(), attest.ReportDataForResult(r.addr, id, h))
	if err != nil {
		t.Fatal(err)
	}
	eb, _ := e.Encode()
	return &types.TEEAttestResult{JobID: id, ResultHash: h, Evidence: eb}
}

// A Deterministic job's result counts only with each agreeing runner's
// per-job TEE evidence on chain: the aggregator's submission is refused
// (fee only, nothing moves) until both runners attested, then verifies and
// settles exactly as any other job.
func TestDeterministicSubmissionNeedsResultEvidence(t *testing.T) {
	const result = "42"
	c, rmap, j, reveals := deterministicTEEJob(t, result)
	id, agg := j.Spec.JobID, j.Aggregator
	var member types.Address
	for _, a := range byAddress(rmap) {
		if a != agg {
			member = a
		}
	}
	var subs []verify.Reveal
	for _, a := range byAddress(reveals) {
		rv := reveals[a]
		subs = append(subs, rv)
	}
	slices.SortFunc(subs, func(x, y verify.Reveal) int { return bytes.Compare(x.Runner[:], y.Runner[:]) })
	out, err := verify.Verify(verify.Input{Spec: &j.Spec, Commitments: j.Commitments,
		Keys:    map[types.Address]ed25519.PublicKey{agg: rmap[agg].ed.Public().(ed25519.PublicKey), member: rmap[member].ed.Public().(ed25519.PublicKey)},
		Reveals: subs})
	if err != nil || !out.Accepted || len(out.Agreed) != 2 {
		t.Fatalf("local verify: %+v %v", out, err)
	}
	enc, err := (&verify.Submission{Claim: out.Claim(id), Reveals: subs}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	verifier, tv := types.ResultVerifierAddress, types.TEEVerifierAddress
	submit := func() *types.Tx {
		return c.tx(rmap[agg].key, &verifier, &types.SubmitResult{JobID: id, Submission: enc}, 0)
	}

	// No evidence: refused, naming a runner; only the aggregator's fee moves.
	before := teeBalances(t, c, agg, member, types.JobDispatcherAddress)
	tx := submit()
	rs := c.block(tx)
	expectFail(t, rs[0], "InvalidSubmission")
	if !strings.Contains(rs[0].Error, "no TEE evidence") {
		t.Fatalf("refusal does not name the missing evidence: %s", rs[0].Error)
	}
	feeOnly(t, c, before, []*types.Tx{tx}, rs)
	if got := balanceOf(t, c, types.JobDispatcherAddress); got.Cmp(before[types.JobDispatcherAddress]) != 0 {
		t.Fatalf("escrow moved: %s -> %s", before[types.JobDispatcherAddress], got)
	}

	// Only the aggregator's evidence: refused, naming the member. Evidence
	// for another result does not count either.
	c.ok(c.tx(rmap[agg].key, &tv, rmap[agg].attestResultIn(t, id, result), 0), c.tx(rmap[member].key, &tv, rmap[member].attestResultIn(t, id, "41"), 0))
	rs = c.block(submit())
	expectFail(t, rs[0], "InvalidSubmission: "+member.String())
	if j := readJob(t, c, id); j.State != job.StateCommitted {
		t.Fatalf("refused submission moved the job to %s", j.State)
	}

	// Both attested the accepted result (the member's record replaced):
	// accepted in the same way as any other mode.
	c.ok(c.tx(rmap[member].key, &tv, rmap[member].attestResultIn(t, id, result), 0))
	rs = c.ok(submit())
	if !hasEvent(rs[0], verifier, "JobVerified") {
		t.Fatalf("verification receipt %+v", rs[0])
	}
	if j := readJob(t, c, id); j.State != job.StateVerified || len(j.Agreed) != 2 {
		t.Fatalf("job after verification: %s %v", j.State, j.Agreed)
	}
	owner := j.Spec.Submitter
	before = balances(t, c, agg, member, owner, types.TreasuryAddress)
	burnBefore := burned(t, c)
	for readJob(t, c, id).State != job.StateFinalized {
		c.block() // the callback to the owner's account (no actor) fails
	}
	// Two agreeing runners at the base rate: burn 10%, treasury 1%, the pool
	// with a 5% aggregator bonus split equally; the rest refunded.
	x := new(big.Int).Mul(runnerBase, big.NewInt(2))
	burn, treas := mulDiv(x, 1_000, 10_000), mulDiv(x, 100, 10_000)
	pool := sub(sub(x, burn), treas)
	bonus := mulDiv(pool, 500, 10_000)
	share := new(big.Int).Quo(sub(pool, bonus), big.NewInt(2))
	checkDeltas(t, c, before, map[types.Address]*big.Int{agg: add(share, bonus), member: share, owner: sub(genesis.CBY(1), x), types.TreasuryAddress: treas})
	if d := sub(burned(t, c), burnBefore); d.Cmp(burn) != 0 {
		t.Errorf("burned %s, want %s", d, burn)
	}
	if b := balanceOf(t, c, types.JobDispatcherAddress); b.Sign() != 0 {
		t.Errorf("dispatcher keeps %s", b)
	}
	audit(t, c)
}

// After the aggregator's window an individual reveal of a Deterministic job
// without the runner's per-job evidence is refused; with it, it counts.
func TestDeterministicRevealNeedsResultEvidence(t *testing.T) {
	const result = "7"
	c, rmap, j, reveals := deterministicTEEJob(t, result)
	id := j.Spec.JobID
	for readJob(t, c, id).State == job.StateCommitted {
		c.ok()
	}
	verifier, tv := types.ResultVerifierAddress, types.TEEVerifierAddress
	var txs []*types.Tx
	for _, a := range byAddress(reveals) {
		rv := reveals[a]
		b, _ := rv.Encode()
		rs := c.block(c.tx(rmap[a].key, &verifier, &types.RevealResult{JobID: id, Reveal: b}, 0))
		expectFail(t, rs[0], "InvalidReveal: "+a.String()+" has no TEE evidence")
		c.ok(c.tx(rmap[a].key, &tv, rmap[a].attestResultIn(t, id, result), 0))
		txs = append(txs, c.tx(rmap[a].key, &verifier, &types.RevealResult{JobID: id, Reveal: b}, 0))
	}
	c.ok(txs...)
	if j := readJob(t, c, id); j.State != job.StateVerified || len(j.Agreed) != 2 {
		t.Fatalf("job after attested reveals: %s %v", j.State, j.Agreed)
	}
	audit(t, c)
}
