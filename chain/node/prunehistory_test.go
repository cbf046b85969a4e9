package node_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// A running devnet node with PruneHistory deletes the block history below
// its window while it produces blocks (a transfer's block, receipt and
// tx-index entry go once they fall out of it) and keeps genesis and the
// window readable.
func TestDevNodePrunesHistoryWhileRunning(t *testing.T) {
	d := nodetest.New(t)
	d.Node.Close()
	const keep = 4
	n, err := node.Open(node.Config{Home: d.Home, BlockInterval: 20 * time.Millisecond, PruneKeep: keep, PruneHistory: keep,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	d.Node = n
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		n.Close()
	})

	k, _ := crypto.GenerateKey()
	tx := transferTx(t, d, d.Faucet, 0, types.PubkeyToAddress(k.PublicKey), big.NewInt(1), 0)
	h, err := n.SubmitTx(tx.Encode())
	if err != nil {
		t.Fatal(err)
	}
	var at uint64
	poll := func(what string, cond func(v *store.View) bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			ok := false
			if err := n.Store().View(func(v *store.View) error { ok = cond(v); return nil }); err != nil {
				t.Fatal(err)
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	poll("the transfer's receipt", func(v *store.View) bool {
		loc, _, _, err := v.FindTx(h)
		at = loc.Height
		return err == nil
	})
	poll("the transfer's block pruned", func(v *store.View) bool { return v.Height() >= at+2*keep && n.Store().HistoryBelow() > at })
	if err := n.Store().View(func(v *store.View) error {
		if _, _, _, err := v.FindTx(h); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("pruned transaction: %v, want ErrNotFound", err)
		}
		if _, err := v.Block(at); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("pruned block %d: %v, want ErrNotFound", at, err)
		}
		if _, err := v.Block(0); err != nil {
			t.Errorf("genesis: %v", err)
		}
		if _, err := v.Block(v.Height() - 1); err != nil {
			t.Errorf("a kept block: %v", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
