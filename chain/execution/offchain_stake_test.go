package execution_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	registry "github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func bi(v int64) *big.Int { return big.NewInt(v) }

// mulDiv is floor(x·n/d), the rounding of every split.
func mulDiv(x *big.Int, n, d int64) *big.Int {
	r := new(big.Int).Mul(x, bi(n))
	return r.Quo(r, bi(d))
}

func sub(a, b *big.Int) *big.Int { return new(big.Int).Sub(a, b) }
func add(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) }

// balances snapshots the balances of as.
func balances(t *testing.T, c *chain, as ...types.Address) map[types.Address]*big.Int {
	m := map[types.Address]*big.Int{}
	for _, a := range as {
		m[a] = balanceOf(t, c, a)
	}
	return m
}

// checkDeltas compares balance changes since before with want (addresses
// missing from want must not have changed).
func checkDeltas(t *testing.T, c *chain, before, want map[types.Address]*big.Int) {
	t.Helper()
	for a, b := range before {
		w := want[a]
		if w == nil {
			w = new(big.Int)
		}
		if d := sub(balanceOf(t, c, a), b); d.Cmp(w) != 0 {
			t.Errorf("%s changed by %s, want %s", a, d, w)
		}
	}
}

// runToVerified commits the reveals of a job's committee and has the
// aggregator submit the verified result; it returns the receipt.
func runToVerified(t *testing.T, c *chain, id types.Hash, rmap map[types.Address]testRunner, reveals map[types.Address]verify.Reveal) *types.Receipt {
	t.Helper()
	j := readJob(t, c, id)
	disp, verifier := types.JobDispatcherAddress, types.ResultVerifierAddress
	var txs []*types.Tx
	var rvs []verify.Reveal
	keys := map[types.Address]ed25519.PublicKey{}
	for _, a := range j.Runners {
		rv := reveals[a]
		rvs = append(rvs, rv)
		keys[a] = rmap[a].ed.Public().(ed25519.PublicKey)
		txs = append(txs, c.tx(rmap[a].key, &disp, &types.CommitResult{JobID: id, Commitment: verify.Commitment(rv.Result, rv.Signature)}, 0))
	}
	c.ok(txs...)
	j = readJob(t, c, id)
	slices.SortFunc(rvs, func(a, b verify.Reveal) int { return bytes.Compare(a.Runner[:], b.Runner[:]) })
	out, err := verify.Verify(verify.Input{Spec: &j.Spec, Commitments: j.Commitments, Keys: keys, Reveals: rvs})
	if err != nil || !out.Accepted {
		t.Fatalf("local verify: %+v %v", out, err)
	}
	sub := verify.Submission{Claim: out.Claim(id), Reveals: rvs}
	enc, err := sub.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return c.ok(c.tx(rmap[j.Aggregator].key, &verifier, &types.SubmitResult{JobID: id, Submission: enc}, 0))[0]
}

// revealReport is a runner's signed result with a usage report.
func (r testRunner) revealReport(id types.Hash, result string, rep verify.Report) verify.Reveal {
	sig := verify.SignReport(r.ed, id, r.addr, []byte(result), nil, &rep)
	return verify.Reveal{Runner: r.addr, Result: []byte(result), Signature: sig, Report: &rep}
}

func TestDelegationPayoutsAndUnbonding(t *testing.T) {
	alice, _ := genKey()
	d1k, _ := genKey()
	d2k, _ := genKey()
	c, runners := newJobChain(t, 1, alice, d1k, d2k)
	r := runners[0]
	d1, d2 := types.PubkeyToAddress(d1k.PublicKey), types.PubkeyToAddress(d2k.PublicKey)
	reg := types.RunnerRegistryAddress
	// Per-ms pricing so the usage report decides the price.
	perMs := big.NewInt(1_000_000_000_000) // 10^-6 CBY per ms
	in := types.RunnerRegister{ResultKey: types.Bytes(r.ed.Public().(ed25519.PublicKey)), JobTypes: []uint64{uint64(job.JobTypeHTTP)},
		Domains: []string{"api.example.com"}, RateBase: runnerBase, RatePerWallMs: perMs, MaxConcurrentJobs: 4, MaxJobValue: genesis.CBY(20)}
	c.ok(c.txValue(r.key, &reg, &in, big.NewInt(0)),
		c.tx(r.key, &reg, &types.RunnerSetCommission{CommissionBps: 1_000}, 0))

	// Self-delegation and delegations breaking the 10% self-bond are refused.
	for _, tc := range []struct {
		key    *ecdsa.PrivateKey
		amount *big.Int
		want   string
	}{
		{r.key, genesis.CBY(1), "InvalidDelegation"},
		{d1k, genesis.CBY(901), "InsufficientSelfBond"}, // 100 / 1001 < 10%
		{d1k, big.NewInt(0), "InvalidAmount"},
	} {
		rs := c.block(c.txValue(tc.key, &reg, &types.RunnerDelegateStake{Runner: r.addr}, tc.amount))
		if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, tc.want) {
			t.Fatalf("delegate %s: %+v", tc.amount, rs[0])
		}
	}
	c.ok(c.txValue(d1k, &reg, &types.RunnerDelegateStake{Runner: r.addr}, genesis.CBY(300)),
		c.txValue(d2k, &reg, &types.RunnerDelegateStake{Runner: r.addr}, genesis.CBY(100)))
	rec := readRunner(t, c, r.addr)
	if rec.Delegated.Cmp(genesis.CBY(400)) != 0 || rec.Delegators != 2 || rec.CommissionBps != 1_000 || rec.EffectiveStake().Cmp(genesis.CBY(500)) != 0 {
		t.Fatalf("runner after delegations %+v", rec)
	}
	if got := balanceOf(t, c, reg); got.Cmp(genesis.CBY(500)) != 0 {
		t.Fatalf("registry holds %s", got)
	}
	// The self-bond cannot be unstaked below 10% of the effective stake.
	rs := c.block(c.tx(r.key, &reg, &types.RunnerUnstake{Amount: genesis.CBY(90)}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "InsufficientStake") {
		t.Fatalf("unstake: %+v", rs[0])
	}
	auditSupply(t, c)

	// A one-runner job; the runner reports 1,500 ms of wall time.
	oracle, id, _ := submitOracleJobN(t, c, alice, 1)
	rep := verify.Report{Usage: job.Usage{WallTimeMs: 2_500, MemoryBytes: 1 << 20}} // > 2 × the expected 1,000 ms
	runToVerified(t, c, id, byAddr(runners), map[types.Address]verify.Reveal{r.addr: r.revealReport(id, `{"price": 1}`, rep)})
	before := balances(t, c, r.addr, d1, d2, oracle, types.TreasuryAddress)
	burnBefore := burned(t, c)
	anomaly := false
	for readJob(t, c, id).State != job.StateFinalized {
		for _, r := range c.ok() {
			anomaly = anomaly || hasEvent(r, types.JobDispatcherAddress, "UsageAnomaly")
		}
	}
	if !anomaly {
		t.Fatal("no UsageAnomaly event for 2.5 × the expected wall time")
	}
	// X = base + 2,500 ms × per_ms; 10% burned, 1% treasury; the single
	// payee is the aggregator: bonus + rest = the whole 89% pool. Delegators
	// share D = P·400/500 less 10% commission, pro rata 300:100.
	x := add(runnerBase, new(big.Int).Mul(perMs, bi(2_500)))
	burn, treas := mulDiv(x, 1_000, 10_000), mulDiv(x, 100, 10_000)
	p := sub(sub(x, burn), treas)
	d := mulDiv(p, 400, 500)
	dpool := sub(d, mulDiv(d, 1_000, 10_000))
	s1, s2 := mulDiv(dpool, 300, 400), mulDiv(dpool, 100, 400)
	checkDeltas(t, c, before, map[types.Address]*big.Int{
		r.addr: sub(sub(p, s1), s2), d1: s1, d2: s2, types.TreasuryAddress: treas, oracle: sub(genesis.CBY(1), x),
	})
	if got := sub(burned(t, c), burnBefore); got.Cmp(burn) != 0 {
		t.Fatalf("burned %s, want %s", got, burn)
	}
	var pays *jobs.JobPayments
	c.st.View(func(v *store.View) (err error) { pays, err = jobs.ReadJobPayments(v, id); return err })
	kinds := []string{}
	for _, tr := range pays.Transfers {
		kinds = append(kinds, tr.Kind)
	}
	if pays.Payment.Cmp(x) != 0 || !slices.Equal(kinds, []string{"burn", "treasury", "runner", "delegator", "delegator", "refund"}) {
		t.Fatalf("payments %+v", pays)
	}
	auditSupply(t, c)

	// Undelegation: more than delegated is refused; the rest unbonds and is
	// withdrawn after the unbonding period.
	rs = c.block(c.tx(d1k, &reg, &types.RunnerUndelegateStake{Runner: r.addr, Amount: genesis.CBY(301)}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "InvalidAmount") {
		t.Fatalf("over-undelegation: %+v", rs[0])
	}
	c.ok(c.tx(d1k, &reg, &types.RunnerUndelegateStake{Runner: r.addr, Amount: genesis.CBY(300)}, 0))
	at := c.head().Height
	if rec := readRunner(t, c, r.addr); rec.Delegated.Cmp(genesis.CBY(100)) != 0 || rec.Delegators != 1 {
		t.Fatalf("runner after undelegation %+v", rec)
	}
	for c.head().Height < at+unbondingBlocks-1 {
		c.ok()
	}
	b1 := balanceOf(t, c, d1)
	rs = c.ok(c.tx(d1k, &reg, &types.RunnerWithdraw{}, 0))
	if got, want := balanceOf(t, c, d1), sub(add(b1, genesis.CBY(300)), rs[0].FeePaid); got.Cmp(want) != 0 {
		t.Fatalf("withdrawn balance %s, want %s", got, want)
	}
	// At most 8 tranches at once.
	for i := 0; i < 8; i++ {
		c.ok(c.tx(d2k, &reg, &types.RunnerUndelegateStake{Runner: r.addr, Amount: big.NewInt(1)}, 0))
	}
	rs = c.block(c.tx(d2k, &reg, &types.RunnerUndelegateStake{Runner: r.addr, Amount: big.NewInt(1)}, 0))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "TooManyTranches") {
		t.Fatalf("ninth tranche: %+v", rs[0])
	}
	auditSupply(t, c)
}

func TestChallengeEquivocationSlashes(t *testing.T) {
	alice, _ := genKey()
	carol, _ := genKey()
	dk, _ := genKey()
	c, runners := newJobChainWith(t, 3, func(p *execution.OffchainParams) { p.Job.ChallengeWindowBlocks = 20 }, alice, carol, dk)
	rmap := byAddr(runners)
	reg, verifier := types.RunnerRegistryAddress, types.ResultVerifierAddress
	carolAddr, dAddr := types.PubkeyToAddress(carol.PublicKey), types.PubkeyToAddress(dk.PublicKey)

	oracle, id, _ := submitOracleJob(t, c, alice, genesis.CBY(1), big.NewInt(0), 5)
	j := readJob(t, c, id)
	reveals := map[types.Address]verify.Reveal{}
	for _, a := range j.Runners {
		reveals[a] = rmap[a].reveal(id, `{"price": 42}`)
	}
	runToVerified(t, c, id, rmap, reveals)
	culprit := rmap[j.Runners[0]]
	// Stake delegated to the culprit is slashed alongside its self-bond.
	c.ok(c.txValue(dk, &reg, &types.RunnerDelegateStake{Runner: culprit.addr}, genesis.CBY(50)))

	// Malformed challenges fail and keep the bond.
	hr := reveals[culprit.addr]
	honest, _ := hr.Encode()
	for _, tc := range []struct {
		bond *big.Int
		ev   []byte
		want string
	}{
		{genesis.CBY(99), honest, "ChallengeBond"},
		{genesis.CBY(100), []byte{1, 2}, "InvalidEvidence"},
	} {
		rs := c.block(c.txValue(carol, &verifier, &types.ChallengeResult{JobID: id, Evidence: tc.ev}, tc.bond))
		if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, tc.want) {
			t.Fatalf("challenge %s: %+v", tc.want, rs[0])
		}
	}
	// Evidence that proves nothing (the honest reveal) forfeits the bond.
	before := balances(t, c, carolAddr)
	burnBefore := burned(t, c)
	rs := c.ok(c.txValue(carol, &verifier, &types.ChallengeResult{JobID: id, Evidence: honest}, genesis.CBY(100)))
	if !hasEvent(rs[0], verifier, "ChallengeRejected") {
		t.Fatalf("rejected challenge %+v", rs[0])
	}
	checkDeltas(t, c, before, map[types.Address]*big.Int{carolAddr: new(big.Int).Neg(add(genesis.CBY(100), rs[0].FeePaid))})
	if got, want := sub(burned(t, c), burnBefore), add(genesis.CBY(100), rs[0].Burned); got.Cmp(want) != 0 {
		t.Fatalf("burned %s, want %s", got, want)
	}
	auditSupply(t, c)

	// The culprit signed a second, different result: equivocation.
	lr := culprit.reveal(id, `{"price": 43}`)
	lie, _ := lr.Encode()
	before = balances(t, c, carolAddr, oracle, culprit.addr, dAddr)
	regBefore := balanceOf(t, c, reg)
	burnBefore = burned(t, c)
	rs = c.ok(c.txValue(carol, &verifier, &types.ChallengeResult{JobID: id, Evidence: lie}, genesis.CBY(100)))
	if !hasEvent(rs[0], verifier, "ChallengeUpheld") || !hasEvent(rs[0], reg, "RunnerSlashed") {
		t.Fatalf("upheld challenge %+v", rs[0])
	}
	// 30% of 100 CBY self-bond + 30% of 50 CBY delegated = 45 CBY; 70% to
	// the challenger, 30% burned; the escrow goes back to the actor.
	slashed := genesis.CBY(45)
	reward := mulDiv(slashed, 7_000, 10_000)
	checkDeltas(t, c, before, map[types.Address]*big.Int{carolAddr: sub(reward, rs[0].FeePaid), oracle: genesis.CBY(1)})
	if got := sub(regBefore, balanceOf(t, c, reg)); got.Cmp(slashed) != 0 {
		t.Fatalf("registry lost %s, want %s", got, slashed)
	}
	if got, want := sub(burned(t, c), burnBefore), add(sub(slashed, reward), rs[0].Burned); got.Cmp(want) != 0 {
		t.Fatalf("burned %s, want %s", got, want)
	}
	rec := readRunner(t, c, culprit.addr)
	if rec.Stake.Cmp(genesis.CBY(70)) != 0 || rec.Delegated.Cmp(genesis.CBY(35)) != 0 || rec.ConsecutiveSlashes != 1 || rec.Reputation != 80 {
		t.Fatalf("slashed runner %+v", rec)
	}
	var ds []registry.Delegation
	c.st.View(func(v *store.View) (err error) { ds, err = registry.ReadDelegations(v, culprit.addr); return err })
	if len(ds) != 1 || ds[0].Amount.Cmp(genesis.CBY(35)) != 0 {
		t.Fatalf("delegations %+v", ds)
	}
	if j := readJob(t, c, id); j.State != job.StateFailed || j.Fail != job.FailChallenged {
		t.Fatalf("challenged job %s fail %d", j.State, j.Fail)
	}
	c.ok() // delivers the failure callback
	got := c.query(oracle, "get", []any{"results"}).([]any)
	if len(got) != 2 || got[1].([]any)[0] != "failed" || got[1].([]any)[2] != uint64(job.FailChallenged) {
		t.Fatalf("callbacks %v", got)
	}
	if b := balanceOf(t, c, types.JobDispatcherAddress); b.Sign() != 0 {
		t.Fatalf("dispatcher keeps %s", b)
	}
	// The job is no longer challengeable.
	rs = c.block(c.txValue(carol, &verifier, &types.ChallengeResult{JobID: id, Evidence: lie}, genesis.CBY(100)))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "NotChallengeable") {
		t.Fatalf("second challenge %+v", rs[0])
	}
	auditSupply(t, c)
}

func TestDelegatorLimitAndEjection(t *testing.T) {
	alice, _ := genKey()
	carol, _ := genKey()
	d1, _ := genKey()
	d2, _ := genKey()
	c, runners := newJobChainWith(t, 3, func(p *execution.OffchainParams) {
		p.MaxDelegators, p.MaxConsecutiveSlashes = 1, 2
		p.Job.ChallengeWindowBlocks = 20
	}, alice, carol, d1, d2)
	rmap := byAddr(runners)
	reg, verifier := types.RunnerRegistryAddress, types.ResultVerifierAddress
	r := runners[0]
	c.ok(c.txValue(d1, &reg, &types.RunnerDelegateStake{Runner: r.addr}, genesis.CBY(10)))
	rs := c.block(c.txValue(d2, &reg, &types.RunnerDelegateStake{Runner: r.addr}, genesis.CBY(10)))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "TooManyDelegators") {
		t.Fatalf("second delegator: %+v", rs[0])
	}
	// The first delegator may add to its delegation.
	c.ok(c.txValue(d1, &reg, &types.RunnerDelegateStake{Runner: r.addr}, genesis.CBY(5)))

	// Two upheld equivocations against the same runner eject it: its
	// remaining self-bond goes to unbonding and it is no longer selected.
	for round := 0; round < 2; round++ {
		_, id, _ := submitOracleJob(t, c, alice, genesis.CBY(1), big.NewInt(0), 5)
		j := readJob(t, c, id)
		reveals := map[types.Address]verify.Reveal{}
		for _, a := range j.Runners {
			reveals[a] = rmap[a].reveal(id, `{"price": 42}`)
		}
		runToVerified(t, c, id, rmap, reveals)
		lr := r.reveal(id, `{"price": 1}`)
		lie, _ := lr.Encode()
		c.ok(c.txValue(carol, &verifier, &types.ChallengeResult{JobID: id, Evidence: lie}, genesis.CBY(100)))
		c.ok() // failure callback
	}
	rec := readRunner(t, c, r.addr)
	// 100 → 70 → 49 CBY self-bond; ejected with 49 CBY unbonding.
	if rec.Status != registry.RunnerExited || rec.Stake.Sign() != 0 || rec.ConsecutiveSlashes != 2 {
		t.Fatalf("ejected runner %+v", rec)
	}
	var tr []registry.Tranche
	c.st.View(func(v *store.View) (err error) { tr, err = registry.ReadTranches(v, r.addr); return err })
	if len(tr) != 1 || tr[0].Amount.Cmp(genesis.CBY(49)) != 0 {
		t.Fatalf("tranches %+v", tr)
	}
	// 15 CBY delegated → 10.5 → 7.35 CBY.
	if rec.Delegated.Cmp(new(big.Int).Mul(big.NewInt(735), big.NewInt(1e16))) != 0 {
		t.Fatalf("delegated %s", rec.Delegated)
	}
	auditSupply(t, c)
}

// TestChallengeDissenterKeepsResult: a dissenter proven to equivocate is
// slashed once; the accepted result stands and is settled.
func TestChallengeDissenterKeepsResult(t *testing.T) {
	alice, _ := genKey()
	carol, _ := genKey()
	c, runners := newJobChainWith(t, 3, func(p *execution.OffchainParams) { p.Job.ChallengeWindowBlocks = 20 }, alice, carol)
	rmap := byAddr(runners)
	verifier := types.ResultVerifierAddress
	_, id, _ := submitOracleJob(t, c, alice, genesis.CBY(1), big.NewInt(0), 5)
	j := readJob(t, c, id)
	reveals := map[types.Address]verify.Reveal{}
	var dissenter testRunner
	for _, a := range j.Runners {
		reveals[a] = rmap[a].reveal(id, `{"price": 42}`)
		if a != j.Aggregator && dissenter.addr == (types.Address{}) {
			dissenter = rmap[a]
			reveals[a] = dissenter.reveal(id, `{"price": 41}`)
		}
	}
	runToVerified(t, c, id, rmap, reveals)
	lr := dissenter.reveal(id, `{"price": 40}`)
	lie, _ := lr.Encode()
	// Rotating the result key after committing does not disown the lie:
	// challenges check the key registered when the runner committed.
	_, newKey, _ := genEd25519()
	reg := types.RunnerRegistryAddress
	c.ok(c.txValue(dissenter.key, &reg, &types.RunnerRegister{ResultKey: types.Bytes(newKey.Public().(ed25519.PublicKey)),
		JobTypes: []uint64{uint64(job.JobTypeHTTP)}, Domains: []string{"api.example.com"}, RateBase: runnerBase,
		MaxConcurrentJobs: 4, MaxJobValue: genesis.CBY(20)}, big.NewInt(0)))
	rotated := dissenter
	rotated.ed = newKey
	nr := rotated.reveal(id, `{"price": 39}`)
	fresh, _ := nr.Encode()
	rs := c.ok(c.txValue(carol, &verifier, &types.ChallengeResult{JobID: id, Evidence: fresh}, genesis.CBY(100)))
	if !hasEvent(rs[0], verifier, "ChallengeRejected") {
		t.Fatalf("evidence under the new key: %+v", rs[0])
	}
	c.ok(c.txValue(carol, &verifier, &types.ChallengeResult{JobID: id, Evidence: lie}, genesis.CBY(100)))
	if j := readJob(t, c, id); j.State != job.StateVerified {
		t.Fatalf("job after a dissenter's slash: %s", j.State)
	}
	if rec := readRunner(t, c, dissenter.addr); rec.Stake.Cmp(genesis.CBY(70)) != 0 {
		t.Fatalf("dissenter stake %s", rec.Stake)
	}
	before := balanceOf(t, c, types.PubkeyToAddress(carol.PublicKey))
	rs = c.block(c.txValue(carol, &verifier, &types.ChallengeResult{JobID: id, Evidence: lie}, genesis.CBY(100)))
	if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "AlreadySlashed") {
		t.Fatalf("replayed evidence: %+v", rs[0])
	}
	if got := sub(before, balanceOf(t, c, types.PubkeyToAddress(carol.PublicKey))); got.Cmp(rs[0].FeePaid) != 0 {
		t.Fatalf("replayed challenge cost %s, want only the fee %s", got, rs[0].FeePaid)
	}
	for readJob(t, c, id).State != job.StateFinalized {
		c.ok()
	}
	auditSupply(t, c)
}
