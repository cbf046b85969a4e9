package smt

import (
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"
)

// VersionedStore is a NodeStore that files every node under the version it
// was written at (the store's caller uses the block height), so the nodes of
// one commit lie side by side in the store instead of scattered by hash:
// a bbolt commit then appends a few pages at the end of the bucket rather
// than rewriting a page per node. A parent's stored encoding carries its
// children's versions, and the version of each committed root is recorded,
// so any committed root can still be opened. Hashes, and with them roots and
// proofs, do not depend on where a node is stored.
type VersionedStore interface {
	// Version is the version this commit writes new nodes under.
	Version() uint64
	GetNodeAt(version uint64, hash [32]byte) ([]byte, error)
	PutNodeAt(version uint64, hash [32]byte, data []byte) error
	// RootVersion returns the version a committed root was written at.
	RootVersion(root [32]byte) (uint64, error)
	PutRootVersion(root [32]byte, version uint64) error
}

// versionedInnerEncLen is an inner node's stored encoding in a
// VersionedStore: the tag, both child hashes and both child versions.
const versionedInnerEncLen = innerEncLen + 16

// BoltVersionedStore is a VersionedStore on two buckets of a bbolt
// transaction: nodes under version‖hash and root versions under the root
// hash. Like BoltStore it is valid only for the life of the transaction.
type BoltVersionedStore struct {
	tx      *bbolt.Tx
	nodes   *bbolt.Bucket // nil on a read-only tx without the bucket
	roots   *bbolt.Bucket
	orphans *bbolt.Bucket // nil: orphans are not recorded (RecordOrphans)
	version uint64
}

// NewBoltVersionedStore returns a store on the named buckets of tx that
// writes new nodes under version (on a writable transaction the buckets are
// created if needed).
func NewBoltVersionedStore(tx *bbolt.Tx, nodes, roots []byte, version uint64) (*BoltVersionedStore, error) {
	s := &BoltVersionedStore{tx: tx, version: version}
	if tx.Writable() {
		var err error
		if s.nodes, err = tx.CreateBucketIfNotExists(nodes); err != nil {
			return nil, fmt.Errorf("smt: versioned store: %w", err)
		}
		if s.roots, err = tx.CreateBucketIfNotExists(roots); err != nil {
			return nil, fmt.Errorf("smt: versioned store: %w", err)
		}
		// Keys of a commit are above every earlier key: fill pages up
		// instead of splitting them in half.
		s.nodes.FillPercent = 0.95
	} else {
		s.nodes, s.roots = tx.Bucket(nodes), tx.Bucket(roots)
	}
	return s, nil
}

func versionedKey(version uint64, hash [32]byte) []byte {
	k := make([]byte, 40)
	binary.BigEndian.PutUint64(k, version)
	copy(k[8:], hash[:])
	return k
}

// Version implements VersionedStore.
func (s *BoltVersionedStore) Version() uint64 { return s.version }

// GetNodeAt implements VersionedStore. The slice points into the bbolt mmap.
func (s *BoltVersionedStore) GetNodeAt(version uint64, hash [32]byte) ([]byte, error) {
	if s.nodes != nil {
		if data := s.nodes.Get(versionedKey(version, hash)); data != nil {
			return data, nil
		}
	}
	return nil, fmt.Errorf("smt: versioned store: node %x at %d: %w", hash, version, ErrNodeNotFound)
}

// PutNodeAt implements VersionedStore; key and data are copied.
func (s *BoltVersionedStore) PutNodeAt(version uint64, hash [32]byte, data []byte) error {
	if !s.tx.Writable() {
		return fmt.Errorf("smt: versioned store: put node %x: %w", hash, ErrReadOnly)
	}
	buf := make([]byte, 40+len(data))
	binary.BigEndian.PutUint64(buf, version)
	copy(buf[8:], hash[:])
	copy(buf[40:], data)
	if err := s.nodes.Put(buf[:40:40], buf[40:]); err != nil {
		return fmt.Errorf("smt: versioned store: put node %x: %w", hash, err)
	}
	return nil
}

// RootVersion implements VersionedStore.
func (s *BoltVersionedStore) RootVersion(root [32]byte) (uint64, error) {
	if s.roots != nil {
		if v := s.roots.Get(root[:]); len(v) == 8 {
			return binary.BigEndian.Uint64(v), nil
		}
	}
	return 0, fmt.Errorf("smt: versioned store: root %x: %w", root, ErrNodeNotFound)
}

// PutRootVersion implements VersionedStore.
func (s *BoltVersionedStore) PutRootVersion(root [32]byte, version uint64) error {
	if !s.tx.Writable() {
		return fmt.Errorf("smt: versioned store: put root %x: %w", root, ErrReadOnly)
	}
	v := make([]byte, 8)
	binary.BigEndian.PutUint64(v, version)
	if old := s.roots.Get(root[:]); old != nil && string(old) == string(v) {
		return nil
	}
	return s.roots.Put(append([]byte(nil), root[:]...), v)
}

// GetNode implements NodeStore for a tree that does not know versions: it
// is not supported (a Tree opened on a VersionedStore uses GetNodeAt).
func (s *BoltVersionedStore) GetNode(hash [32]byte) ([]byte, error) {
	return nil, fmt.Errorf("smt: versioned store: node %x without a version: %w", hash, ErrNodeNotFound)
}

// PutNode implements NodeStore by writing at the store's version.
func (s *BoltVersionedStore) PutNode(hash [32]byte, data []byte) error {
	return s.PutNodeAt(s.version, hash, data)
}

// OrphanRecorder is implemented by a VersionedStore that keeps orphan
// records for pruning: Tree.Commit reports every stored node its changes
// dropped, with the version being written. The node then belongs to the
// versions ref.Version .. at-1 only, and may be deleted once all of them
// are pruned.
type OrphanRecorder interface {
	PutOrphan(at uint64, ref NodeRef) error
}

// RecordOrphans makes the store keep orphan records in the named bucket
// (created if needed; the transaction must be writable), so PruneOrphans
// can later delete the nodes no kept version references.
func (s *BoltVersionedStore) RecordOrphans(bucket []byte) error {
	b, err := s.tx.CreateBucketIfNotExists(bucket)
	if err != nil {
		return fmt.Errorf("smt: versioned store: orphans: %w", err)
	}
	// Records of a commit sort after every earlier one (they start with
	// the commit's version; within a commit they are put in key order,
	// recordOrphans) and the pruner deletes from the front: fill
	// pages up instead of splitting them in half, which left the bucket's
	// pages half empty (docs/BENCHMARKS.md, pruning by bucket).
	b.FillPercent = 0.95
	s.orphans = b
	return nil
}

// orphanKey is at‖version‖hash: orphan records sort by the version that
// dropped them, so a pruner walks them from the start of the bucket.
func orphanKey(at uint64, ref NodeRef) []byte {
	k := make([]byte, 48)
	binary.BigEndian.PutUint64(k, at)
	binary.BigEndian.PutUint64(k[8:], ref.Version)
	copy(k[16:], ref.Hash[:])
	return k
}

// PutOrphan implements OrphanRecorder; without RecordOrphans it does nothing.
func (s *BoltVersionedStore) PutOrphan(at uint64, ref NodeRef) error {
	if s.orphans == nil {
		return nil
	}
	if err := s.orphans.Put(orphanKey(at, ref), nil); err != nil {
		return fmt.Errorf("smt: versioned store: orphan %x at %d: %w", ref.Hash, ref.Version, err)
	}
	return nil
}

// PruneOrphans deletes, in the writable transaction tx, at most max nodes
// that were dropped at a version <= below, i.e. that belong only to
// versions < below, together with their orphan records (and the root
// version record of a dropped root). Every version >= below stays fully
// readable: a node reachable from one of them was either never dropped or
// dropped above below. more reports whether such orphans remain. Because
// a node and its orphan record go in the same transaction, a crash between
// calls loses nothing and the next call carries on.
func PruneOrphans(tx *bbolt.Tx, nodes, roots, orphans []byte, below uint64, max int) (deleted int, more bool, err error) {
	ob, nb, rb := tx.Bucket(orphans), tx.Bucket(nodes), tx.Bucket(roots)
	if ob == nil || nb == nil || rb == nil {
		return 0, false, nil
	}
	var keys [][]byte
	c := ob.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) != 48 {
			return 0, false, fmt.Errorf("%w: orphan record of %d bytes", ErrCorruptNode, len(k))
		}
		if binary.BigEndian.Uint64(k) > below {
			break
		}
		if len(keys) == max {
			more = true
			break
		}
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		ver := binary.BigEndian.Uint64(k[8:])
		var hash [32]byte
		copy(hash[:], k[16:])
		if err := nb.Delete(versionedKey(ver, hash)); err != nil {
			return deleted, false, fmt.Errorf("smt: prune node %x at %d: %w", hash, ver, err)
		}
		// A root that is still current (committed again at a later
		// version) records that later version; only a record naming the
		// deleted node goes.
		if v := rb.Get(hash[:]); len(v) == 8 && binary.BigEndian.Uint64(v) == ver {
			if err := rb.Delete(hash[:]); err != nil {
				return deleted, false, fmt.Errorf("smt: prune root %x: %w", hash, err)
			}
		}
		if err := ob.Delete(k); err != nil {
			return deleted, false, fmt.Errorf("smt: prune orphan record: %w", err)
		}
		deleted++
	}
	return deleted, more, nil
}
