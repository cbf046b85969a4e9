package runner

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/executor/httpx"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// benchNet is a devnet at the given block interval with a local price feed.
func benchNet(b *testing.B, interval time.Duration) (*testNet, *httptest.Server) {
	d := nodetest.New(b)
	srv := d.Serve(b, interval)
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"price": 97000.5, "currency": "USD"}`)
	}))
	b.Cleanup(feed.Close)
	return &testNet{url: srv.URL, client: sdk.New(srv.URL), faucet: d.Faucet}, feed
}

func benchHTTPExecutor(b *testing.B) executor.Executor {
	e, err := httpx.New(httpx.Config{AllowPrivate: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return e
}

func benchSpec(feed string, runners uint8) *job.JobSpec {
	s := httpSpec(runners)
	s.Input = []byte(fmt.Sprintf(`{"url": %q, "extract": [{"kind": "jsonpath", "query": "$.price", "name": "price"}]}`, feed+"/btc"))
	s.RequiredDomains = []string{"127.0.0.1"}
	if runners == 1 {
		s.Verification = job.VerificationConfig{Mode: job.ModeNone, Runners: 1}
	}
	return s
}

func (n *testNet) benchRunner(b *testing.B, ex executor.Executor, maxJobs uint64) *Daemon {
	key, _ := crypto.GenerateKey()
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	n.fund(b, types.PubkeyToAddress(key.PublicKey), "1000")
	o := Options{Client: n.client, Key: key, ResultKey: ed, Executors: executor.NewRegistry(ex), DataDir: b.TempDir(),
		Stake: sdk.MustCBY("10"), MaxConcurrentJobs: maxJobs, Domains: []string{"127.0.0.1"}, MaxJobValue: sdk.MustCBY("6"),
		Rates: job.RateCard{Base: sdk.MustCBY("0.001")}, AggregatorListen: "127.0.0.1:0", Grace: time.Second, Check: DefaultCheck}
	if os.Getenv("RUNNER_BENCH_LOG") != "" {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	d, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	select {
	case <-d.Ready():
	case err := <-done:
		b.Fatalf("runner: %v", err)
	case <-time.After(30 * time.Second):
		b.Fatal("runner not ready")
	}
	return d
}

// directRate is the baseline: the same HTTP job run straight on the
// executor, sequentially, in jobs per second.
func directRate(b *testing.B, ex executor.Executor, spec *job.JobSpec, n int) (float64, time.Duration) {
	reg := executor.NewRegistry(ex)
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := reg.Execute(context.Background(), executor.Request{Spec: spec}); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	return float64(n) / el.Seconds(), el / time.Duration(n)
}

// BenchmarkRunnerHTTPThroughput measures how many single-runner HTTP jobs
// (mode none) one daemon carries from assignment to an accepted result per
// second, keeping `window` jobs in flight on a 100 ms devnet (beyond ~16
// the devnet's 10-block = 1 s aggregator window overflows), against the
// same job run directly on the executor.
func BenchmarkRunnerHTTPThroughput(b *testing.B) {
	for _, window := range []int{8, 16} {
		b.Run(fmt.Sprintf("inflight=%d", window), func(b *testing.B) { runnerThroughput(b, window) })
	}
}

func runnerThroughput(b *testing.B, window int) {
	n, feed := benchNet(b, 100*time.Millisecond)
	ex := benchHTTPExecutor(b)
	n.benchRunner(b, ex, uint64(window))
	spec := benchSpec(feed.URL, 1)
	direct, _ := directRate(b, ex, spec, 200)

	keys := n.senders(b, window, "100")
	ctx := context.Background()
	// Each sender submits its share of b.N jobs one after another, waiting
	// for the previous one to be verified: `window` jobs in flight.
	errs := make(chan error, window)
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < window; w++ {
		count := b.N / window
		if w < b.N%window {
			count++
		}
		go func(k *senderKey, count int) {
			for i := 0; i < count; i++ {
				if err := submitAndAwait(ctx, n.client, k, spec); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(keys[w], count)
	}
	for w := 0; w < window; w++ {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	b.StopTimer()
	rate := float64(b.N) / el.Seconds()
	b.ReportMetric(rate, "jobs/s")
	b.ReportMetric(direct, "direct-jobs/s")
	b.ReportMetric(rate/direct, "ratio")
}

// submitAndAwait submits spec from k and waits until the job is verified.
func submitAndAwait(ctx context.Context, c *sdk.Client, k *senderKey, spec *job.JobSpec) error {
	_, err := submitAndAwaitID(ctx, c, k, spec)
	return err
}

func submitAndAwaitID(ctx context.Context, c *sdk.Client, k *senderKey, spec *job.JobSpec) (types.Hash, error) {
	nonce := k.next
	tx, err := c.Account(k.key).Jobs().Submit(ctx, spec, sdk.TxOptions{Nonce: &nonce})
	if err != nil {
		return types.Hash{}, err
	}
	k.next++
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	r, err := c.Chain().WaitForReceipt(wctx, tx.Hash())
	if err != nil || r.Receipt.Status != "success" {
		return types.Hash{}, fmt.Errorf("submit: %+v %v", r, err)
	}
	k.lastReceipt = r.Receipt
	id, err := types.BytesToHash(trimCBORBytes(r.Receipt.Return))
	if err != nil {
		return id, err
	}
	for {
		j, err := c.Jobs().Get(wctx, id)
		if err == nil && (j.Status == job.StateVerified || j.Status == job.StateFinalized) {
			return id, nil
		}
		if err == nil && j.Status == job.StateFailed {
			return id, fmt.Errorf("job %s failed: %s", id, j.FailReason)
		}
		if wctx.Err() != nil {
			return id, fmt.Errorf("job %s not verified: %+v", id, j)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type senderKey struct {
	key         *ecdsa.PrivateKey
	next        uint64
	lastReceipt *apitypes.Receipt
}

// BenchmarkCommitRevealLatency measures, per job, the time and blocks from
// submission to the verified result for a committee of three (execute,
// commit, push, aggregate, submit) on a 100 ms devnet, against running the
// job directly on the executor.
func BenchmarkCommitRevealLatency(b *testing.B) {
	n, feed := benchNet(b, 100*time.Millisecond)
	ex := benchHTTPExecutor(b)
	for i := 0; i < 3; i++ {
		n.benchRunner(b, ex, 16)
	}
	spec := benchSpec(feed.URL, 3)
	_, directPer := directRate(b, ex, spec, 50)
	p, err := n.client.Jobs().Params(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	sk, _ := crypto.GenerateKey()
	n.fund(b, types.PubkeyToAddress(sk.PublicKey), "100")
	sender := &senderKey{key: sk}
	var total time.Duration
	var blocks uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		id, err := submitAndAwaitID(context.Background(), n.client, sender, spec)
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		j, err := n.client.Jobs().Get(context.Background(), id)
		if err != nil {
			b.Fatal(err)
		}
		// Verified sets the deadline to the verification height plus
		// the challenge window.
		verifiedAt := j.Deadline - p.ChallengeWindowBlocks
		if j.Status == job.StateFinalized {
			b.Fatalf("job finalized before observed verified; raise the challenge window")
		}
		blocks += verifiedAt - j.SubmittedAt
	}
	b.StopTimer()
	per := total / time.Duration(b.N)
	b.ReportMetric(float64(per.Milliseconds()), "ms/job")
	b.ReportMetric(float64(blocks)/float64(b.N), "blocks/job")
	b.ReportMetric(float64(directPer.Microseconds())/1000, "direct-ms/job")
	b.ReportMetric(per.Seconds()/directPer.Seconds(), "ratio")
}

// BenchmarkRunnerThroughput1s measures how many single-runner HTTP jobs
// (mode none) one daemon carries to a verified result per second on a
// devnet with 1 s blocks when jobs arrive faster than it can serve them:
// b.N jobs are submitted at once from 32 accounts (pre-signed, so the
// submitters are not the bottleneck) and the clock runs from the first
// submission to the last verified job. Limits that bind: the runner's
// transactions per block (each job needs a commit and a submission) and the
// mempool's pending transactions per account.
func BenchmarkRunnerThroughput1s(b *testing.B) {
	n, feed := benchNet(b, time.Second)
	ex := benchHTTPExecutor(b)
	d := n.benchRunner(b, ex, 4096)
	spec := benchSpec(feed.URL, 1)
	const senders = 32
	keys := n.senders(b, senders, "1000")
	ctx := context.Background()
	// Pre-sign every submission (one account holds at most 64 pending),
	// declaring twice what a probe submission used rather than the generic
	// 2M-cycle off-chain estimate, which would let only ten submissions
	// into a block and measure the submitters instead of the runner.
	encoded, err := spec.Encode()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := submitAndAwaitID(ctx, n.client, keys[0], spec); err != nil {
		b.Fatal(err)
	}
	expCycles, expCells := submissionUsage(b, n.client, keys[0])
	var txs []*types.Tx
	for i := 0; i < b.N; i++ {
		k := keys[i%senders]
		nonce := k.next
		k.next++
		to := types.JobDispatcherAddress
		tx, err := n.client.Account(k.key).BuildTx(ctx, sdk.TxRequest{To: &to, Instruction: &types.SubmitJob{Spec: encoded},
			ExpectCycles: expCycles, ExpectCells: expCells, Options: sdk.TxOptions{Nonce: &nonce}})
		if err != nil {
			b.Fatal(err)
		}
		txs = append(txs, tx)
	}
	b.ResetTimer()
	start := time.Now()
	for i, tx := range txs {
		if _, err := n.client.Chain().Submit(ctx, tx); err != nil {
			b.Fatalf("submit %d: %v", i, err)
		}
	}
	// Count verified jobs through the runner's own records.
	deadline := time.Now().Add(time.Duration(b.N)*time.Second + 60*time.Second)
	for {
		recs, err := d.Store().Jobs()
		if err != nil {
			b.Fatal(err)
		}
		done, failed := -1, 0 // the probe job
		for _, r := range recs {
			switch {
			case r.State == StateDone && r.Outcome != "finalized" && r.Outcome != "verified":
				failed++
			case r.State == StateDone || r.State == StateRevealed || r.State == StatePushed:
				done++
			}
		}
		if done+failed >= b.N {
			el := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(done)/el.Seconds(), "jobs/s")
			b.ReportMetric(float64(failed), "failed")
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d jobs done after %v", done, b.N, time.Since(start))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// submissionUsage is twice the cycles and cells k's last submission used.
func submissionUsage(b *testing.B, c *sdk.Client, k *senderKey) (uint64, uint64) {
	b.Helper()
	r := k.lastReceipt
	if r == nil {
		b.Fatal("no probe receipt")
	}
	return 2 * r.CyclesUsed, 2 * r.CellsUsed
}

// senders funds count fresh accounts with cby each.
func (n *testNet) senders(b *testing.B, count int, cby string) []*senderKey {
	keys := make([]*senderKey, count)
	for i := range keys {
		k, _ := crypto.GenerateKey()
		n.fund(b, types.PubkeyToAddress(k.PublicKey), cby)
		keys[i] = &senderKey{key: k}
	}
	return keys
}
