package smt

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
)

// A tree on a VersionedStore, committed once per version over many
// versions with updates and deletes, has the roots and proofs of the same
// tree in a MemStore; every earlier root still opens and proves, and a
// version's nodes are stored under it.
func TestVersionedStoreMatchesMemStore(t *testing.T) {
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "v.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	nodes, roots := []byte("nodes"), []byte("roots")
	rng := rand.New(rand.NewPCG(1, 2))
	mem := New(NewMemStore(), EmptyRoot)
	var memRoot, verRoot [32]byte
	type snap struct {
		root [32]byte
		kv   map[string]string
	}
	var snaps []snap
	live := map[string]string{}
	for version := uint64(0); version < 40; version++ {
		err := db.Update(func(tx *bbolt.Tx) error {
			s, err := NewBoltVersionedStore(tx, nodes, roots, version)
			if err != nil {
				return err
			}
			tree := New(s, verRoot)
			for range 1 + rng.IntN(30) {
				k := fmt.Sprintf("k%d", rng.IntN(200))
				if _, ok := live[k]; ok && rng.IntN(3) == 0 {
					delete(live, k)
					if err := tree.Delete([]byte(k)); err != nil {
						return err
					}
					if err := mem.Delete([]byte(k)); err != nil {
						return err
					}
					continue
				}
				v := fmt.Sprintf("v%d", rng.Int())
				live[k] = v
				if err := tree.Update([]byte(k), []byte(v)); err != nil {
					return err
				}
				if err := mem.Update([]byte(k), []byte(v)); err != nil {
					return err
				}
			}
			if verRoot, err = tree.Commit(); err != nil {
				return err
			}
			// Nothing of this commit lands outside its version.
			c := tx.Bucket(nodes).Cursor()
			for k, _ := c.Seek(versionedKey(version+1, [32]byte{})); k != nil; k, _ = c.Next() {
				return fmt.Errorf("node %x stored past version %d", k, version)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("version %d: %v", version, err)
		}
		if memRoot, err = mem.Commit(); err != nil {
			t.Fatal(err)
		}
		if memRoot != verRoot {
			t.Fatalf("version %d: versioned root %x, in-memory root %x", version, verRoot, memRoot)
		}
		kv := map[string]string{}
		for k, v := range live {
			kv[k] = v
		}
		snaps = append(snaps, snap{verRoot, kv})
	}
	err = db.View(func(tx *bbolt.Tx) error {
		s, err := NewBoltVersionedStore(tx, nodes, roots, 0)
		if err != nil {
			return err
		}
		for i, sn := range snaps {
			tree := New(s, sn.root)
			for k := range 200 {
				key := fmt.Sprintf("k%d", k)
				got, found, err := tree.Get([]byte(key))
				if err != nil {
					return fmt.Errorf("version %d get %s: %w", i, key, err)
				}
				want, ok := sn.kv[key]
				if found != ok || (ok && !bytes.Equal(got, []byte(want))) {
					return fmt.Errorf("version %d %s = %q %v, want %q %v", i, key, got, found, want, ok)
				}
				p, err := tree.Prove([]byte(key))
				if err != nil {
					return err
				}
				var val []byte
				if ok {
					val = []byte(want)
				}
				if err := VerifyProof(sn.root, []byte(key), val, p); err != nil {
					return fmt.Errorf("version %d proof of %s: %w", i, key, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
