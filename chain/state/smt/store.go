package smt

import (
	"errors"
	"fmt"
	"sync"

	"go.etcd.io/bbolt"
)

// ErrNodeNotFound is returned (wrapped) by a NodeStore when a node is missing.
var ErrNodeNotFound = errors.New("smt: node not found")

// ErrReadOnly is returned (wrapped) by BoltStore.PutNode on a read-only transaction.
var ErrReadOnly = errors.New("smt: store is read-only")

// NodeStore persists tree nodes content-addressed: hash -> encoding.
//
// GetNode must return an error wrapping ErrNodeNotFound for a missing node.
// The returned slice is only read, never modified, and is not retained after
// the next call into the store, so implementations may return memory they own
// (such as a bbolt page). PutNode must not retain data after it returns
// unless it copies it; putting an existing hash again is legal and must be
// idempotent (content addressing guarantees the data is identical).
type NodeStore interface {
	GetNode(hash [32]byte) ([]byte, error)
	PutNode(hash [32]byte, data []byte) error
}

// MemStore is an in-memory NodeStore backed by a map. It is safe for
// concurrent use. The zero value is ready to use.
type MemStore struct {
	mu    sync.RWMutex
	nodes map[[32]byte][]byte
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{nodes: make(map[[32]byte][]byte)}
}

// GetNode implements NodeStore.
func (s *MemStore) GetNode(hash [32]byte) ([]byte, error) {
	s.mu.RLock()
	data, ok := s.nodes[hash]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("smt: mem store: node %x: %w", hash, ErrNodeNotFound)
	}
	return data, nil
}

// PutNode implements NodeStore. The data is copied.
func (s *MemStore) PutNode(hash [32]byte, data []byte) error {
	cp := append([]byte(nil), data...)
	s.mu.Lock()
	if s.nodes == nil {
		s.nodes = make(map[[32]byte][]byte)
	}
	s.nodes[hash] = cp
	s.mu.Unlock()
	return nil
}

// Len returns the number of stored nodes.
func (s *MemStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.nodes)
}

// BoltStore is a NodeStore on one bucket of a bbolt transaction, so tree nodes
// can be written atomically with the rest of a block. It is valid only for the
// life of the transaction and, like the transaction, must not be used from
// several goroutines at once.
type BoltStore struct {
	tx     *bbolt.Tx
	name   []byte
	bucket *bbolt.Bucket // nil if the bucket does not exist (read-only tx only)
}

// NewBoltStore returns a store on the named top-level bucket of tx. On a
// writable transaction the bucket is created if needed; on a read-only one a
// missing bucket behaves as an empty store.
func NewBoltStore(tx *bbolt.Tx, bucket []byte) (*BoltStore, error) {
	if tx == nil {
		return nil, errors.New("smt: bolt store: nil transaction")
	}
	if len(bucket) == 0 {
		return nil, errors.New("smt: bolt store: empty bucket name")
	}
	s := &BoltStore{tx: tx, name: append([]byte(nil), bucket...)}
	if tx.Writable() {
		b, err := tx.CreateBucketIfNotExists(s.name)
		if err != nil {
			return nil, fmt.Errorf("smt: bolt store: create bucket %q: %w", s.name, err)
		}
		s.bucket = b
	} else {
		s.bucket = tx.Bucket(s.name)
	}
	return s, nil
}

// GetNode implements NodeStore. The returned slice points into the bbolt
// mmap and is valid only while the transaction is open.
func (s *BoltStore) GetNode(hash [32]byte) ([]byte, error) {
	if s.bucket != nil {
		if data := s.bucket.Get(hash[:]); data != nil {
			return data, nil
		}
	}
	return nil, fmt.Errorf("smt: bolt store: bucket %q: node %x: %w", s.name, hash, ErrNodeNotFound)
}

// PutNode implements NodeStore. It requires a writable transaction. Key and
// data are copied, since bbolt requires them to stay valid until the
// transaction ends.
func (s *BoltStore) PutNode(hash [32]byte, data []byte) error {
	if !s.tx.Writable() || s.bucket == nil {
		return fmt.Errorf("smt: bolt store: put node %x: %w", hash, ErrReadOnly)
	}
	buf := make([]byte, 32+len(data))
	copy(buf, hash[:])
	copy(buf[32:], data)
	if err := s.bucket.Put(buf[:32:32], buf[32:]); err != nil {
		return fmt.Errorf("smt: bolt store: put node %x: %w", hash, err)
	}
	return nil
}
