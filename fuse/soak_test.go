package fuse_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/fuse"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// TestProgramsSoak runs the full-size program workloads of issue 13 on a
// mount with default settings (every close and fsync commits): tar -x of a
// tree of 5,013 files compared with diff -r (again from a fresh mount), and
// sqlite3 with 10,000 inserts in 100 transactions. On the current commit
// path they take minutes: `make soak` (COWBOY_SOAK=1) runs them;
// TestFUSE/Programs keeps smaller variants in `make test`.
func TestProgramsSoak(t *testing.T) {
	if os.Getenv("COWBOY_SOAK") == "" {
		t.Skip("set COWBOY_SOAK=1 (make soak)")
	}
	need(t, "tar", "diff", "sqlite3")
	e := newSoakEnv(t)
	key, v := e.volume(t)
	// Funded: every storage epoch the chain challenges the relays on the
	// anchored placement and pays them, as it would a real volume.
	if err := (&onchain.Anchor{Client: e.c, Key: key}).FundVolume(context.Background(), v.ID(), genesis.CBY(50)); err != nil {
		t.Fatal(err)
	}
	mt, dir := mount(t, v, fuse.Options{})
	logRelayHealth(t, e)
	src := filepath.Join(t.TempDir(), "tree")
	const files = 5013
	r := rand.New(rand.NewPCG(5, 13))
	for i := range files {
		d := filepath.Join(src, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("s%d", i%7))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 100+r.IntN(4000))
		for j := range b {
			b[j] = 'a' + byte(r.IntN(26))
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.txt", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ball := filepath.Join(t.TempDir(), "tree.tar")
	run(t, src, "tar", "-cf", ball, ".")
	os.Mkdir(filepath.Join(dir, "tree"), 0o755)
	start := time.Now()
	run(t, dir, "tar", "-xf", ball, "-C", "tree")
	took := time.Since(start)
	t.Logf("tar -x of %d files: %v (%.1f files/s)", files, took, files/took.Seconds())
	run(t, dir, "diff", "-r", src, filepath.Join(dir, "tree"))
	start = time.Now()
	sqliteInserts(t, dir, 100)
	t.Logf("sqlite3, 10,000 inserts in 100 transactions: %v", time.Since(start))
	unmount(t, mt)
	_, dir2 := mount(t, e.reopen(t, key, v.ID()), fuse.Options{})
	run(t, dir2, "diff", "-r", src, filepath.Join(dir2, "tree"))
	if out := run(t, dir2, "sqlite3", filepath.Join(dir2, "db.sqlite"), "SELECT count(*) FROM t; PRAGMA integrity_check;"); out != "7500\nok\n" {
		t.Fatalf("sqlite3 after remount: %q", out)
	}
}

// newSoakEnv is newEnv (20 ms blocks, six relays) with the storage epoch
// and challenge response window sized in time as on a real chain (10 s
// epochs, 5 s to answer) instead of the dev genesis' 20 and 10 blocks,
// which at 20 ms blocks give each relay 200 ms to answer: minutes of a
// loaded machine then make some relay miss one, which flags it unhealthy,
// and a 4+2 volume on six relays cannot place a shard while any is.
func newSoakEnv(t *testing.T) *env {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	d := nodetest.NewWithGenesis(t, nil, func(g *genesis.Genesis) {
		sp := *g.Storage
		sp.EpochBlocks, sp.ResponseWindow = 500, 250
		g.Storage = &sp
	})
	srv := d.Serve(t, 20*time.Millisecond)
	c := sdk.New(srv.URL)
	return &env{url: srv.URL, c: c, relays: startRelays(t, c, 6)}
}

// logRelayHealth logs the relay directory every 10 s until the test ends:
// how many relays are healthy, their heartbeat lag and challenge counts.
// Once TestProgramsSoak failed because every relay had been flagged
// unhealthy; this shows when and why.
func logRelayHealth(t *testing.T, e *env) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Second):
			}
			rs, err := e.c.Relays().List(ctx)
			if err != nil {
				continue
			}
			healthy, lag := 0, uint64(0)
			var answered, missed, failed uint64
			for _, r := range rs {
				if r.Healthy {
					healthy++
				}
				lag = max(lag, r.Height-min(r.Height, r.LastHeartbeat))
				if c := r.Challenges; c != nil {
					answered, missed, failed = answered+c.Answered, missed+c.Missed, failed+c.Failed
				}
			}
			t.Logf("relays: %d of %d healthy, heartbeat lag ≤ %d blocks, challenges answered %d, missed %d, failed %d",
				healthy, len(rs), lag, answered, missed, failed)
		}
	}()
}
