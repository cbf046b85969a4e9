package store

import (
	"math/big"
	"path/filepath"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TestReceiptsPastTransactions: a block may carry more receipts than
// transactions (timer executions after them); they are stored, indexed by
// their TxHash, listed by Receipts, and FindTx returns them with a nil tx.
func TestReceiptsPastTransactions(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "chain.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g, err := s.Commit(nil, func(root types.Hash) (*types.Block, []*types.Receipt, error) { return block(nil, root, nil), nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	rcpt := func(h types.Hash, topic string) *types.Receipt {
		return &types.Receipt{TxHash: h, Status: 1, FeePaid: new(big.Int), Burned: new(big.Int), Tip: new(big.Int),
			Events: []types.Event{{Emitter: types.TimerEscrowAddress, Topic: topic, Data: types.Bytes{0xa0}}}, Return: types.Bytes{}}
	}
	tx := types.Bytes{0x01}
	timerHash := types.Keccak256([]byte("cowboy/timer"), []byte{1})
	if _, err := s.Commit(nil, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return block(&g.Header, root, []types.Bytes{tx}), []*types.Receipt{rcpt(types.Keccak256(tx), "tx"), rcpt(timerHash, "TimerFired")}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// Fewer receipts than transactions is still refused.
	if _, err := s.Commit(nil, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return block(s.head, root, []types.Bytes{tx}), nil, nil
	}); err == nil {
		t.Fatal("block with a missing receipt accepted")
	}
	if err := s.RebuildIndexes(); err != nil {
		t.Fatal(err)
	}
	if err := s.View(func(v *View) error {
		rs, err := v.Receipts(1)
		if err != nil || len(rs) != 2 || rs[1].TxHash != timerHash {
			t.Fatalf("receipts %v %v", rs, err)
		}
		b, err := v.Block(1)
		if err != nil || len(b.Txs) != 1 {
			t.Fatalf("block %v %v", b, err)
		}
		loc, ftx, r, err := v.FindTx(timerHash)
		if err != nil || ftx != nil || r.TxHash != timerHash || loc.Index != 1 {
			t.Fatalf("FindTx(timer) = %v %v %v %v", loc, ftx, r, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
