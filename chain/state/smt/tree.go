package smt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/ethereum/go-ethereum/crypto"
)

// EmptyRoot is the root of the empty tree (and the hash of any empty subtree).
var EmptyRoot = [32]byte{}

// MaxDepth is the maximum depth of a node below the root.
const MaxDepth = 256

const (
	leafPrefix  byte = 0x00
	innerPrefix byte = 0x01

	innerEncLen   = 1 + 32 + 32
	minLeafEncLen = 1 + 32 + 1
)

// ErrEmptyValue is returned by Update for an empty value; use Delete.
var ErrEmptyValue = errors.New("smt: empty value (use Delete)")

// ErrCorruptNode is returned (wrapped) when a stored node cannot be decoded or
// the stored tree violates the canonical shape.
var ErrCorruptNode = errors.New("smt: corrupt node")

type nodeKind uint8

const (
	// kindStub is a node known only by its hash; it is loaded on demand and
	// then turned in place into a leaf or inner node.
	kindStub nodeKind = iota
	kindLeaf
	kindInner
)

// node is an in-memory tree node. A nil *node is the empty subtree.
//
// Stored nodes are immutable: their logical content (kind after resolution,
// path, value, children) never changes; the only in-place mutations are
// caching (filling in the hash, resolving a stub into the node it names).
// Unstored nodes are referenced only by their parent in this Tree; insert may
// modify them in place (clearing hashed), remove always copies.
type node struct {
	kind   nodeKind
	hashed bool // hash is valid
	stored bool // node is present in the store
	hash   [32]byte

	path  [32]byte // leaf
	value []byte   // leaf, non-empty, owned by the node

	children [2]*node // inner

	// ver is the version a stored node is filed under in a VersionedStore,
	// valid when located (the root of an opened tree learns it on load).
	ver     uint64
	located bool
}

// Tree is a sparse Merkle tree rooted at a given root in a NodeStore. Changes
// are kept in memory until Commit. A Tree is not safe for concurrent use.
type Tree struct {
	store  NodeStore
	vs     VersionedStore // store, when it files nodes by version
	root   *node
	hasher crypto.KeccakState
	buf    [innerEncLen]byte
	// orphans are the stored nodes (of a VersionedStore) this tree's
	// changes have dropped since the last Commit; Commit records them so
	// a pruner can delete them once no kept version references them.
	orphans []NodeRef
}

// NodeRef names a stored node of a VersionedStore: the version it is
// filed under and its hash.
type NodeRef struct {
	Version uint64
	Hash    [32]byte
}

// orphan notes that the stored node n is no longer part of the tree.
func (t *Tree) orphan(n *node) {
	if t.vs != nil && n != nil && n.stored && n.located {
		t.orphans = append(t.orphans, NodeRef{Version: n.ver, Hash: n.hash})
	}
}

// New returns a tree over store with the given root. Use EmptyRoot for a new
// tree. Any root previously committed to store may be opened, so historical
// states stay readable. New does not access the store; a root missing from
// the store surfaces as an ErrNodeNotFound error on first use.
func New(store NodeStore, root [32]byte) *Tree {
	t := &Tree{store: store, hasher: crypto.NewKeccakState()}
	t.vs, _ = store.(VersionedStore)
	if root != EmptyRoot {
		t.root = &node{kind: kindStub, hash: root, hashed: true, stored: true}
	}
	return t
}

// Root returns the current root hash, including uncommitted changes. It
// hashes dirty nodes (caching the result) but writes nothing.
func (t *Tree) Root() [32]byte {
	return t.hashNode(t.root)
}

// Commit hashes all dirty nodes, writes them to the store (in ascending hash
// order) and returns the root. Nodes already stored are not rewritten. If a
// write fails, the error is returned, all nodes of this commit stay dirty and
// Commit may be retried; nodes written before the failure are orphans until
// then, which is harmless in a content-addressed store (and moot with an
// atomic store such as a bbolt transaction that is rolled back).
//
// After a successful Commit the tree treats the written nodes as durable. If
// the caller then discards those writes (rolls back the bbolt transaction),
// it must also discard the Tree and reopen the previous root with New.
func (t *Tree) Commit() ([32]byte, error) {
	root := t.hashNode(t.root)
	if err := t.persist(t.root); err != nil {
		return EmptyRoot, fmt.Errorf("smt: commit: %w", err)
	}
	if t.vs != nil && t.root != nil {
		if err := t.locate(t.root); err != nil {
			return EmptyRoot, fmt.Errorf("smt: commit: %w", err)
		}
		if err := t.vs.PutRootVersion(root, t.root.ver); err != nil {
			return EmptyRoot, fmt.Errorf("smt: commit: %w", err)
		}
	}
	if err := t.recordOrphans(); err != nil {
		return EmptyRoot, fmt.Errorf("smt: commit: %w", err)
	}
	return root, nil
}

// recordOrphans hands the nodes dropped since the last commit to a store
// that keeps orphan records (OrphanRecorder), filed under the version
// being written: they belong to every version from their own up to the one
// before it. A node written and dropped at the same version is left alone
// (it may be written again at that version under the same key; a store
// commits one tree per version, so this does not happen there).
func (t *Tree) recordOrphans() error {
	rec, ok := t.vs.(OrphanRecorder)
	if !ok || len(t.orphans) == 0 {
		t.orphans = t.orphans[:0]
		return nil
	}
	at := t.vs.Version()
	// In key order (the records share the prefix at): bbolt inserts into
	// a page in memory and splits it only at commit, so tens of thousands
	// of records put in the order the tree dropped them (random hashes)
	// shift the growing last page on every put, quadratic in the block's
	// changes; in order, each is an append.
	slices.SortFunc(t.orphans, compareRefs)
	for _, o := range t.orphans {
		if o.Version >= at {
			continue
		}
		if err := rec.PutOrphan(at, o); err != nil {
			return err
		}
	}
	t.orphans = t.orphans[:0]
	return nil
}

// compareRefs orders node references as their orphan records' keys sort:
// by version, then hash.
func compareRefs(a, b NodeRef) int {
	if a.Version != b.Version {
		if a.Version < b.Version {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.Hash[:], b.Hash[:])
}

// Get returns the value stored under key. found is false if key is absent.
// The returned slice is a copy owned by the caller.
func (t *Tree) Get(key []byte) (value []byte, found bool, err error) {
	value, found, err = t.getPath(t.keccak(key))
	if err != nil {
		return nil, false, fmt.Errorf("smt: get %x: %w", key, err)
	}
	return value, found, nil
}

func (t *Tree) getPath(path [32]byte) ([]byte, bool, error) {
	n := t.root
	for depth := 0; ; depth++ {
		if n == nil {
			return nil, false, nil
		}
		if err := t.resolve(n, depth); err != nil {
			return nil, false, err
		}
		if n.kind == kindLeaf {
			if n.path != path {
				return nil, false, nil
			}
			return bytes.Clone(n.value), true, nil
		}
		n = n.children[bitAt(&path, depth)]
	}
}

// Update sets key to value. value must be non-empty (see Delete). The value is
// copied. On error the tree is unchanged.
func (t *Tree) Update(key, value []byte) error {
	if err := t.updatePath(t.keccak(key), value); err != nil {
		return fmt.Errorf("smt: update %x: %w", key, err)
	}
	return nil
}

func (t *Tree) updatePath(path [32]byte, value []byte) error {
	if len(value) == 0 {
		return ErrEmptyValue
	}
	leaf := &node{kind: kindLeaf, path: path, value: bytes.Clone(value)}
	mark := len(t.orphans)
	root, _, err := t.insert(t.root, 0, leaf)
	if err != nil {
		t.orphans = t.orphans[:mark]
		return err
	}
	t.root = root
	return nil
}

// Delete removes key. Deleting an absent key is a no-op. On error the tree is
// unchanged.
func (t *Tree) Delete(key []byte) error {
	if err := t.deletePath(t.keccak(key)); err != nil {
		return fmt.Errorf("smt: delete %x: %w", key, err)
	}
	return nil
}

func (t *Tree) deletePath(path [32]byte) error {
	mark := len(t.orphans)
	root, _, err := t.remove(t.root, 0, &path)
	if err != nil {
		t.orphans = t.orphans[:mark]
		return err
	}
	t.root = root
	return nil
}

// insert returns the subtree n (rooted at depth) with leaf inserted, and
// whether anything changed.
//
// All loads (the only possible failures) happen on the way down, before any
// node is modified, so a failed insert leaves the tree untouched. That makes
// it safe to modify unstored (dirty) inner nodes in place on the way up; they
// belong to this Tree alone. Stored nodes are immutable and are copied.
func (t *Tree) insert(n *node, depth int, leaf *node) (*node, bool, error) {
	if n == nil {
		return leaf, true, nil
	}
	if err := t.resolve(n, depth); err != nil {
		return nil, false, err
	}
	if n.kind == kindLeaf {
		if n.path == leaf.path {
			if bytes.Equal(n.value, leaf.value) {
				return n, false, nil // unchanged: keep the hashed/stored node
			}
			t.orphan(n)
			return leaf, true, nil
		}
		if commonPrefixLen(&n.path, &leaf.path) < depth {
			return nil, false, fmt.Errorf("%w: leaf %x at depth %d is off its path", ErrCorruptNode, n.hash, depth)
		}
		return split(n, leaf, depth), true, nil
	}
	b := bitAt(&leaf.path, depth)
	nc, changed, err := t.insert(n.children[b], depth+1, leaf)
	if err != nil || !changed {
		return n, false, err
	}
	if n.stored {
		t.orphan(n)
		cp := &node{kind: kindInner, children: n.children}
		cp.children[b] = nc
		return cp, true, nil
	}
	n.children[b] = nc
	n.hashed = false
	return n, true, nil
}

// split joins two leaves with different paths that both belong to the
// subtree at depth: an inner node where their paths diverge, under a chain of
// single-child inner nodes for the shared bits below depth.
func split(a, b *node, depth int) *node {
	d := commonPrefixLen(&a.path, &b.path) // < 256 since paths differ; >= depth
	n := &node{kind: kindInner}
	n.children[bitAt(&a.path, d)] = a
	n.children[bitAt(&b.path, d)] = b
	for i := d - 1; i >= depth; i-- {
		p := &node{kind: kindInner}
		p.children[bitAt(&a.path, i)] = n
		n = p
	}
	return n
}

// remove returns the subtree n (rooted at depth) without path, and whether
// anything changed. It restores the canonical shape: a subtree left with a
// single leaf collapses to that leaf.
func (t *Tree) remove(n *node, depth int, path *[32]byte) (*node, bool, error) {
	if n == nil {
		return nil, false, nil
	}
	if err := t.resolve(n, depth); err != nil {
		return nil, false, err
	}
	if n.kind == kindLeaf {
		if n.path == *path {
			t.orphan(n)
			return nil, true, nil
		}
		return n, false, nil
	}
	b := bitAt(path, depth)
	nc, changed, err := t.remove(n.children[b], depth+1, path)
	if err != nil || !changed {
		return n, false, err
	}
	sib := n.children[1-b]
	switch {
	case nc == nil && sib == nil:
		// Impossible in a canonical tree (an inner node holds >= 2 leaves).
		return nil, false, fmt.Errorf("%w: inner node %x at depth %d had a single leaf", ErrCorruptNode, n.hash, depth)
	case nc == nil:
		// The sibling is now alone: if it is a leaf it moves up.
		if err := t.resolve(sib, depth+1); err != nil {
			return nil, false, err
		}
		if sib.kind == kindLeaf {
			t.orphan(n)
			return sib, true, nil
		}
	case sib == nil && nc.kind == kindLeaf:
		// A leaf bubbling up through a chain of single-child inner nodes.
		t.orphan(n)
		return nc, true, nil
	}
	t.orphan(n)
	cp := &node{kind: kindInner, children: n.children}
	cp.children[b] = nc
	return cp, true, nil
}

// resolve loads a stub node in place. depth is the node's depth, used to
// reject an inner node at depth 256 (which would overrun the path).
func (t *Tree) resolve(n *node, depth int) error {
	if n.kind == kindStub {
		var data []byte
		var err error
		if t.vs != nil {
			if err = t.locate(n); err == nil {
				data, err = t.vs.GetNodeAt(n.ver, n.hash)
			}
		} else {
			data, err = t.store.GetNode(n.hash)
		}
		if err != nil {
			return fmt.Errorf("load node %x: %w", n.hash, err)
		}
		if err := decodeNode(n, data, t.vs != nil); err != nil {
			return err
		}
	}
	if n.kind == kindInner && depth >= MaxDepth {
		return fmt.Errorf("%w: inner node %x at depth %d", ErrCorruptNode, n.hash, depth)
	}
	return nil
}

// locate makes sure the stored node n knows its version: only a root opened
// by hash does not, and the store records every committed root's version.
func (t *Tree) locate(n *node) error {
	if n.located {
		return nil
	}
	v, err := t.vs.RootVersion(n.hash)
	if err != nil {
		return err
	}
	n.ver, n.located = v, true
	return nil
}

// decodeNode fills the stub n (whose hash is set) from its stored encoding;
// versioned says the encoding of an inner node carries its children's
// versions (VersionedStore).
func decodeNode(n *node, data []byte, versioned bool) error {
	if len(data) == 0 {
		return fmt.Errorf("%w: %x: empty encoding", ErrCorruptNode, n.hash)
	}
	switch data[0] {
	case leafPrefix:
		if len(data) < minLeafEncLen {
			return fmt.Errorf("%w: %x: leaf encoding of %d bytes", ErrCorruptNode, n.hash, len(data))
		}
		copy(n.path[:], data[1:33])
		n.value = bytes.Clone(data[33:])
		n.kind = kindLeaf
	case innerPrefix:
		want := innerEncLen
		if versioned {
			want = versionedInnerEncLen
		}
		if len(data) != want {
			return fmt.Errorf("%w: %x: inner encoding of %d bytes", ErrCorruptNode, n.hash, len(data))
		}
		var l, r [32]byte
		copy(l[:], data[1:33])
		copy(r[:], data[33:65])
		if l == EmptyRoot && r == EmptyRoot {
			return fmt.Errorf("%w: %x: inner node with two empty children", ErrCorruptNode, n.hash)
		}
		// One allocation for both child stubs.
		stubs := new([2]node)
		for i, h := range [2][32]byte{l, r} {
			if h != EmptyRoot {
				stubs[i] = node{kind: kindStub, hash: h, hashed: true, stored: true}
				if versioned {
					stubs[i].ver = binary.BigEndian.Uint64(data[innerEncLen+8*i:])
					stubs[i].located = true
				}
				n.children[i] = &stubs[i]
			}
		}
		n.kind = kindInner
	default:
		return fmt.Errorf("%w: %x: unknown node tag 0x%02x", ErrCorruptNode, n.hash, data[0])
	}
	return nil
}

// hashNode returns the hash of n, computing and caching dirty hashes.
func (t *Tree) hashNode(n *node) [32]byte {
	if n == nil {
		return EmptyRoot
	}
	if n.hashed {
		return n.hash
	}
	switch n.kind {
	case kindLeaf:
		n.hash = t.leafHash(&n.path, n.value)
	case kindInner:
		l := t.hashNode(n.children[0])
		r := t.hashNode(n.children[1])
		n.hash = t.innerHash(&l, &r)
	default:
		panic("smt: unhashed stub") // stubs are created hashed
	}
	n.hashed = true
	return n.hash
}

// persist writes every dirty node of the subtree n to the store, in
// ascending hash order, and then marks them stored. It must be called after
// hashNode. Writing in key order keeps bulk loads into a B+tree store (such
// as bbolt, whose in-transaction inserts are otherwise quadratic in the number
// of keys landing on one page) linear, and gives the store good locality.
// Nodes are marked stored only after all writes succeeded, so a failed commit
// is retried in full (puts are idempotent).
func (t *Tree) persist(n *node) error {
	var dirty []*node
	collectDirty(n, &dirty)
	if len(dirty) == 0 {
		return nil
	}
	slices.SortFunc(dirty, func(a, b *node) int {
		// Hashes are uniformly distributed: the first word almost always decides.
		x, y := binary.BigEndian.Uint64(a.hash[:8]), binary.BigEndian.Uint64(b.hash[:8])
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
		return bytes.Compare(a.hash[8:], b.hash[8:])
	})
	var ver uint64
	if t.vs != nil {
		ver = t.vs.Version()
	}
	var enc []byte
	for _, d := range dirty {
		switch d.kind {
		case kindLeaf:
			enc = append(enc[:0], leafPrefix)
			enc = append(enc, d.path[:]...)
			enc = append(enc, d.value...)
		case kindInner:
			l, r := t.hashNode(d.children[0]), t.hashNode(d.children[1])
			enc = append(enc[:0], innerPrefix)
			enc = append(enc, l[:]...)
			enc = append(enc, r[:]...)
			if t.vs != nil {
				for _, c := range d.children {
					var cv uint64
					switch {
					case c == nil:
					case !c.stored:
						cv = ver // written in this commit
					default:
						if err := t.locate(c); err != nil {
							return fmt.Errorf("store node %x: %w", d.hash, err)
						}
						cv = c.ver
					}
					enc = binary.BigEndian.AppendUint64(enc, cv)
				}
			}
		}
		// The NodeStore contract forbids retaining enc, so it is reused.
		var err error
		if t.vs != nil {
			err = t.vs.PutNodeAt(ver, d.hash, enc)
		} else {
			err = t.store.PutNode(d.hash, enc)
		}
		if err != nil {
			return fmt.Errorf("store node %x: %w", d.hash, err)
		}
	}
	for _, d := range dirty {
		d.stored = true
		if t.vs != nil {
			d.ver, d.located = ver, true
		}
	}
	return nil
}

// collectDirty appends the unstored nodes of the subtree n. Stored nodes have
// only stored descendants, so the walk stops there.
func collectDirty(n *node, out *[]*node) {
	if n == nil || n.stored {
		return
	}
	*out = append(*out, n)
	if n.kind == kindInner {
		collectDirty(n.children[0], out)
		collectDirty(n.children[1], out)
	}
}

func (t *Tree) keccak(data []byte) (h [32]byte) {
	t.hasher.Reset()
	t.hasher.Write(data)
	t.hasher.Read(h[:])
	return h
}

func (t *Tree) leafHash(path *[32]byte, value []byte) [32]byte {
	vh := t.keccak(value)
	return t.leafHashFromValueHash(path, &vh)
}

func (t *Tree) leafHashFromValueHash(path, valueHash *[32]byte) [32]byte {
	t.buf[0] = leafPrefix
	copy(t.buf[1:33], path[:])
	copy(t.buf[33:65], valueHash[:])
	return t.keccak(t.buf[:])
}

func (t *Tree) innerHash(l, r *[32]byte) [32]byte {
	t.buf[0] = innerPrefix
	copy(t.buf[1:33], l[:])
	copy(t.buf[33:65], r[:])
	return t.keccak(t.buf[:])
}

// bitAt returns bit i (0 = most significant bit of path[0]) of path.
func bitAt(path *[32]byte, i int) int {
	return int(path[i>>3]>>(7-uint(i&7))) & 1
}

// commonPrefixLen returns the number of leading bits a and b share (256 if equal).
func commonPrefixLen(a, b *[32]byte) int {
	for w := 0; w < 4; w++ {
		x := binary.BigEndian.Uint64(a[w*8:]) ^ binary.BigEndian.Uint64(b[w*8:])
		if x != 0 {
			return w*64 + bits.LeadingZeros64(x)
		}
	}
	return 256
}
