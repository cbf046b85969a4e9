package node_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/mempool"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TestSubmitStale covers the admission order that looks a transaction up in
// the chain's index only when its nonce is below the sender's: resubmitting
// an included transaction is still "already known", a never-included one
// at a used nonce is "nonce too low", and the next nonce is admitted.
func TestSubmitStale(t *testing.T) {
	d := nodetest.New(t)
	to := types.Address{0xac}
	included := transferTx(t, d, d.Faucet, 0, to, big.NewInt(5), 1)
	if _, err := d.Node.SubmitTx(included.Encode()); err != nil {
		t.Fatal(err)
	}
	if blk := d.Produce(t); len(blk.Txs) != 1 {
		t.Fatalf("block has %d txs, want 1", len(blk.Txs))
	}
	if _, err := d.Node.SubmitTx(included.Encode()); !errors.Is(err, mempool.ErrAlreadyKnown) {
		t.Fatalf("resubmitting an included tx: %v, want %v", err, mempool.ErrAlreadyKnown)
	}
	twin := transferTx(t, d, d.Faucet, 0, to, big.NewInt(6), 1)
	if _, err := d.Node.SubmitTx(twin.Encode()); !errors.Is(err, types.ErrNonceTooLow) {
		t.Fatalf("a different tx at a used nonce: %v, want %v", err, types.ErrNonceTooLow)
	}
	next := transferTx(t, d, d.Faucet, 1, to, big.NewInt(7), 1)
	if _, err := d.Node.SubmitTx(next.Encode()); err != nil {
		t.Fatalf("next nonce: %v", err)
	}
	if blk := d.Produce(t); len(blk.Txs) != 1 || types.Keccak256(blk.Txs[0]) != next.Hash() {
		t.Fatal("next nonce not included")
	}
	if balance(t, d, to).Int64() != 12 {
		t.Fatalf("balance %s, want 12", balance(t, d, to))
	}
}
