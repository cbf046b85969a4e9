package store

import (
	"errors"
	"math/big"
	"path/filepath"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"go.etcd.io/bbolt"
)

func block(parent *types.Header, root types.Hash, txs []types.Bytes) *types.Block {
	h := types.Header{ChainID: 1, StateRoot: root, TxRoot: types.TxRoot(txs)}
	if parent != nil {
		h.Height = parent.Height + 1
		h.ParentHash = parent.Hash()
	}
	return &types.Block{Header: h, Txs: txs}
}

func TestCommitRejectsBadBlocksAtomically(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chain.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	k := state.ChainKey("x")
	g, err := s.Commit([]state.Write{{Key: k, Value: []byte{1}}}, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return block(nil, root, nil), nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Wrong root, wrong parent: refused, and nothing of them is stored.
	_, err = s.Commit([]state.Write{{Key: k, Value: []byte{2}}}, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return block(&g.Header, types.Hash{9}, nil), nil, nil
	})
	if !errors.Is(err, ErrRootMismatch) {
		t.Fatalf("wrong root: %v", err)
	}
	_, err = s.Commit(nil, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		b := block(&g.Header, root, nil)
		b.Header.ParentHash = types.Hash{1}
		return b, nil, nil
	})
	if err == nil {
		t.Fatal("block not extending head accepted")
	}
	if err := s.View(func(v *View) error {
		val, _, _ := v.Get(k)
		if val[0] != 1 || v.Head().Height != 0 {
			t.Fatalf("failed commit leaked: value %v height %d", val, v.Head().Height)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// A good block with a receipt and event; indexes can be dropped and rebuilt.
	tx := types.Bytes{0x01}
	r := &types.Receipt{TxHash: types.Keccak256(tx), Status: 1, FeePaid: new(big.Int), Burned: new(big.Int), Tip: new(big.Int),
		Events: []types.Event{{Emitter: types.Address{7}, Topic: "t", Data: types.Bytes{0xa0}}}, Return: types.Bytes{}}
	b1, err := s.Commit([]state.Write{{Key: k, Value: nil}}, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return block(&g.Header, root, []types.Bytes{tx}), []*types.Receipt{r}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.RebuildIndexes(); err != nil {
		t.Fatal(err)
	}
	if err := s.View(func(v *View) error {
		if v.Head().Hash() != b1.Hash() {
			t.Fatal("head lost on reopen")
		}
		if _, ok, _ := v.Get(k); ok {
			t.Fatal("deleted key present")
		}
		if _, err := v.BlockByHash(b1.Hash()); err != nil {
			t.Fatal(err)
		}
		evs, _, err := v.Events(EventQuery{Emitter: &types.Address{7}})
		if err != nil || len(evs) != 1 || evs[0].TxHash != r.TxHash {
			t.Fatalf("events after rebuild: %v %v", evs, err)
		}
		// Proofs at both heights.
		h0 := uint64(0)
		_, val, _, err := v.Prove(k, &h0)
		if err != nil || val[0] != 1 {
			t.Fatalf("historical proof: %v %v", val, err)
		}
		_, val, _, err = v.Prove(k, nil)
		if err != nil || val != nil {
			t.Fatalf("absence at head: %v %v", val, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestEmptyValueSurvivesCommit(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k := state.ChainKey("empty")
	if _, err := s.Commit([]state.Write{{Key: k, Value: []byte{}}}, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return block(nil, root, nil), nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	s.View(func(v *View) error {
		val, ok, err := v.Get(k)
		if err != nil || !ok || len(val) != 0 {
			t.Fatalf("empty value: %v %v %v", val, ok, err)
		}
		_, pv, _, err := v.Prove(k, nil)
		if err != nil || pv == nil {
			t.Fatalf("empty value not in the state commitment: %v", err)
		}
		return nil
	})
}

// TestCommitSkipsUnchangedWrites: rewriting a key with its value and
// deleting an absent key leave the root as it was, whether or not the
// store skips them, and a real change still moves it.
func TestCommitSkipsUnchangedWrites(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "chain.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var prev *types.Block
	commit := func(ws ...state.Write) *types.Block {
		t.Helper()
		b, err := s.Commit(ws, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
			h := types.Header{Height: 0, StateRoot: root}
			if prev != nil {
				h.Height, h.ParentHash = prev.Header.Height+1, prev.Hash()
			}
			return &types.Block{Header: h}, nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		prev = b
		return b
	}
	g := commit(state.Write{Key: []byte("a"), Value: []byte{1}}, state.Write{Key: []byte("b"), Value: []byte{2}})
	same := commit(state.Write{Key: []byte("a"), Value: []byte{1}}, state.Write{Key: []byte("zz"), Value: nil})
	if same.Header.StateRoot != g.Header.StateRoot {
		t.Fatal("an unchanged write moved the root")
	}
	moved := commit(state.Write{Key: []byte("a"), Value: []byte{3}}, state.Write{Key: []byte("b"), Value: nil})
	if moved.Header.StateRoot == g.Header.StateRoot {
		t.Fatal("a real change left the root")
	}
	if err := s.View(func(v *View) error {
		if _, ok, _ := v.Get([]byte("b")); ok {
			t.Fatal("deleted key still readable")
		}
		val, ok, _ := v.Get([]byte("a"))
		if !ok || val[0] != 3 {
			t.Fatalf("a = %v %v", val, ok)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A database from before the versioned Merkle node layout is refused with
// ErrOldLayout rather than failing on its first commit.
func TestOpenRefusesOldLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { _, err := tx.CreateBucket([]byte("smt")); return err }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := Open(path); !errors.Is(err, ErrOldLayout) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("Open = %v, want ErrOldLayout", err)
	}
}
