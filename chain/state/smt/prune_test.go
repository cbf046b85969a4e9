package smt

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
)

// pruneFixture is a bbolt database of versioned trees with orphan records.
type pruneFixture struct {
	t                     *testing.T
	db                    *bbolt.DB
	nodes, roots, orphans []byte
	root                  [32]byte
	version               uint64
	snaps                 []map[string]string // by version: the key/value set
	rootsAt               [][32]byte
	live                  map[string]string
	keys                  []string
}

func newPruneFixture(t *testing.T) *pruneFixture {
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "p.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.NoSync = true // crash safety is the store's test; this one is about content
	t.Cleanup(func() { db.Close() })
	f := &pruneFixture{t: t, db: db, nodes: []byte("nodes"), roots: []byte("roots"), orphans: []byte("orphans"), live: map[string]string{}}
	for i := range 150 {
		f.keys = append(f.keys, fmt.Sprintf("k%d", i))
	}
	f.keys = append(f.keys, "flip")
	return f
}

// commit writes one version of random changes: updates, deletes, no-op
// rewrites, a value changed and changed back within the version, and a
// key that flips on and off so a later version's root equals an earlier
// one (the root record then moves to the later version).
func (f *pruneFixture) commit(rng *rand.Rand) {
	f.t.Helper()
	err := f.db.Update(func(tx *bbolt.Tx) error {
		s, err := NewBoltVersionedStore(tx, f.nodes, f.roots, f.version)
		if err != nil {
			return err
		}
		if err := s.RecordOrphans(f.orphans); err != nil {
			return err
		}
		tree := New(s, f.root)
		set := func(k, v string) error {
			if v == "" {
				delete(f.live, k)
				return tree.Delete([]byte(k))
			}
			f.live[k] = v
			return tree.Update([]byte(k), []byte(v))
		}
		switch rng.IntN(6) {
		case 0: // an empty version: nothing changes
		case 1: // flip only, so this root repeats an earlier one
			v := ""
			if _, ok := f.live["flip"]; !ok {
				v = "on"
			}
			if err := set("flip", v); err != nil {
				return err
			}
		default:
			for range 1 + rng.IntN(25) {
				k := f.keys[rng.IntN(len(f.keys)-1)]
				old, ok := f.live[k]
				switch r := rng.IntN(8); {
				case ok && r < 2:
					err = set(k, "")
				case ok && r == 2:
					err = set(k, old) // no-op
				case ok && r == 3: // changed and changed back
					if err = set(k, old+"x"); err == nil {
						err = set(k, old)
					}
				default:
					err = set(k, fmt.Sprintf("v%d", rng.IntN(1000)))
				}
				if err != nil {
					return err
				}
			}
		}
		root, err := tree.Commit()
		f.root = root
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	snap := make(map[string]string, len(f.live))
	for k, v := range f.live {
		snap[k] = v
	}
	f.snaps = append(f.snaps, snap)
	f.rootsAt = append(f.rootsAt, f.root)
	f.version++
}

// prune deletes everything only versions < below reference, in batches of max.
func (f *pruneFixture) prune(below uint64, max int) int {
	f.t.Helper()
	total := 0
	for {
		var n int
		var more bool
		err := f.db.Update(func(tx *bbolt.Tx) error {
			var err error
			n, more, err = PruneOrphans(tx, f.nodes, f.roots, f.orphans, below, max)
			return err
		})
		if err != nil {
			f.t.Fatal(err)
		}
		if n > max {
			f.t.Fatalf("batch deleted %d > %d", n, max)
		}
		total += n
		if !more {
			return total
		}
	}
}

// check reads every key at every version >= from and compares with the
// version's snapshot, and proves each against the version's root.
func (f *pruneFixture) check(from uint64) {
	f.t.Helper()
	err := f.db.View(func(tx *bbolt.Tx) error {
		s, err := NewBoltVersionedStore(tx, f.nodes, f.roots, 0)
		if err != nil {
			return err
		}
		for v := from; v < f.version; v++ {
			tree := New(s, f.rootsAt[v])
			for _, k := range f.keys {
				got, found, err := tree.Get([]byte(k))
				if err != nil {
					return fmt.Errorf("version %d key %s: %w", v, k, err)
				}
				want, ok := f.snaps[v][k]
				if found != ok || string(got) != want {
					return fmt.Errorf("version %d key %s: got %q/%v, want %q/%v", v, k, got, found, want, ok)
				}
				p, err := tree.Prove([]byte(k))
				if err != nil {
					return fmt.Errorf("version %d prove %s: %w", v, k, err)
				}
				var val []byte
				if ok {
					val = []byte(want)
				}
				if err := VerifyProof(f.rootsAt[v], []byte(k), val, p); err != nil {
					return fmt.Errorf("version %d verify %s: %w", v, k, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// reachable returns the stored keys (version‖hash) of the nodes of root.
func (f *pruneFixture) reachable(root [32]byte) map[string]bool {
	f.t.Helper()
	out := map[string]bool{}
	err := f.db.View(func(tx *bbolt.Tx) error {
		s, err := NewBoltVersionedStore(tx, f.nodes, f.roots, 0)
		if err != nil {
			return err
		}
		tree := New(s, root)
		var walk func(n *node, depth int) error
		walk = func(n *node, depth int) error {
			if n == nil {
				return nil
			}
			if err := tree.resolve(n, depth); err != nil {
				return err
			}
			out[string(versionedKey(n.ver, n.hash))] = true
			if n.kind == kindInner {
				for _, c := range n.children {
					if err := walk(c, depth+1); err != nil {
						return err
					}
				}
			}
			return nil
		}
		return walk(tree.root, 0)
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *pruneFixture) storedKeys(bucket []byte) map[string]bool {
	out := map[string]bool{}
	_ = f.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucket).ForEach(func(k, _ []byte) error {
			out[string(k)] = true
			return nil
		})
	})
	return out
}

// Pruning while versions are committed keeps every version at or above
// the watermark reading and proving exactly as before (randomized, several
// seeds); pruning up to the head leaves exactly the head's nodes, so no
// dropped node leaks, and the head still reads.
func TestPruneOrphansKeepsKeptVersions(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			f := newPruneFixture(t)
			rng := rand.New(rand.NewPCG(seed, 99))
			const keep = 6
			var below uint64
			for range 70 {
				f.commit(rng)
				if rng.IntN(4) == 0 && f.version > keep {
					below = f.version - keep
					f.prune(below, 1+rng.IntN(7))
				}
			}
			if below == 0 {
				t.Fatal("never pruned")
			}
			f.check(below)
			// Orphan records left are all above the watermark.
			for k := range f.storedKeys(f.orphans) {
				if at := uint64FromKey([]byte(k)); at <= below {
					t.Fatalf("orphan record dropped at %d left after pruning below %d", at, below)
				}
			}
			// Up to the head: only the head's nodes are left.
			head := f.version - 1
			if f.prune(head, 5) == 0 {
				t.Fatal("nothing pruned up to the head")
			}
			f.check(head)
			want, got := f.reachable(f.root), f.storedKeys(f.nodes)
			if len(got) != len(want) {
				t.Fatalf("%d nodes stored after pruning to the head, %d reachable", len(got), len(want))
			}
			for k := range want {
				if !got[k] {
					t.Fatalf("reachable node %x deleted", k)
				}
			}
		})
	}
}

func uint64FromKey(k []byte) uint64 {
	var v uint64
	for _, b := range k[:8] {
		v = v<<8 | uint64(b)
	}
	return v
}

// A pruned version no longer opens: its root (or a node under it) is
// gone, and the read fails with ErrNodeNotFound rather than a wrong value.
func TestPrunedVersionRefuses(t *testing.T) {
	f := newPruneFixture(t)
	rng := rand.New(rand.NewPCG(7, 7))
	for range 20 {
		f.commit(rng)
	}
	f.prune(f.version-1, 100)
	var missing int
	err := f.db.View(func(tx *bbolt.Tx) error {
		s, err := NewBoltVersionedStore(tx, f.nodes, f.roots, 0)
		if err != nil {
			return err
		}
		for v := range f.version - 1 {
			if f.rootsAt[v] == f.root || f.rootsAt[v] == EmptyRoot {
				continue
			}
			tree := New(s, f.rootsAt[v])
			for _, k := range f.keys {
				got, found, err := tree.Get([]byte(k))
				if err != nil {
					if !errors.Is(err, ErrNodeNotFound) {
						return fmt.Errorf("version %d: %w", v, err)
					}
					missing++
					break
				}
				if want, ok := f.snaps[v][k]; found != ok || !bytes.Equal(got, []byte(want)) {
					// Reads that still succeed must be right (shared nodes).
					return fmt.Errorf("version %d key %s: wrong value %q", v, k, got)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if missing == 0 {
		t.Fatal("no pruned version refused a read")
	}
}

// orderRecorder passes orphan records on to a BoltVersionedStore and keeps
// their keys in the order they were put.
type orderRecorder struct {
	*BoltVersionedStore
	keys [][]byte
}

func (r *orderRecorder) PutOrphan(at uint64, ref NodeRef) error {
	r.keys = append(r.keys, orphanKey(at, ref))
	return r.BoltVersionedStore.PutOrphan(at, ref)
}

// A commit puts its orphan records in key order. bbolt splits a page only
// when the transaction commits, so records put in the order the tree
// dropped them (random hashes) each shifted the growing last page: a
// block's commit cost grew with the square of the nodes it replaced
// (issue 14: 70% of a long run's commit CPU was that memmove).
func TestCommitRecordsOrphansInKeyOrder(t *testing.T) {
	f := newPruneFixture(t)
	var root [32]byte
	for version := uint64(0); version < 2; version++ {
		var rec *orderRecorder
		err := f.db.Update(func(tx *bbolt.Tx) error {
			s, err := NewBoltVersionedStore(tx, f.nodes, f.roots, version)
			if err != nil {
				return err
			}
			if err := s.RecordOrphans(f.orphans); err != nil {
				return err
			}
			rec = &orderRecorder{BoltVersionedStore: s}
			tree := New(rec, root)
			for i := range 2_000 {
				if version == 0 || i%4 == 0 {
					if err := tree.Update(fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "v%d.%d", version, i)); err != nil {
						return err
					}
				}
			}
			root, err = tree.Commit()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if version == 1 && len(rec.keys) < 500 {
			t.Fatalf("%d orphan records for 500 changed leaves", len(rec.keys))
		}
		for i := 1; i < len(rec.keys); i++ {
			if bytes.Compare(rec.keys[i-1], rec.keys[i]) >= 0 {
				t.Fatalf("orphan record %d (%x) put after %x: not in key order", i, rec.keys[i], rec.keys[i-1])
			}
		}
	}
}
