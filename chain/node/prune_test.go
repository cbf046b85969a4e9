package node_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/api"
	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/state/smt"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// A running devnet node with a small kept window prunes state while it
// produces blocks of transfers: balances and proofs at the head (and the
// kept heights) still read and verify, a pruned height's proof is refused
// with ErrPruned (API code state_pruned, HTTP 410), blocks stay, and the
// supply audit holds.
func TestDevNodePrunesWhileRunning(t *testing.T) {
	d := nodetest.New(t)
	d.Node.Close()
	const keep = 4
	n, err := node.Open(node.Config{Home: d.Home, BlockInterval: 20 * time.Millisecond, PruneKeep: keep,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	d.Node = n
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		}
	}
	t.Cleanup(func() {
		stop()
		n.Close()
	})
	srv := httptest.NewServer(api.New(n, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	t.Cleanup(srv.Close)
	c := sdk.New(srv.URL)

	// Transfers from the faucet to a few accounts, each in its own block
	// or a few per block, so the same accounts' nodes are replaced often.
	var to []types.Address
	for range 3 {
		k, _ := crypto.GenerateKey()
		to = append(to, types.PubkeyToAddress(k.PublicKey))
	}
	want := map[types.Address]*big.Int{}
	wait, waitCancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer waitCancel()
	for nonce := uint64(0); nonce < 30; nonce++ {
		a := to[nonce%3]
		tx := transferTx(t, d, d.Faucet, nonce, a, big.NewInt(int64(nonce+1)), 0)
		raw := tx.Encode()
		if _, err := n.SubmitTx(raw); err != nil {
			t.Fatal(err)
		}
		if want[a] == nil {
			want[a] = new(big.Int)
		}
		want[a].Add(want[a], big.NewInt(int64(nonce+1)))
		if nonce%5 == 4 { // let a few blocks pass now and then
			h0 := head(t, n)
			for head(t, n) < h0+2 {
				if wait.Err() != nil {
					t.Fatal("chain stalled")
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	// Wait (polling, generous deadline) until every transfer is in, then
	// until the pruner has moved past the height where they all were.
	var hd, past uint64
	for {
		hd = head(t, n)
		if past == 0 {
			ok := true
			for a, v := range want {
				if balance(t, d, a).Cmp(v) != 0 {
					ok = false
				}
			}
			if ok {
				past = hd
			}
		}
		if past > 0 && n.Store().PrunedBelow() > past {
			break
		}
		if wait.Err() != nil {
			t.Fatalf("not pruned: head %d, kept from %d, transfers in by %d", hd, n.Store().PrunedBelow(), past)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for a, v := range want {
		acc, err := c.Chain().Account(wait, a)
		if err != nil || acc.Balance != v.String() {
			t.Fatalf("API balance of %s: %v, %v; want %s", a, acc, err, v)
		}
		p, err := c.Chain().Proof(wait, state.AccountKey(a), nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Value == nil {
			t.Fatalf("proof of %s has no value", a)
		}
		if err := smt.VerifyProof([32]byte(p.StateRoot), state.AccountKey(a), *p.Value, p.Proof); err != nil {
			t.Fatalf("head proof of %s: %v", a, err)
		}
	}
	// With the node stopped the kept window stands still: every kept
	// height proves every account against its own root.
	stop()
	hd, below := head(t, n), n.Store().PrunedBelow()
	t.Logf("head %d, state kept from %d", hd, below)
	if below+keep > hd+1 { // the pruner may lag a block or two, never lead
		t.Fatalf("kept from %d at head %d: fewer than the last %d heights", below, hd, keep)
	}
	for h := below; h <= hd; h++ {
		for _, a := range to {
			p, err := c.Chain().Proof(wait, state.AccountKey(a), &h)
			if err != nil {
				t.Fatalf("proof at kept height %d: %v", h, err)
			}
			if err := smt.VerifyProof([32]byte(p.StateRoot), state.AccountKey(a), valueOf(p), p.Proof); err != nil {
				t.Fatalf("proof at kept height %d: %v", h, err)
			}
		}
	}
	one := uint64(1)
	_, err = c.Chain().Proof(wait, state.AccountKey(to[0]), &one)
	var ae *sdk.APIError
	if !errors.As(err, &ae) || ae.Code != apitypes.CodePruned || ae.Status != http.StatusGone {
		t.Fatalf("proof at pruned height 1: %v", err)
	}
	if err := n.Store().View(func(v *store.View) error {
		_, _, _, err := v.Prove(state.AccountKey(to[0]), &one)
		if !errors.Is(err, store.ErrPruned) {
			t.Fatalf("Prove at height 1: %v, want ErrPruned", err)
		}
		_, err = v.Block(1)
		return err
	}); err != nil {
		t.Fatalf("block 1 after pruning: %v", err)
	}
	if s := audit(t, d); s == nil {
		t.Fatal("no supply audit")
	}
}

func valueOf(p *apitypes.Proof) []byte {
	if p.Value == nil {
		return nil
	}
	return *p.Value
}

func head(t *testing.T, n *node.Node) uint64 {
	t.Helper()
	h, err := n.Store().Head()
	if err != nil {
		t.Fatal(err)
	}
	return h.Height
}
