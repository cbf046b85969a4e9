package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
)

// TestRunnerPrivateTargetActorFault (issue 19, defect 1) runs a devnet and
// three cowboy-runner processes with the default address policy (no
// --allow-private) serving a job whose declared host, localhost, resolves to
// a loopback address. Every runner refuses to dial it; each commits and
// reveals a signed ActorFault report, the job fails on the actor-fault row
// long before its deadline, and no runner loses reputation. Before the fix
// no runner committed, all three were penalised for a missed commit and the
// job held their capacity until its deadline.
func TestRunnerPrivateTargetActorFault(t *testing.T) {
	node := startNode(t, t.TempDir(), freePort(t), 200*time.Millisecond)
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"price": 1}`))
	}))
	t.Cleanup(target.Close)
	executors := filepath.Join(t.TempDir(), "executors.toml")
	if err := os.WriteFile(executors, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var rs []*runnerProc
	for _, name := range []string{"p1", "p2", "p3"} {
		r := initRunnerFlags(t, node, name, executors, "--job-types", "http", "--domains", "localhost")
		r.start()
		rs = append(rs, r)
	}
	waitRunners(t, node, rs)
	spec := priceJob(strings.Replace(target.URL, "127.0.0.1", "localhost", 1)+"/btc", 3000)
	spec.RequiredDomains = []string{"localhost"}
	spec.TimeoutBlocks = 100 // 20 s at 200 ms blocks
	start := time.Now()
	id, _, _, _ := submitJob(t, node, spec)
	j := waitChainJob(t, node, id, 60*time.Second, settled)
	if j.Status != job.StateFailed || j.Payments == nil || j.Payments.Outcome != "actor_fault" || len(j.Reveals) != 3 {
		t.Fatalf("job after %v: %+v payments %+v", time.Since(start), j, j.Payments)
	}
	for _, rv := range j.Reveals {
		if rv.Report == nil || rv.Report.Fault != "actor_fault" {
			t.Fatalf("reveal %+v: want an actor_fault report", rv)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback target was dialled %d times", hits.Load())
	}
	for _, r := range rs {
		rec, err := node.client().Runners().Get(context.Background(), r.addr)
		if err != nil || rec.Reputation != 100 {
			t.Fatalf("runner %s penalised for the job's fault: %+v %v", r.name, rec, err)
		}
		if lj := r.waitJob(id, 10*time.Second, "done"); !strings.Contains(lj.ExecError, "not public") {
			t.Fatalf("runner %s: %+v", r.name, lj)
		}
	}
	t.Logf("settled on actor_fault after %v", time.Since(start))
}
