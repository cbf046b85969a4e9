package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"go.etcd.io/bbolt"
)

// commitHistoryBlock commits a block of two transactions, each with a
// receipt carrying one event, on top of s's head (or as genesis).
func commitHistoryBlock(t *testing.T, s *Store, i int) {
	t.Helper()
	var parent *types.Header
	if h, err := s.Head(); err == nil {
		parent = h
	}
	txs := []types.Bytes{{byte(i), 0}, {byte(i), 1}}
	var rs []*types.Receipt
	for j := range txs {
		rs = append(rs, &types.Receipt{TxHash: types.Hash{byte(i), byte(j), 7},
			Events: []types.Event{{Emitter: types.Address{byte(j + 1)}, Topic: "moved", Data: types.Bytes{0xa0}}}})
	}
	if _, err := s.Commit([]state.Write{{Key: pruneKey(i), Value: []byte{byte(i)}}}, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return block(parent, root, txs), rs, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestPruneHistory: history pruning deletes the blocks below the kept
// window with every index entry they made (block hash, transaction hash,
// event emitter and topic), in bounded steps, keeps genesis and the
// window readable, and survives a reopen.
func TestPruneHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chain.db")
	s := openStore(t, path)
	for i := range 31 { // genesis and heights 1..30
		commitHistoryBlock(t, s, i)
	}
	steps := 0
	for more := true; more; steps++ {
		var err error
		if _, _, more, err = s.PruneHistoryStep(10, 4); err != nil {
			t.Fatal(err)
		}
	}
	if steps != 5 { // 20 blocks, 4 a step
		t.Errorf("%d steps, want 5", steps)
	}
	if got := s.HistoryBelow(); got != 21 {
		t.Fatalf("history kept from %d, want 21", got)
	}
	// Genesis and heights 21..30 are left: 11 blocks, 22 transactions.
	for b, want := range map[string]int{"headers": 11, "block_hashes": 11, "txs": 22, "receipts": 22, "tx_index": 22, "ev_emitter": 22, "ev_topic": 22} {
		if got := bucketLen(t, s, []byte(b)); got != want {
			t.Errorf("%s: %d keys, want %d", b, got, want)
		}
	}
	if err := s.View(func(v *View) error {
		if _, err := v.Header(20); !errors.Is(err, ErrNotFound) {
			t.Errorf("pruned header 20: %v, want ErrNotFound", err)
		}
		for _, h := range []uint64{0, 21, 30} {
			if b, err := v.Block(h); err != nil || len(b.Txs) != 2 {
				t.Errorf("kept block %d: %v", h, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, path)
	defer s.Close()
	commitHistoryBlock(t, s, 31)
	if _, n, _, err := s.PruneHistoryStep(10, 0); err != nil || n != 1 {
		t.Fatalf("after reopen: deleted %d, %v; want block 21", n, err)
	}
}

// TestPruneOrphanPagesFilled: orphan records are appended in version order
// and pruned from the front, so their pages stay nearly full (with bbolt's
// default half-split they were half empty: as much disk as the nodes they
// make deletable). Page accounting, not timing: deterministic.
func TestPruneOrphanPagesFilled(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "chain.db"))
	defer s.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 400 {
		commitBlock(t, s, randomWrites(rng))
		if _, err := s.Prune(context.Background(), 100, 0); err != nil {
			t.Fatal(err)
		}
	}
	var st bbolt.BucketStats
	if err := s.db.View(func(tx *bbolt.Tx) error {
		st = tx.Bucket(bucketSMTOrphans).Stats()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if st.LeafPageN < 10 {
		t.Fatalf("only %d leaf pages of orphan records: the test measures nothing", st.LeafPageN)
	}
	if fill := float64(st.LeafInuse) / float64(st.LeafAlloc); fill < 0.8 {
		t.Fatalf("orphan-record leaf pages %.0f%% full (%d keys in %d pages), want at least 80%%", 100*fill, st.KeyN, st.LeafPageN)
	}
}
