package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/rent"
	"github.com/cowboy-foundation/cowboy/pvm"
)

const hoardActor = `from cowboy_sdk import actor

@actor
class Hoard:
    def __init__(self):
        self.storage["n"] = 0

    def fill(self, n, size):
        for i in range(n):
            self.storage["k" + str(1000 + i)] = "x" * size
        self.storage["n"] = n

    def bump(self):
        self.storage["n"] = self.storage["n"] + 1
        return self.storage["n"]
`

// TestRentEvictRestoreCLI: on a devnet with 4-block rent epochs an actor
// is archived while live (cowboy actor archive), runs out of sponsored
// rent, goes overdue, gets the warning and is evicted; its calls then fail
// with ActorDormant; bob pays its debt (rent-pay) and cowboy actor restore
// submits the archive, after which it answers again. Total supply is audited at the
// head on every poll.
func TestRentEvictRestoreCLI(t *testing.T) {
	engine, err := pvm.New(context.Background(), pvm.Config{PoolSize: 1})
	if err != nil {
		t.Fatalf("start PVM: %v", err)
	}
	t.Cleanup(func() { engine.Close() })
	d := nodetest.NewWithGenesis(t, engine, func(g *genesis.Genesis) {
		g.Rent = &rent.Params{EpochBlocks: 4, RatePico: 1_000_000_000_000_000, TargetBytes: 60_000, SweepPerBlock: 8}
	})
	srv := d.Serve(t, 20*time.Millisecond)
	t.Setenv("COWBOY_PASSWORD", "pw")
	h := &harness{t: t, url: srv.URL, home: t.TempDir()}
	audit := func() {
		t.Helper()
		if err := d.Node.Store().View(func(v *store.View) error { _, err := node.AuditSupply(v); return err }); err != nil {
			t.Fatal(err)
		}
	}

	h.must("keys", "new", "alice", "--light-kdf")
	h.must("keys", "new", "bob", "--light-kdf")
	h.must("faucet", "alice", "--value", "10")
	h.must("faucet", "bob", "--value", "10")
	addr := deployed(t, h.must("actor", "deploy", "--from", "alice", "--code", writeFile(t, "hoard.py", hoardActor), "--salt", "h"))
	h.must("actor", "call", "--from", "alice", addr, "fill", "--payload", "[60, 1000]", "--cells", "150000")
	// 20 sponsored epochs (80 blocks) leave the archive ample time on a loaded machine.
	h.must("actor", "rent-sponsor", "--from", "bob", addr, "--epochs", "20")
	// The archive, taken while the actor is live; its storage does not
	// change until eviction.
	file := filepath.Join(t.TempDir(), "hoard.archive")
	var arch struct {
		Root    string `json:"root"`
		Entries int    `json:"entries"`
	}
	if err := json.Unmarshal([]byte(h.must("actor", "archive", addr, "--out", file, "--json")), &arch); err != nil || arch.Entries != 61 {
		t.Fatalf("archive: %+v %v", arch, err)
	}

	// Wait (generously) for the eviction.
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var acc rent.Account
	for acc.Status != rent.StatusEvicted {
		if ctx.Err() != nil {
			t.Fatalf("not evicted in time; last record %+v", acc)
		}
		audit()
		if err := json.Unmarshal([]byte(h.must("actor", "rent", addr, "--json")), &acc); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if acc.Archive == nil || acc.Archive.Root.String() != arch.Root {
		t.Fatalf("kept root %+v, archived %s", acc.Archive, arch.Root)
	}
	// The sweep's events: one of each standing, for any watcher.
	for _, topic := range []string{rent.TopicRentOverdue, rent.TopicEvictionImminent, rent.TopicActorEvicted} {
		if out := h.must("events", "--emitter", "0x000000000000000000000000000000000000000f", "--topic", topic); strings.Count(out, topic) < 1 {
			t.Fatalf("no %s event: %s", topic, out)
		}
	}
	if out := h.must("actor", "rent", addr); !strings.Contains(out, "evicted") || !strings.Contains(out, arch.Root) {
		t.Fatalf("rent show: %s", out)
	}
	if _, err := h.run("", "actor", "call", "--from", "alice", addr, "bump"); err == nil || !strings.Contains(err.Error(), "ActorDormant") {
		t.Fatalf("call to a dormant actor: %v", err)
	}
	// Restore without paying: refused before any transaction.
	if _, err := h.run("", "actor", "restore", "--from", "bob", addr, "--archive", file); err == nil || !strings.Contains(err.Error(), "debt") {
		t.Fatalf("restore with debt: %v", err)
	}
	// bob pays the debt and prepays far ahead (so that a slow machine does
	// not see the restored actor evicted again), then restores it.
	h.must("actor", "rent-pay", "--from", "bob", addr, "--value", "0.001")
	if err := json.Unmarshal([]byte(h.must("actor", "rent", addr, "--json")), &acc); err != nil || acc.Debt.Sign() != 0 || acc.Prepaid.Sign() <= 0 {
		t.Fatalf("after rent-pay: %+v %v", acc, err)
	}
	out := h.must("actor", "restore", "--from", "bob", addr, "--archive", file, "--pay-debt")
	if !strings.Contains(out, "Restored") {
		t.Fatalf("restore: %s", out)
	}
	if out := h.must("actor", "call", "--from", "alice", addr, "bump"); !strings.Contains(out, "Returned 61") {
		t.Fatalf("call after restore: %s", out)
	}
	audit()
}
