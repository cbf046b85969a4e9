package runner

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// perJobExecutor wraps fixedExecutor and counts executions per job, so a
// test can tell which jobs a restart ran again.
type perJobExecutor struct {
	*fixedExecutor
	mu   sync.Mutex
	runs map[types.Hash]int
}

func (p *perJobExecutor) Execute(ctx context.Context, req executor.Request) (executor.Result, error) {
	p.mu.Lock()
	p.runs[req.JobID]++
	p.mu.Unlock()
	return p.fixedExecutor.Execute(ctx, req)
}

func (p *perJobExecutor) count(id types.Hash) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs[id]
}

// submitMany submits count single-runner (mode none) jobs from one fresh
// account without waiting between them (local nonces), then waits for
// every submission's receipt and returns the job ids.
func (n *testNet) submitMany(t *testing.T, count int) []types.Hash {
	t.Helper()
	spec := httpSpec(1)
	spec.Verification = job.VerificationConfig{Mode: job.ModeNone, Runners: 1}
	// Room for a test to hold execution until all jobs are assigned, on a
	// slow machine, without the wall-time bound cutting the first ones.
	spec.Bounds.MaxWallTimeMs = 20_000
	key, _ := crypto.GenerateKey()
	n.fund(t, types.PubkeyToAddress(key.PublicKey), "100")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var txs []*types.Tx
	for i := range count {
		nonce := uint64(i)
		tx, err := n.client.Account(key).Jobs().Submit(ctx, spec, sdk.TxOptions{Nonce: &nonce})
		if err != nil {
			t.Fatalf("submit %d: %v", i, err)
		}
		txs = append(txs, tx)
	}
	ids := make([]types.Hash, 0, count)
	for i, tx := range txs {
		r, err := n.client.Chain().WaitForReceipt(ctx, tx.Hash())
		if err != nil || r.Receipt.Status != "success" {
			t.Fatalf("submission %d: %+v %v", i, r, err)
		}
		id, err := types.BytesToHash(trimCBORBytes(r.Receipt.Return))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// settled reports whether a mode-none job has its result accepted.
func settled(j *apitypes.Job) bool {
	return j.Status == job.StateVerified || j.Status == job.StateFinalized || j.Status == job.StateFailed
}

// checkOneCommitment fails unless job id was accepted with exactly one
// commitment, the runner's.
func checkOneCommitment(t *testing.T, n *testNet, id types.Hash, runner types.Address) *apitypes.Job {
	t.Helper()
	j := n.waitJob(t, id, 60*time.Second, settled)
	if j.Status == job.StateFailed {
		t.Fatalf("job %s failed: %s", id, j.FailReason)
	}
	if len(j.Commitments) != 1 || j.Commitments[0].Runner != runner {
		t.Fatalf("job %s: want one commitment by %s, have %+v", id, runner, j.Commitments)
	}
	return j
}

// TestPipelineManyJobs: one runner takes 24 jobs that arrive in the same
// few blocks. Its transactions are pipelined (local nonces, many pending at
// once); every job settles with exactly one commitment, and each job ran
// once.
func TestPipelineManyJobs(t *testing.T) {
	n := pipelineNet(t)
	ex := &perJobExecutor{fixedExecutor: &fixedExecutor{out: []byte(`{"price": 5}`)}, runs: map[types.Hash]int{}}
	r := n.newRunner(t, ex, 32)
	ids := n.submitMany(t, 24)
	for _, id := range ids {
		checkOneCommitment(t, n, id, r.d.Address())
		if c := ex.count(id); c != 1 {
			t.Fatalf("job %s executed %d times", id, c)
		}
	}
	if f := n.failedCommits(t, r.d.Address()); len(f) > 0 {
		t.Fatalf("%d of the runner's commits failed, first: %v", len(f), f[:min(len(f), 3)])
	}
}

// TestPipelineRestartMidFlight: the runner is stopped while many of its
// jobs' transactions are signed and journaled but not yet included, then
// restarted on the same data directory. Every job settles with exactly one
// commitment — the one journaled before the stop — and no job whose
// commitment was journaled is executed again.
func TestPipelineRestartMidFlight(t *testing.T) {
	n := pipelineNet(t)
	gate := make(chan struct{})
	ex := &perJobExecutor{fixedExecutor: &fixedExecutor{out: []byte(`{"price": 5}`), gate: gate}, runs: map[types.Hash]int{}}
	r := n.newRunner(t, ex, 32)
	ids := n.submitMany(t, 24)
	// Hold execution until every job is assigned to the runner, then let
	// them all go at once so their commits are built in the same block.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, id := range ids {
		waitState(t, r, id, 60*time.Second, StateExecuting)
	}
	close(gate)
	// Stop as soon as a few commits are journaled: the rest are being
	// executed, built or submitted.
	states := map[JobState]int{}
	journaled := func(st *Store) map[types.Hash]types.Hash {
		recs, err := st.Jobs()
		if err != nil {
			t.Fatal(err)
		}
		m := map[types.Hash]types.Hash{}
		clear(states)
		for _, rec := range recs {
			states[rec.State]++
			if rec.Commitment != (types.Hash{}) && len(rec.Tx) > 0 {
				m[rec.ID] = rec.Commitment
			}
		}
		return m
	}
	for len(journaled(r.d.Store())) < 4 {
		if ctx.Err() != nil {
			t.Fatal("no commits journaled")
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.stop()
	// What the journal holds at the stop, read from the closed daemon's
	// data directory.
	st, err := OpenStoreReadOnly(r.dir + "/runner.db")
	if err != nil {
		t.Fatal(err)
	}
	before := journaled(st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	runs := map[types.Hash]int{}
	for _, id := range ids {
		runs[id] = ex.count(id)
	}
	r.start(t, n)
	for _, id := range ids {
		j := checkOneCommitment(t, n, id, r.d.Address())
		if c, ok := before[id]; ok {
			if j.Commitments[0].Hash != c {
				t.Fatalf("job %s: commitment on chain %s, journaled before the stop %s", id, j.Commitments[0].Hash, c)
			}
			if ex.count(id) != runs[id] {
				t.Fatalf("job %s had a journaled commitment but was executed again", id)
			}
		}
	}
	if f := n.failedCommits(t, r.d.Address()); len(f) > 0 {
		t.Fatalf("%d of the runner's commits failed (a double commit), first: %v", len(f), f[:min(len(f), 3)])
	}
	t.Logf("%d of %d jobs had a journaled commit at the stop; states %v", len(before), len(ids), states)
}

// newRunner starts a runner serving ex with room for maxJobs at once.
func (n *testNet) newRunner(t *testing.T, ex *perJobExecutor, maxJobs uint64) *testRunner {
	t.Helper()
	key, _ := crypto.GenerateKey()
	n.fund(t, types.PubkeyToAddress(key.PublicKey), "100")
	r := &testRunner{key: key, exec: ex.fixedExecutor, real: ex, dir: t.TempDir(),
		opts: func(o *Options) { o.MaxConcurrentJobs = maxJobs }}
	_, r.ed, _ = ed25519.GenerateKey(rand.Reader)
	r.start(t, n)
	return r
}

// failedCommits lists the included commit transactions from a that failed,
// scanning every block: a second commit for a job shows up here. Other
// failed transactions are logged, not counted: under load a submission can
// lose the race with the individual reveal the aggregator timeout calls
// for, which the protocol settles.
func (n *testNet) failedCommits(t *testing.T, a types.Address) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := n.client.Chain().Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for h := uint64(1); h <= st.Height; h++ {
		b, err := n.client.Chain().Block(ctx, strconv.FormatUint(h, 10), true)
		if err != nil {
			t.Fatalf("block %d: %v", h, err)
		}
		for _, r := range b.Receipts {
			if r.Status == "success" || r.Kind == apitypes.ReceiptKindTimer {
				continue
			}
			tx, err := n.client.Chain().Tx(ctx, r.TxHash)
			if err != nil {
				t.Fatalf("tx %s: %v", r.TxHash, err)
			}
			if tx.Tx.From != a {
				continue
			}
			line := fmt.Sprintf("block %d nonce %d: %s", h, tx.Tx.Nonce, r.Error)
			if in, err := types.DecodeInstruction(tx.Tx.Payload); err == nil {
				if _, ok := in.(*types.CommitResult); ok {
					failed = append(failed, line)
					continue
				}
			}
			t.Logf("failed transaction (not a commit): %s", line)
		}
	}
	return failed
}

// TestPipelineForeignNonce: while the runner's transactions are pipelined,
// the operator sends transfers from the runner's own key (another tool
// taking nonces the runner assigned locally). The runner's transactions at
// those nonces are refused or displaced; it resyncs its nonce, rebuilds
// the lost effects, and every job still settles with exactly one
// commitment.
func TestPipelineForeignNonce(t *testing.T) {
	n := pipelineNet(t)
	ex := &perJobExecutor{fixedExecutor: &fixedExecutor{out: []byte(`{"price": 5}`)}, runs: map[types.Hash]int{}}
	r := n.newRunner(t, ex, 32)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The runner's local next nonce is the node's pending one, P, now.
	// Take P+1..P+3 from outside: they wait in the mempool for P, which the
	// runner's next transaction fills, and the runner's own P+1..P+3 then
	// collide with them.
	acc, err := n.client.Chain().Account(ctx, r.d.Address())
	if err != nil {
		t.Fatal(err)
	}
	sink := types.Address{0x5e}
	var foreign []*types.Tx
	for k := range uint64(3) {
		nonce := acc.PendingNonce + 1 + k
		tx, err := n.client.Account(r.key).Transfer(ctx, sink, sdk.MustCBY("0.001"), sdk.TxOptions{Nonce: &nonce})
		if err != nil {
			// A heartbeat of the runner's got there first: that nonce
			// is the runner's, and the collision is the other way.
			t.Logf("foreign transfer at nonce %d refused: %v", nonce, err)
			continue
		}
		foreign = append(foreign, tx)
	}
	ids := n.submitMany(t, 16)
	for range 3 { // and again while the jobs are in flight
		tx, err := n.client.Account(r.key).Transfer(ctx, sink, sdk.MustCBY("0.001"), sdk.TxOptions{})
		if err != nil {
			t.Logf("foreign transfer refused (the runner holds that nonce): %v", err)
			continue
		}
		foreign = append(foreign, tx)
	}
	for _, id := range ids {
		checkOneCommitment(t, n, id, r.d.Address())
	}
	landed := 0
	for _, tx := range foreign {
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
		if rc, err := n.client.Chain().WaitForReceipt(wctx, tx.Hash()); err == nil && rc.Receipt.Status == "success" {
			landed++
		}
		wcancel()
	}
	t.Logf("%d of %d foreign transfers landed", landed, len(foreign))
	// The runner keeps working after the disturbance: a later job settles.
	more := n.submitMany(t, 4)
	for _, id := range more {
		checkOneCommitment(t, n, id, r.d.Address())
	}
}

// pipelineNet is a devnet with 250 ms blocks: the devnet's 10-block
// aggregator and reveal windows (2.5 s) leave a loaded machine's runner,
// carrying two dozen jobs at once or restarting, room to act in them, while
// many of its transactions still share a block.
func pipelineNet(t *testing.T) *testNet {
	d := nodetest.New(t)
	srv := d.Serve(t, 250*time.Millisecond)
	return &testNet{url: srv.URL, client: sdk.New(srv.URL), faucet: d.Faucet}
}
