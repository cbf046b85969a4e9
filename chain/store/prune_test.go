package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/state/smt"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"go.etcd.io/bbolt"
)

const pruneTestKeys = 120

func pruneKey(i int) []byte { return state.ChainKey(fmt.Sprintf("k%d", i)) }

// randomWrites is one block's state changes: sets and deletes over a small
// key space, so nodes are replaced and dropped often.
func randomWrites(rng *rand.Rand) []state.Write {
	var ws []state.Write
	seen := map[int]bool{}
	for range 1 + rng.IntN(20) {
		i := rng.IntN(pruneTestKeys)
		if seen[i] {
			continue
		}
		seen[i] = true
		w := state.Write{Key: pruneKey(i)}
		if rng.IntN(4) != 0 {
			w.Value = []byte(fmt.Sprintf("v%d", rng.IntN(500)))
		}
		ws = append(ws, w)
	}
	sortWrites(ws)
	return ws
}

func sortWrites(ws []state.Write) {
	o := state.NewOverlay(state.MapReader{})
	for _, w := range ws {
		if w.Value == nil {
			o.Delete(w.Key)
		} else {
			o.Set(w.Key, w.Value)
		}
	}
	copy(ws, o.Writes())
}

func openStore(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// commitBlock commits ws on top of s's head (or as genesis).
func commitBlock(t *testing.T, s *Store, ws []state.Write) *types.Block {
	t.Helper()
	var parent *types.Header
	if h, err := s.Head(); err == nil {
		parent = h
	}
	blk, err := s.Commit(ws, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return block(parent, root, nil), nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return blk
}

// proofAt returns the encoded (root, value, proof) of key at height.
func proofAt(s *Store, key []byte, h uint64) (string, error) {
	var out string
	err := s.View(func(v *View) error {
		root, val, p, err := v.Prove(key, &h)
		if err != nil {
			return err
		}
		if err := smt.VerifyProof([32]byte(root), key, val, p); err != nil {
			return err
		}
		enc, err := codec.Marshal(p)
		if err != nil {
			return err
		}
		out = fmt.Sprintf("%s %x %x", root, val, enc)
		return nil
	})
	return out, err
}

func bucketLen(t *testing.T, s *Store, b []byte) int {
	t.Helper()
	n := 0
	if err := s.db.View(func(tx *bbolt.Tx) error {
		n = tx.Bucket(b).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// buildPair commits the same random blocks to a pruning store and an
// archive copy, pruning the first to keep heights every few blocks.
func buildPair(t *testing.T, dir string, seed uint64, blocks int, keep uint64) (pruned, archive *Store) {
	t.Helper()
	pruned = openStore(t, filepath.Join(dir, "pruned.db"))
	archive = openStore(t, filepath.Join(dir, "archive.db"))
	archive.SetArchive(true)
	// Building the fixture needs no fsync per block (the kill -9 child
	// prunes with it).
	pruned.db.NoSync, archive.db.NoSync = true, true
	t.Cleanup(func() { pruned.Close(); archive.Close() })
	rng := rand.New(rand.NewPCG(seed, 5))
	for i := range blocks {
		ws := randomWrites(rng)
		a, b := commitBlock(t, pruned, ws), commitBlock(t, archive, ws)
		if a.Hash() != b.Hash() {
			t.Fatalf("block %d differs between the pruned and archive stores", i)
		}
		if keep > 0 && rng.IntN(3) == 0 {
			if _, err := pruned.Prune(context.Background(), keep, 1+rng.IntN(10)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return pruned, archive
}

// comparePair checks every key at every height of the archive store: at
// or above the pruned store's watermark both give the same root, value and
// proof (which verifies); below it the pruned store refuses with ErrPruned
// while blocks stay readable.
func comparePair(t *testing.T, pruned, archive *Store) {
	t.Helper()
	head, _ := archive.Head()
	below := pruned.PrunedBelow()
	for h := uint64(0); h <= head.Height; h++ {
		for i := range pruneTestKeys {
			want, err := proofAt(archive, pruneKey(i), h)
			if err != nil {
				t.Fatalf("archive height %d: %v", h, err)
			}
			got, err := proofAt(pruned, pruneKey(i), h)
			if h < below {
				if !errors.Is(err, ErrPruned) {
					t.Fatalf("height %d below %d: got %v, want ErrPruned", h, below, err)
				}
				break
			}
			if err != nil || got != want {
				t.Fatalf("height %d key %d: pruned store gives %q, %v; archive %q", h, i, got, err, want)
			}
		}
	}
	if err := pruned.View(func(v *View) error {
		_, err := v.Block(0)
		return err
	}); err != nil {
		t.Fatalf("block history pruned: %v", err)
	}
}

// A store pruned while blocks are committed reads and proves every kept
// height exactly as an unpruned copy does, refuses pruned heights with
// ErrPruned, keeps blocks, and holds fewer Merkle nodes.
func TestPruneKeepsHeightsLikeArchive(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			pruned, archive := buildPair(t, t.TempDir(), seed, 60, 8)
			if pruned.PrunedBelow() == 0 {
				t.Fatal("nothing pruned")
			}
			comparePair(t, pruned, archive)
			if n := bucketLen(t, archive, bucketSMTOrphans); n != 0 {
				t.Fatalf("archive store wrote %d orphan records", n)
			}
			if p, a := bucketLen(t, pruned, bucketSMT), bucketLen(t, archive, bucketSMT); p >= a {
				t.Fatalf("pruned store holds %d nodes, archive %d", p, a)
			}
			if _, err := pruned.Prune(context.Background(), 0, 10); err == nil {
				t.Fatal("keep 0 accepted")
			}
		})
	}
}

// The child half of TestPruneKillNine: prune the store at
// COWBOY_PRUNE_CHILD one node per transaction, printing a line after each.
func TestPruneKillNineChild(t *testing.T) {
	path := os.Getenv("COWBOY_PRUNE_CHILD")
	if path == "" {
		return // only run as TestPruneKillNine's child
	}
	s := openStore(t, path)
	keep, _ := strconv.ParseUint(os.Getenv("COWBOY_PRUNE_KEEP"), 10, 64)
	for {
		_, n, more, err := s.PruneStep(keep, 1)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("pruned %d\n", n)
		if !more {
			fmt.Println("done")
			return
		}
	}
}

// kill -9 during pruning loses nothing: a child process prunes one node per
// transaction and is killed after a random number of them; the reopened
// store still reads every kept height like the archive copy, and a second
// prune finishes the job.
func TestPruneKillNine(t *testing.T) {
	for _, seed := range []uint64{3, 4} {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			dir := t.TempDir()
			pruned, archive := buildPair(t, dir, seed, 50, 0) // not pruned yet
			if err := pruned.Close(); err != nil {
				t.Fatal(err)
			}
			const keep = 5
			killAfter := 1 + rand.New(rand.NewPCG(seed, 1)).IntN(40)
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestPruneKillNineChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "COWBOY_PRUNE_CHILD="+filepath.Join(dir, "pruned.db"), "COWBOY_PRUNE_KEEP="+strconv.Itoa(keep))
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			steps := 0
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if line := sc.Text(); len(line) > 7 && line[:7] == "pruned " {
					if steps++; steps == killAfter {
						break
					}
				}
			}
			if steps < killAfter {
				t.Fatalf("child finished after %d steps (wanted to kill it after %d)", steps, killAfter)
			}
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			_ = cmd.Wait()
			reopened := openStore(t, filepath.Join(dir, "pruned.db"))
			t.Cleanup(func() { reopened.Close() })
			if reopened.PrunedBelow() == 0 {
				t.Fatal("watermark lost")
			}
			comparePair(t, reopened, archive)
			if _, err := reopened.Prune(context.Background(), keep, 0); err != nil {
				t.Fatal(err)
			}
			comparePair(t, reopened, archive)
		})
	}
}
