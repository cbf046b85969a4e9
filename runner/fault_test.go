package runner

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor/httpx"
	"github.com/ethereum/go-ethereum/crypto"
)

// startHTTPRunner starts a daemon serving the real HTTP executor with cfg,
// declaring domains.
func (n *testNet) startHTTPRunner(t *testing.T, cfg httpx.Config, domains ...string) *testRunner {
	t.Helper()
	key, _ := crypto.GenerateKey()
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	n.fund(t, types.PubkeyToAddress(key.PublicKey), "100")
	ex, err := httpx.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &testRunner{key: key, ed: ed, dir: t.TempDir(), exec: &fixedExecutor{}, real: ex,
		opts: func(o *Options) { o.Domains = domains }}
	r.start(t, n)
	return r
}

// TestPrivateTargetIsActorFault (issue 19, defect 1): a job declaring a host
// that resolves to a private address is refused by every runner with the
// default address policy. That refusal is the job's fault: each member
// commits a signed ActorFault report, the job fails at once on the
// actor-fault row (minimum fee) instead of timing out, and no member loses
// reputation. Before the fix no runner committed: every member was
// penalised for a missed commit and the job held capacity to its deadline.
func TestPrivateTargetIsActorFault(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"price": 1}`))
	}))
	defer srv.Close()
	n := newTestNet(t)
	var rs []*testRunner
	for range 3 {
		rs = append(rs, n.startHTTPRunner(t, httpx.Config{}, "localhost"))
	}
	spec := httpSpec(3)
	spec.RequiredDomains = []string{"localhost"}
	spec.Input = []byte("http://localhost:" + srv.URL[len("http://127.0.0.1:"):] + "/price")
	spec.TimeoutBlocks = 400 // 16 s at 40 ms blocks: a timeout would show
	start := time.Now()
	id := n.submit(t, spec)
	j := n.waitJob(t, id, 60*time.Second, finished)
	if j.Status != job.StateFailed || j.Payments == nil || j.Payments.Outcome != "actor_fault" {
		t.Fatalf("job %s after %v: %+v payments %+v", j.Status, time.Since(start), j, j.Payments)
	}
	if len(j.Reveals) != 3 {
		t.Fatalf("want 3 fault reports revealed, got %d", len(j.Reveals))
	}
	for _, rv := range j.Reveals {
		if rv.Report == nil || rv.Report.Fault != "actor_fault" {
			t.Fatalf("reveal %+v: want an actor_fault report", rv)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the private target was reached %d times", hits.Load())
	}
	for _, r := range rs {
		rec := waitState(t, r, id, 10*time.Second, StateDone)
		if rec.Report == nil || rec.Report.Fault != verify.FaultActorFault {
			t.Fatalf("runner record: %+v", rec)
		}
		rn, err := n.client.Runners().Get(context.Background(), r.d.Address())
		if err != nil || rn.Reputation != 100 {
			t.Fatalf("runner penalised for the job's fault: %+v %v", rn, err)
		}
	}
}
