package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// chainWith commits n blocks of 50 state writes each and returns the store.
func chainWith(t *testing.T, n int) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "chain.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var head *types.Header
	for b := 0; b <= n; b++ {
		var ws []state.Write
		for i := range 50 {
			ws = append(ws, state.Write{Key: state.ChainKey(fmt.Sprintf("k%03d", (b*37+i)%200)), Value: []byte(fmt.Sprintf("v%d-%d", b, i))})
		}
		if b > 1 {
			ws = append(ws, state.Write{Key: state.ChainKey(fmt.Sprintf("k%03d", b)), Value: nil}) // deletes
		}
		blk, err := s.Commit(ws, func(root types.Hash) (*types.Block, []*types.Receipt, error) { return block(head, root, nil), nil, nil })
		if err != nil {
			t.Fatal(err)
		}
		head = &blk.Header
	}
	return s
}

func exportAll(t *testing.T, s *Store, maxBytes int) (*types.Header, [][]KV) {
	t.Helper()
	var hdr *types.Header
	var chunks [][]KV
	if err := s.View(func(v *View) error {
		hdr = v.Head()
		return v.ExportState(maxBytes, func(c []KV) error { chunks = append(chunks, c); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return hdr, chunks
}

func feed(chunks [][]KV) func() ([]KV, error) {
	i := 0
	return func() ([]KV, error) {
		if i == len(chunks) {
			return nil, nil
		}
		i++
		return chunks[i-1], nil
	}
}

func TestExportImportState(t *testing.T) {
	src := chainWith(t, 20)
	hdr, chunks := exportAll(t, src, 512)
	if len(chunks) < 3 {
		t.Fatalf("want several chunks at 512 bytes, got %d", len(chunks))
	}
	path := filepath.Join(t.TempDir(), "restored.db")
	if err := ImportState(path, []types.Header{*hdr}, feed(chunks)); err != nil {
		t.Fatal(err)
	}
	if h, err := ImportedHeight(path); err != nil || h != hdr.Height {
		t.Fatalf("imported height %d, %v; want %d", h, err, hdr.Height)
	}
	dst, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	// The same state, a proof against the certified root, and the next
	// block commits on top of it with the root the source gives.
	k := state.ChainKey("k005")
	err = dst.View(func(v *View) error {
		if v.Height() != hdr.Height || v.Base() != hdr.Height {
			t.Fatalf("head %d base %d, want %d", v.Height(), v.Base(), hdr.Height)
		}
		root, _, p, err := v.Prove(k, nil)
		if err != nil || root != hdr.StateRoot || p == nil {
			t.Fatalf("prove: %v %s", err, root)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w := []state.Write{{Key: k, Value: []byte("next")}, {Key: state.ChainKey("k006"), Value: nil}}
	b1, err := src.Commit(w, func(root types.Hash) (*types.Block, []*types.Receipt, error) { return block(hdr, root, nil), nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	b2, err := dst.Commit(w, func(root types.Hash) (*types.Block, []*types.Receipt, error) { return block(hdr, root, nil), nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if b1.Hash() != b2.Hash() {
		t.Fatal("restored chain diverged on the next block")
	}
}

func TestImportStateRefusesWrongRoot(t *testing.T) {
	src := chainWith(t, 5)
	hdr, chunks := exportAll(t, src, 512)
	dir := t.TempDir()
	for name, mut := range map[string]func(h *types.Header, c [][]KV) [][]KV{
		"root":      func(h *types.Header, c [][]KV) [][]KV { h.StateRoot[0] ^= 1; return c },
		"value":     func(h *types.Header, c [][]KV) [][]KV { c[1][0].Value = []byte("forged"); return c },
		"missing":   func(h *types.Header, c [][]KV) [][]KV { return c[1:] },
		"reordered": func(h *types.Header, c [][]KV) [][]KV { return [][]KV{c[1], c[0]} },
	} {
		h := *hdr
		cs := make([][]KV, len(chunks))
		for i := range chunks {
			cs[i] = append([]KV(nil), chunks[i]...)
		}
		path := filepath.Join(dir, name+".db")
		if err := ImportState(path, []types.Header{h}, feed(mut(&h, cs))); !errors.Is(err, ErrRootMismatch) {
			t.Fatalf("%s: %v, want ErrRootMismatch", name, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: refused import left %s", name, path)
		}
	}
}

// A restore cut off half way (here: the source fails mid-stream, as a
// killed process would leave it) is never taken for a complete one.
func TestImportStateIncompleteIsRefused(t *testing.T) {
	src := chainWith(t, 5)
	hdr, chunks := exportAll(t, src, 512)
	path := filepath.Join(t.TempDir(), "restore.db")
	boom := errors.New("peer went away")
	i := 0
	err := ImportState(path, []types.Header{*hdr}, func() ([]KV, error) {
		if i == 1 {
			return nil, boom
		}
		i++
		return chunks[i-1], nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("import: %v", err)
	}
	// A file a crash left (created, never marked complete).
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := ImportedHeight(path); !errors.Is(err, ErrIncompleteImport) {
		t.Fatalf("half restore: %v, want ErrIncompleteImport", err)
	}
}
