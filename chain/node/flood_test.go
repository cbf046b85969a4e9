package node_test

import (
	"crypto/ecdsa"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestGappedFloodDoesNotBrickNode is the node-level regression test of
// issue 14's bricked mempool: 160 funded senders each submit nonces 1..63
// (nonce 0 never comes), more than the pool's 10,000 slots, at the going
// fee. A normal transfer and a faucet grant submitted afterwards must
// still be admitted and final within two blocks.
func TestGappedFloodDoesNotBrickNode(t *testing.T) {
	if testing.Short() {
		t.Skip("signs 10,000 transactions")
	}
	d := nodetest.New(t)
	const senders, gapped = 160, 63
	keys := make([]*ecdsa.PrivateKey, senders+1) // the last one is the ordinary user
	var fnonce uint64
	for i := range keys {
		keys[i], _ = crypto.GenerateKey()
		tx := transferTx(t, d, d.Faucet, fnonce, types.PubkeyToAddress(keys[i].PublicKey), big.NewInt(1e18), 2)
		if _, err := d.Node.SubmitTx(tx.Encode()); err != nil {
			t.Fatal(err)
		}
		fnonce++
		if fnonce%50 == 0 {
			d.Produce(t)
		}
	}
	d.Produce(t)
	refused := 0
	for _, k := range keys[:senders] {
		for n := uint64(1); n <= gapped; n++ {
			tx := transferTx(t, d, k, n, types.Address{0xee}, big.NewInt(1), 2)
			if _, err := d.Node.SubmitTx(tx.Encode()); err != nil {
				refused++
			}
		}
	}
	t.Logf("flood: %d gapped transactions offered, %d refused, %d pending", senders*gapped, refused, d.Node.Pool().Len())

	user := keys[senders]
	tx := transferTx(t, d, user, 0, types.Address{0xaa}, big.NewInt(7), 2)
	if _, err := d.Node.SubmitTx(tx.Encode()); err != nil {
		t.Fatalf("normal transfer refused by the flooded pool: %v", err)
	}
	grant, err := d.Node.Faucet(types.Address{0xab}, big.NewInt(1e18))
	if err != nil {
		t.Fatalf("faucet refused by the flooded pool: %v", err)
	}
	for _, h := range []types.Hash{tx.Hash(), grant} {
		final := false
		for range 2 {
			if found(t, d, h) {
				final = true
				break
			}
			d.Produce(t)
		}
		if !final && !found(t, d, h) {
			t.Fatalf("transaction %s not final within 2 blocks", h)
		}
	}
}

func found(t *testing.T, d *nodetest.Devnet, h types.Hash) bool {
	t.Helper()
	err := d.Node.Store().View(func(v *store.View) error {
		_, _, r, err := v.FindTx(h)
		if err == nil && r.Status != types.ReceiptSuccess {
			t.Fatalf("transaction %s failed: status %d", h, r.Status)
		}
		return err
	})
	return err == nil
}
