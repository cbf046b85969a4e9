package cbfs_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

// countingDir is a Directory whose health marks the test sets, counting
// the listings asked of it.
type countingDir struct {
	mu    sync.Mutex
	rs    []cbfs.RelayInfo
	calls int
}

func (d *countingDir) Relays(context.Context) ([]cbfs.RelayInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	return append([]cbfs.RelayInfo(nil), d.rs...), nil
}

func (d *countingDir) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

func (d *countingDir) setHealthy(i int, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rs[i].Healthy = ok
}

// TestCommitsReuseRelayListing: listing the healthy relays asks the chain
// node (about a millisecond, more on a busy node), which a commit on every
// close(2) cannot afford. Commits in quick succession reuse one listing
// (before, every commit asked: calls == commits). When relays die and the
// registry marks them unhealthy, a commit made on the stale listing (which
// still counts them, so it cannot reach its majority) lists again and
// succeeds on the relays healthy now.
func TestCommitsReuseRelayListing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 0)
	dir := &countingDir{rs: append([]cbfs.RelayInfo(nil), cl.dir...)}
	owner, _ := crypto.GenerateKey()
	c := newClient(t, owner, dir, &cbfs.MemAnchor{})
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	put := func(name string) {
		t.Helper()
		if _, err := vol.Put(ctx, name, bytes.NewReader([]byte(name))); err != nil {
			t.Fatalf("put %s: %v", name, err)
		}
	}
	const commits = 40
	before := dir.count()
	start := time.Now()
	for i := range commits {
		put(fmt.Sprintf("/f%02d", i)) // inline: one commit, no shards
	}
	calls := dir.count() - before
	t.Logf("%d commits in %v listed the relays %d times", commits, time.Since(start), calls)
	// One listing per second of commits at most (plus the first); the
	// commits take far less than 10 s even on a loaded machine.
	if calls*4 > commits {
		t.Fatalf("%d commits listed the relays %d times, want a listing reused", commits, calls)
	}

	// Three of six relays die and the registry marks them; the next commit
	// starts from the listing that still has all six (majority 4: only 3
	// answer) and must succeed on the three healthy ones (majority 2).
	put("/warm") // a fresh listing of six, reused by the commit below
	for i := range 3 {
		if err := cl.nodes[i].Close(); err != nil {
			t.Fatal(err)
		}
		dir.setHealthy(i, false)
	}
	start = time.Now()
	put("/after-three-died")
	t.Logf("commit after three relays died: %v", time.Since(start))
	start = time.Now()
	defer func() { t.Logf("read back: %v", time.Since(start)) }()
	var got bytes.Buffer
	if _, err := vol.Get(ctx, "/after-three-died", &got); err != nil || got.String() != "/after-three-died" {
		t.Fatalf("get after the relays died: %v %q", err, got.String())
	}
}
