package smt

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"go.etcd.io/bbolt"
)

// ---- independent reference implementation of the hashing spec ----

type refLeaf struct {
	path      [32]byte
	valueHash [32]byte
}

// refRoot computes the root straight from the package-doc specification,
// without sharing any code with the tree.
func refRoot(pairs map[string][]byte) [32]byte {
	leaves := make([]refLeaf, 0, len(pairs))
	for k, v := range pairs {
		leaves = append(leaves, refLeaf{crypto.Keccak256Hash([]byte(k)), crypto.Keccak256Hash(v)})
	}
	return refSubtree(leaves, 0)
}

func refSubtree(leaves []refLeaf, depth int) [32]byte {
	switch len(leaves) {
	case 0:
		return [32]byte{}
	case 1:
		return crypto.Keccak256Hash([]byte{0x00}, leaves[0].path[:], leaves[0].valueHash[:])
	}
	var left, right []refLeaf
	for _, l := range leaves {
		if l.path[depth/8]&(0x80>>(depth%8)) == 0 {
			left = append(left, l)
		} else {
			right = append(right, l)
		}
	}
	lh, rh := refSubtree(left, depth+1), refSubtree(right, depth+1)
	return crypto.Keccak256Hash([]byte{0x01}, lh[:], rh[:])
}

// ---- helpers ----

func randPairs(r *rand.Rand, n int) map[string][]byte {
	m := make(map[string][]byte, n)
	for len(m) < n {
		k := make([]byte, 1+r.IntN(40))
		for i := range k {
			k[i] = byte(r.Uint32())
		}
		v := make([]byte, 1+r.IntN(64))
		for i := range v {
			v[i] = byte(r.Uint32())
		}
		m[string(k)] = v
	}
	return m
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func mustUpdate(t testing.TB, tr *Tree, k, v []byte) {
	t.Helper()
	if err := tr.Update(k, v); err != nil {
		t.Fatalf("Update(%x): %v", k, err)
	}
}

func mustDelete(t testing.TB, tr *Tree, k []byte) {
	t.Helper()
	if err := tr.Delete(k); err != nil {
		t.Fatalf("Delete(%x): %v", k, err)
	}
}

func mustCommit(t testing.TB, tr *Tree) [32]byte {
	t.Helper()
	root, err := tr.Commit()
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return root
}

func checkGet(t testing.TB, tr *Tree, k, want []byte) {
	t.Helper()
	got, found, err := tr.Get(k)
	if err != nil {
		t.Fatalf("Get(%x): %v", k, err)
	}
	if want == nil {
		if found {
			t.Fatalf("Get(%x) = %x, want absent", k, got)
		}
		return
	}
	if !found || !bytes.Equal(got, want) {
		t.Fatalf("Get(%x) = %x, %v; want %x", k, got, found, want)
	}
}

func buildTree(t testing.TB, store NodeStore, pairs map[string][]byte) *Tree {
	t.Helper()
	tr := New(store, EmptyRoot)
	for _, k := range sortedKeys(pairs) {
		mustUpdate(t, tr, []byte(k), pairs[k])
	}
	return tr
}

// ---- tests ----

func TestEmptyTree(t *testing.T) {
	tr := New(NewMemStore(), EmptyRoot)
	if tr.Root() != EmptyRoot {
		t.Fatalf("empty root = %x", tr.Root())
	}
	if EmptyRoot != ([32]byte{}) {
		t.Fatal("EmptyRoot must be 32 zero bytes")
	}
	checkGet(t, tr, []byte("nope"), nil)
	mustDelete(t, tr, []byte("nope"))
	if root := mustCommit(t, tr); root != EmptyRoot {
		t.Fatalf("committed empty root = %x", root)
	}
	p, err := tr.Prove([]byte("nope"))
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyProof(EmptyRoot, []byte("nope"), nil, p); err != nil {
		t.Fatalf("exclusion in empty tree: %v", err)
	}
}

func TestHashingSpecByHand(t *testing.T) {
	// The hash is legacy Keccak-256 (Ethereum), not NIST SHA3-256.
	if h := crypto.Keccak256Hash(nil); hex.EncodeToString(h[:]) != "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470" {
		t.Fatalf("keccak256(\"\") = %x", h)
	}
	k1, v1 := []byte("alice"), []byte("100")
	tr := New(NewMemStore(), EmptyRoot)
	mustUpdate(t, tr, k1, v1)
	want := crypto.Keccak256Hash([]byte{0x00}, crypto.Keccak256(k1), crypto.Keccak256(v1))
	if tr.Root() != want {
		t.Fatalf("single-leaf root = %x, want leafHash %x", tr.Root(), want)
	}

	// Two leaves: an inner node where their paths diverge, under a chain of
	// inner nodes with one empty child for each shared leading bit.
	k2, v2 := []byte("bob"), []byte("7")
	mustUpdate(t, tr, k2, v2)
	p1, p2 := crypto.Keccak256Hash(k1), crypto.Keccak256Hash(k2)
	l1 := crypto.Keccak256Hash([]byte{0x00}, p1[:], crypto.Keccak256(v1))
	l2 := crypto.Keccak256Hash([]byte{0x00}, p2[:], crypto.Keccak256(v2))
	d := commonPrefixLen((*[32]byte)(&p1), (*[32]byte)(&p2))
	var cur [32]byte
	if bitAt((*[32]byte)(&p1), d) == 0 {
		cur = crypto.Keccak256Hash([]byte{0x01}, l1[:], l2[:])
	} else {
		cur = crypto.Keccak256Hash([]byte{0x01}, l2[:], l1[:])
	}
	zero := make([]byte, 32)
	for i := d - 1; i >= 0; i-- {
		if bitAt((*[32]byte)(&p1), i) == 0 {
			cur = crypto.Keccak256Hash([]byte{0x01}, cur[:], zero)
		} else {
			cur = crypto.Keccak256Hash([]byte{0x01}, zero, cur[:])
		}
	}
	if tr.Root() != cur {
		t.Fatalf("two-leaf root = %x, want %x (shared prefix %d bits)", tr.Root(), cur, d)
	}
}

// TestKnownAnswer pins the root of a fixed key set. If this fails, the
// consensus hashing scheme changed: that is a hard fork, not a test to update.
func TestKnownAnswer(t *testing.T) {
	pairs := knownAnswerPairs()
	tr := buildTree(t, NewMemStore(), pairs)
	const want = "b18319eeaea631748330e8adf36bf91d87225c931fa4ecc2a763e46d05b7dff1"
	got := tr.Root()
	if ref := refRoot(pairs); got != ref {
		t.Fatalf("tree root %x != reference root %x", got, ref)
	}
	if hex.EncodeToString(got[:]) != want {
		t.Fatalf("known-answer root = %x, want %s", got, want)
	}
}

func TestRootMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 5, 17, 100, 1000} {
		pairs := randPairs(r, n)
		tr := buildTree(t, NewMemStore(), pairs)
		if got, want := tr.Root(), refRoot(pairs); got != want {
			t.Fatalf("n=%d: root %x, reference %x", n, got, want)
		}
	}
}

func TestRootIndependentOfOrderAndCommitTiming(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 4242))
	pairs := randPairs(r, 600)
	keys := sortedKeys(pairs)
	want := refRoot(pairs)
	for trial := range 8 {
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		store := NewMemStore()
		tr := New(store, EmptyRoot)
		for i, k := range keys {
			// Overwrite with junk first sometimes, then the real value.
			if r.IntN(4) == 0 {
				mustUpdate(t, tr, []byte(k), []byte("junk"))
			}
			mustUpdate(t, tr, []byte(k), pairs[k])
			switch r.IntN(50) {
			case 0:
				mustCommit(t, tr)
			case 1:
				tr = New(store, mustCommit(t, tr)) // reopen from the store
			case 2:
				tr.Root()
			}
			_ = i
		}
		// Insert and delete extra keys: must leave no trace.
		for i := range 50 {
			mustUpdate(t, tr, []byte(fmt.Sprintf("extra-%d-%d", trial, i)), []byte{1})
		}
		for i := range 50 {
			mustDelete(t, tr, []byte(fmt.Sprintf("extra-%d-%d", trial, i)))
		}
		if got := tr.Root(); got != want {
			t.Fatalf("trial %d: root %x, want %x", trial, got, want)
		}
		if got := mustCommit(t, tr); got != want {
			t.Fatalf("trial %d: committed root %x, want %x", trial, got, want)
		}
	}
}

func TestDeleteRestoresRoot(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pairs := randPairs(r, 300)
	keys := sortedKeys(pairs)
	store := NewMemStore()
	tr := New(store, EmptyRoot)
	roots := [][32]byte{tr.Root()}
	for i, k := range keys {
		mustUpdate(t, tr, []byte(k), pairs[k])
		if i%3 == 0 {
			mustCommit(t, tr)
		}
		roots = append(roots, tr.Root())
	}
	for i := len(keys) - 1; i >= 0; i-- {
		mustDelete(t, tr, []byte(keys[i]))
		if i%5 == 0 {
			tr = New(store, mustCommit(t, tr))
		}
		if got := tr.Root(); got != roots[i] {
			t.Fatalf("after deleting key %d: root %x, want %x", i, got, roots[i])
		}
	}
	if tr.Root() != EmptyRoot {
		t.Fatalf("tree not empty after deleting everything: %x", tr.Root())
	}
	// Deleting in random order from the full tree also ends empty, passing
	// through reference roots.
	tr = buildTree(t, store, pairs)
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for i, k := range keys {
		mustDelete(t, tr, []byte(k))
		delete(pairs, k)
		if i%37 == 0 {
			if got, want := tr.Root(), refRoot(pairs); got != want {
				t.Fatalf("after %d random deletes: root %x, want %x", i+1, got, want)
			}
		}
	}
	if tr.Root() != EmptyRoot {
		t.Fatalf("tree not empty: %x", tr.Root())
	}
}

func TestDeleteMissingIsNoop(t *testing.T) {
	tr := buildTree(t, NewMemStore(), map[string][]byte{"a": {1}, "b": {2}, "c": {3}})
	before := mustCommit(t, tr)
	for i := range 100 {
		mustDelete(t, tr, []byte(fmt.Sprintf("missing-%d", i)))
	}
	if tr.Root() != before {
		t.Fatal("deleting missing keys changed the root")
	}
}

func TestUpdateValidation(t *testing.T) {
	tr := New(NewMemStore(), EmptyRoot)
	for _, v := range [][]byte{nil, {}} {
		if err := tr.Update([]byte("k"), v); !errors.Is(err, ErrEmptyValue) {
			t.Fatalf("Update with empty value: err = %v, want ErrEmptyValue", err)
		}
	}
	// Same value again leaves the committed tree untouched (nothing dirty).
	mustUpdate(t, tr, []byte("k"), []byte("v"))
	store := &countingStore{NodeStore: NewMemStore()}
	tr = New(store, EmptyRoot)
	mustUpdate(t, tr, []byte("k"), []byte("v"))
	mustUpdate(t, tr, []byte("k2"), []byte("v2"))
	mustCommit(t, tr)
	puts := store.puts
	mustUpdate(t, tr, []byte("k"), []byte("v"))
	mustCommit(t, tr)
	if store.puts != puts {
		t.Fatalf("re-setting an identical value wrote %d nodes", store.puts-puts)
	}
	// Values are copied in and out.
	v := []byte("mutable")
	mustUpdate(t, tr, []byte("m"), v)
	v[0] = 'X'
	checkGet(t, tr, []byte("m"), []byte("mutable"))
	got, _, _ := tr.Get([]byte("m"))
	got[0] = 'Y'
	checkGet(t, tr, []byte("m"), []byte("mutable"))
}

func TestGetAfterOps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	store := NewMemStore()
	tr := New(store, EmptyRoot)
	ref := map[string][]byte{}
	for step := range 3000 {
		k := []byte(fmt.Sprintf("k%d", r.IntN(400)))
		switch op := r.IntN(10); {
		case op < 6:
			v := []byte(fmt.Sprintf("v%d", r.Uint64()))
			mustUpdate(t, tr, k, v)
			ref[string(k)] = v
		case op < 9:
			mustDelete(t, tr, k)
			delete(ref, string(k))
		default:
			tr = New(store, mustCommit(t, tr))
		}
		checkGet(t, tr, k, ref[string(k)])
		if step%500 == 0 {
			for i := range 400 {
				kk := []byte(fmt.Sprintf("k%d", i))
				checkGet(t, tr, kk, ref[string(kk)])
			}
		}
	}
	if got, want := tr.Root(), refRoot(ref); got != want {
		t.Fatalf("root %x, want %x", got, want)
	}
}

func TestHistoricalRoots(t *testing.T) {
	store := NewMemStore()
	tr := New(store, EmptyRoot)
	var roots [][32]byte
	var states []map[string][]byte
	cur := map[string][]byte{}
	for block := range 10 {
		for i := range 50 {
			k := fmt.Sprintf("key-%d", (block*37+i*11)%120)
			if i%7 == 3 {
				mustDelete(t, tr, []byte(k))
				delete(cur, k)
				continue
			}
			v := []byte(fmt.Sprintf("block-%d-%d", block, i))
			mustUpdate(t, tr, []byte(k), v)
			cur[k] = v
		}
		roots = append(roots, mustCommit(t, tr))
		states = append(states, maps(cur))
	}
	for i, root := range roots {
		old := New(store, root)
		for j := range 120 {
			k := fmt.Sprintf("key-%d", j)
			checkGet(t, old, []byte(k), states[i][k])
			p, err := old.Prove([]byte(k))
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyProof(root, []byte(k), states[i][k], p); err != nil {
				t.Fatalf("historical proof, block %d key %s: %v", i, k, err)
			}
		}
	}
}

func maps(m map[string][]byte) map[string][]byte {
	c := make(map[string][]byte, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func TestBoltStoreReopen(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "state.db")
	bucket := []byte("smt")
	db, err := bbolt.Open(dbPath, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	pairs1 := randPairs(r, 500)
	var root1 [32]byte
	err = db.Update(func(tx *bbolt.Tx) error {
		s, err := NewBoltStore(tx, bucket)
		if err != nil {
			return err
		}
		tr := buildTree(t, s, pairs1)
		root1, err = tr.Commit()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Second block: modify half, delete some, add some.
	pairs2 := maps(pairs1)
	var root2 [32]byte
	err = db.Update(func(tx *bbolt.Tx) error {
		s, err := NewBoltStore(tx, bucket)
		if err != nil {
			return err
		}
		tr := New(s, root1)
		for i, k := range sortedKeys(pairs1) {
			switch i % 4 {
			case 0:
				pairs2[k] = []byte("modified")
				if err := tr.Update([]byte(k), pairs2[k]); err != nil {
					return err
				}
			case 1:
				delete(pairs2, k)
				if err := tr.Delete([]byte(k)); err != nil {
					return err
				}
			}
		}
		for k, v := range randPairs(r, 100) {
			pairs2[k] = v
			if err := tr.Update([]byte(k), v); err != nil {
				return err
			}
		}
		root2, err = tr.Commit()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = bbolt.Open(dbPath, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bbolt.Tx) error {
		s, err := NewBoltStore(tx, bucket)
		if err != nil {
			return err
		}
		for _, c := range []struct {
			root  [32]byte
			pairs map[string][]byte
		}{{root1, pairs1}, {root2, pairs2}} {
			if got := refRoot(c.pairs); got != c.root {
				t.Fatalf("committed root %x != reference %x", c.root, got)
			}
			tr := New(s, c.root)
			for _, k := range sortedKeys(pairs1) {
				checkGet(t, tr, []byte(k), c.pairs[k])
			}
			for k, v := range c.pairs {
				checkGet(t, tr, []byte(k), v)
			}
			// A read-only store cannot commit changes.
			mustUpdate(t, tr, []byte("new"), []byte("x"))
			if _, err := tr.Commit(); !errors.Is(err, ErrReadOnly) {
				t.Fatalf("commit on read-only tx: err = %v, want ErrReadOnly", err)
			}
		}
		// A bucket that does not exist reads as empty.
		s2, err := NewBoltStore(tx, []byte("absent"))
		if err != nil {
			return err
		}
		if _, _, err := New(s2, root1).Get([]byte("x")); !errors.Is(err, ErrNodeNotFound) {
			t.Fatalf("missing bucket: err = %v, want ErrNodeNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMissingAndCorruptNodes(t *testing.T) {
	store := NewMemStore()
	tr := New(store, [32]byte{1})
	if _, _, err := tr.Get([]byte("k")); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("Get on missing root: %v", err)
	}
	if err := tr.Update([]byte("k"), []byte("v")); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("Update on missing root: %v", err)
	}
	if _, err := tr.Prove([]byte("k")); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("Prove on missing root: %v", err)
	}
	if tr.Root() != ([32]byte{1}) {
		t.Fatal("failed update changed the root")
	}
	for name, data := range map[string][]byte{
		"empty":       {},
		"bad tag":     append([]byte{0x02}, make([]byte, 64)...),
		"short inner": append([]byte{0x01}, make([]byte, 63)...),
		"long inner":  append([]byte{0x01}, bytes.Repeat([]byte{1}, 65)...),
		"zero inner":  append([]byte{0x01}, make([]byte, 64)...),
		"short leaf":  append([]byte{0x00}, make([]byte, 32)...),
	} {
		h := crypto.Keccak256Hash([]byte(name))
		if err := store.PutNode(h, data); err != nil {
			t.Fatal(err)
		}
		if _, _, err := New(store, h).Get([]byte("k")); !errors.Is(err, ErrCorruptNode) {
			t.Fatalf("%s: err = %v, want ErrCorruptNode", name, err)
		}
	}
}

// countingStore counts puts and can fail the n-th Get or Put.
type countingStore struct {
	NodeStore
	gets, puts         int
	failGetAt, failPut int // 1-based; 0 = never
}

var errInjected = errors.New("injected failure")

func (s *countingStore) GetNode(h [32]byte) ([]byte, error) {
	s.gets++
	if s.gets == s.failGetAt {
		return nil, errInjected
	}
	return s.NodeStore.GetNode(h)
}

func (s *countingStore) PutNode(h [32]byte, data []byte) error {
	s.puts++
	if s.puts == s.failPut {
		return errInjected
	}
	return s.NodeStore.PutNode(h, data)
}

func TestFailedOperationsLeaveTreeUnchanged(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	pairs := randPairs(r, 200)
	mem := NewMemStore()
	root := mustCommit(t, buildTree(t, mem, pairs))
	keys := sortedKeys(pairs)
	failedWithDirty := 0
	for i := range 300 {
		cs := &countingStore{NodeStore: mem}
		tr := New(cs, root)
		// Some uncommitted changes first, so dirty (in-place modifiable)
		// nodes sit on the failing operation's path.
		base := maps(pairs)
		for j := range i % 4 {
			k := fmt.Sprintf("dirty-%d-%d", i, j)
			mustUpdate(t, tr, []byte(k), []byte("d"))
			base[k] = []byte("d")
		}
		before := tr.Root()
		if i%3 == 0 {
			tr = New(cs, root) // and sometimes none at all
			base = pairs
			before = root
		}
		cs.failGetAt = cs.gets + 1 + r.IntN(6)
		var err error
		k := []byte(keys[(i*7)%len(keys)])
		if i%2 == 0 {
			err = tr.Delete(k)
		} else {
			err = tr.Update([]byte(fmt.Sprintf("new-%d", i)), []byte("v"))
		}
		if err != nil && !errors.Is(err, errInjected) {
			t.Fatal(err)
		}
		if err != nil && tr.Root() != before {
			t.Fatalf("op %d failed but changed the root", i)
		}
		if err != nil && i%3 != 0 && i%4 != 0 {
			failedWithDirty++
		}
		cs.failGetAt = 0
		// Whatever happened, the tree must still be consistent.
		want := base
		if err == nil {
			want = maps(base)
			if i%2 == 0 {
				delete(want, string(k))
			} else {
				want[fmt.Sprintf("new-%d", i)] = []byte("v")
			}
		}
		if got := tr.Root(); got != refRoot(want) {
			t.Fatalf("op %d: root %x, want %x", i, got, refRoot(want))
		}
		for kk, v := range want {
			checkGet(t, tr, []byte(kk), v)
		}
	}
	if failedWithDirty < 20 {
		t.Fatalf("only %d injected failures hit a tree with dirty nodes", failedWithDirty)
	}
}

func TestCommitRetryAfterPutFailure(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	pairs := randPairs(r, 300)
	mem := NewMemStore()
	cs := &countingStore{NodeStore: mem, failPut: 150}
	tr := buildTree(t, cs, pairs)
	if _, err := tr.Commit(); !errors.Is(err, errInjected) {
		t.Fatalf("first commit: err = %v, want injected failure", err)
	}
	root := mustCommit(t, tr)
	if root != refRoot(pairs) {
		t.Fatal("root after retried commit differs from reference")
	}
	re := New(mem, root)
	for k, v := range pairs {
		checkGet(t, re, []byte(k), v)
	}
}

func TestCommitWritesOnlyChangedNodes(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	pairs := randPairs(r, 2000)
	cs := &countingStore{NodeStore: NewMemStore()}
	tr := buildTree(t, cs, pairs)
	mustCommit(t, tr)
	if n := mustCommit(t, tr); n != tr.Root() || cs.puts == 0 {
		t.Fatal("unexpected")
	}
	puts := cs.puts
	mustCommit(t, tr)
	if cs.puts != puts {
		t.Fatalf("second commit with no changes wrote %d nodes", cs.puts-puts)
	}
	mustUpdate(t, tr, []byte(sortedKeys(pairs)[0]), []byte("changed"))
	mustCommit(t, tr)
	// One leaf plus its ancestors: about log2(2000) ~ 11 nodes, never hundreds.
	if n := cs.puts - puts; n < 2 || n > 40 {
		t.Fatalf("single update wrote %d nodes", n)
	}
}

// TestDeepPaths exercises paths that share up to 255 leading bits, which
// keccak keys cannot produce in practice.
func TestDeepPaths(t *testing.T) {
	var base [32]byte
	for i := range base {
		base[i] = 0x5A
	}
	flip := func(bit int) [32]byte {
		p := base
		p[bit/8] ^= 0x80 >> (bit % 8)
		return p
	}
	paths := [][32]byte{base, flip(255), flip(254), flip(128), flip(0), flip(7)}
	store := NewMemStore()
	tr := New(store, EmptyRoot)
	leaves := make([]refLeaf, 0, len(paths))
	for i, p := range paths {
		v := []byte{byte(i + 1)}
		if err := tr.updatePath(p, v); err != nil {
			t.Fatal(err)
		}
		leaves = append(leaves, refLeaf{p, crypto.Keccak256Hash(v)})
		if got, want := tr.Root(), refSubtree(leaves, 0); got != want {
			t.Fatalf("after %d deep inserts: root %x, want %x", i+1, got, want)
		}
	}
	root := mustCommit(t, tr)
	tr = New(store, root)
	for i, p := range paths {
		v, found, err := tr.getPath(p)
		if err != nil || !found || !bytes.Equal(v, []byte{byte(i + 1)}) {
			t.Fatalf("getPath %d: %x %v %v", i, v, found, err)
		}
		proof, err := tr.provePath(p)
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 && proof.Depth != 256 {
			t.Fatalf("leaf %d at depth %d, want 256", i, proof.Depth)
		}
		if err := verifyPath(root, p, nil, []byte{byte(i + 1)}, proof); err != nil {
			t.Fatalf("deep inclusion %d: %v", i, err)
		}
		if err := verifyPath(root, p, nil, []byte{byte(i + 2)}, proof); err == nil {
			t.Fatalf("deep inclusion %d verified with a wrong value", i)
		}
	}
	// Exclusion of a path next to the deep pair.
	absent := flip(253)
	proof, err := tr.provePath(absent)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyPath(root, absent, nil, nil, proof); err != nil {
		t.Fatalf("deep exclusion: %v", err)
	}
	// Delete back down to nothing, checking against the reference.
	for i := len(paths) - 1; i >= 0; i-- {
		if err := tr.deletePath(paths[i]); err != nil {
			t.Fatal(err)
		}
		if got, want := tr.Root(), refSubtree(leaves[:i], 0); got != want {
			t.Fatalf("after deep delete %d: root %x, want %x", i, got, want)
		}
	}
}
