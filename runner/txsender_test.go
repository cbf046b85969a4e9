package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestTxSenderFillsHoles: transactions are built with local nonces, many
// per block. A built transaction the node never received (a job that ended
// without re-sending its journaled transaction) leaves a hole that stalls
// every later one; after two blocks the sender refills it, and the stalled
// transactions are included. A refused submission resyncs at once.
func TestTxSenderFillsHoles(t *testing.T) {
	d := nodetest.New(t)
	srv := d.Serve(t, 50*time.Millisecond)
	c := sdk.New(srv.URL)
	key, _ := crypto.GenerateKey()
	from := types.PubkeyToAddress(key.PublicKey)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := c.Chain().Faucet(ctx, from, sdk.MustCBY("10"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chain().WaitForReceipt(ctx, h); err != nil {
		t.Fatal(err)
	}
	s := newTxSender(c, key)
	if err := s.start(ctx, 0); err != nil {
		t.Fatal(err)
	}
	var height uint64 = 1
	heightFn := func() uint64 { return height }
	wait := func(context.Context) error { height++; return nil }
	send := func() *types.Tx {
		tx, err := s.build(ctx, "heartbeat", types.RunnerRegistryAddress, nil, &types.RunnerHeartbeat{}, heightFn, wait)
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	// Ten in one block, no round trip each: consecutive nonces.
	var last *types.Tx
	for i := range 10 {
		tx := send()
		if tx.Nonce() != uint64(i) {
			t.Fatalf("nonce %d, want %d", tx.Nonce(), i)
		}
		_, err := c.Chain().Submit(ctx, tx)
		s.submitted(tx, err)
		if err != nil {
			t.Fatal(err)
		}
		last = tx
	}
	if _, err := c.Chain().WaitForReceipt(ctx, last.Hash()); err != nil {
		t.Fatal(err)
	}
	// A hole: nonce 10 is built but never reaches the node.
	lost := send()
	s.submitted(lost, nil)
	stalled := send()
	if _, err := c.Chain().Submit(ctx, stalled); err != nil {
		t.Fatal(err)
	}
	s.submitted(stalled, nil)
	time.Sleep(300 * time.Millisecond)
	if r, err := c.Chain().Tx(ctx, stalled.Hash()); err != nil || r.Receipt != nil {
		t.Fatalf("the transaction after the hole was included: %+v %v", r, err)
	}
	for range 3 { // blocks pass; the next build sees the hole twice
		height++
		_ = s.refresh0(ctx, height)
	}
	fill := send()
	if fill.Nonce() != lost.Nonce() {
		t.Fatalf("fill nonce %d, want the hole %d", fill.Nonce(), lost.Nonce())
	}
	_, err = c.Chain().Submit(ctx, fill)
	s.submitted(fill, err)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if _, err := c.Chain().WaitForReceipt(wctx, stalled.Hash()); err != nil {
		t.Fatalf("the stalled transaction never landed: %v", err)
	}
	// Filling the hole made the sender ask again where the pending run
	// ends: the next nonce is past the stalled transaction.
	after := send()
	if after.Nonce() != stalled.Nonce()+1 {
		t.Fatalf("after the refill: nonce %d, want %d", after.Nonce(), stalled.Nonce()+1)
	}
	// After a refusal the next build resyncs with the node's pending nonce.
	s.submitted(after, errors.New("refused"))
	height++
	acc, err := c.Chain().Account(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	if next := send(); next.Nonce() != acc.PendingNonce {
		t.Fatalf("after a refusal: nonce %d, want the pending nonce %d", next.Nonce(), acc.PendingNonce)
	}
}

// refresh0 is refresh taking the lock.
func (s *txSender) refresh0(ctx context.Context, height uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refresh(ctx, height)
}
