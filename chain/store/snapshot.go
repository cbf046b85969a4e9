package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"go.etcd.io/bbolt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state/smt"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// State snapshots (docs/CONSENSUS.md §8.10): the flat state of one height,
// exported in key order as chunks of canonical CBOR, and a new database
// rebuilt from them whose Merkle root must equal the header's.

// KV is one state entry of a snapshot chunk.
type KV struct {
	_     struct{} `cbor:",toarray"`
	Key   []byte
	Value []byte
}

// ErrIncompleteImport means a database was left by a state restore that did
// not finish; it must be deleted, never opened as a chain.
var ErrIncompleteImport = errors.New("store: state restore did not finish")

var metaImported = []byte("imported") // height of a completed state import

// ExportState calls fn with the view's whole state, in key order, cut into
// chunks of at most about maxBytes of keys and values each (a larger single
// entry is a chunk of its own).
func (v *View) ExportState(maxBytes int, fn func(chunk []KV) error) error {
	var chunk []KV
	size := 0
	c := v.tx.Bucket(bucketState).Cursor()
	for k, val := c.First(); k != nil; k, val = c.Next() {
		if len(chunk) > 0 && size+len(k)+len(val) > maxBytes {
			if err := fn(chunk); err != nil {
				return err
			}
			chunk, size = nil, 0
		}
		chunk = append(chunk, KV{Key: append([]byte(nil), k...), Value: append([]byte(nil), val...)})
		size += len(k) + len(val)
	}
	if len(chunk) > 0 {
		return fn(chunk)
	}
	return nil
}

// ImportState writes a new chain database at path (which must not exist)
// whose state is the entries next returns, in strictly increasing key
// order, until it returns nil, and whose head is the last of headers (the
// snapshot's header; earlier ones, e.g. the genesis header, are stored
// too). The rebuilt Merkle root must equal the head's state root, else
// ErrRootMismatch and no file is left. The import is one bbolt
// transaction that ends by marking it complete, so a crash leaves either
// no usable file or a complete one (OpenImported tells them apart).
func ImportState(path string, headers []types.Header, next func() ([]KV, error)) (err error) {
	if len(headers) == 0 {
		return errors.New("store: import needs the snapshot's header")
	}
	head := headers[len(headers)-1]
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("store: import into %s: file exists", path)
	}
	s, err := Open(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := s.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	return s.db.Update(func(tx *bbolt.Tx) error {
		nodes, err := smt.NewBoltVersionedStore(tx, bucketSMT, bucketSMTRoots, head.Height)
		if err != nil {
			return err
		}
		tree := smt.New(nodes, smt.EmptyRoot)
		flat := tx.Bucket(bucketState)
		var last []byte
		for {
			kvs, err := next()
			if err != nil {
				return err
			}
			if kvs == nil {
				break
			}
			for _, kv := range kvs {
				if len(kv.Key) == 0 || kv.Value == nil || (last != nil && bytes.Compare(kv.Key, last) <= 0) {
					return fmt.Errorf("%w: snapshot entries out of order or empty", ErrRootMismatch)
				}
				last = kv.Key
				if err := tree.Update(kv.Key, nonEmpty(kv.Value)); err != nil {
					return err
				}
				if err := flat.Put(kv.Key, kv.Value); err != nil {
					return err
				}
			}
		}
		root, err := tree.Commit()
		if err != nil {
			return err
		}
		if types.Hash(root) != head.StateRoot {
			return fmt.Errorf("%w: header %d says %s, the snapshot gives %s", ErrRootMismatch, head.Height, head.StateRoot, types.Hash(root))
		}
		for i := range headers {
			h := &headers[i]
			hk := heightKey(h.Height)
			if err := tx.Bucket(bucketHeaders).Put(hk, codec.MustMarshal(h)); err != nil {
				return err
			}
			hh := h.Hash()
			if err := tx.Bucket(bucketHashes).Put(hh[:], hk); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(metaHead, heightKey(head.Height)); err != nil {
			return err
		}
		return meta.Put(metaImported, heightKey(head.Height))
	})
}

// ImportedHeight reports whether the database at path is a completed state
// import and at which height; ErrIncompleteImport if it is not.
func ImportedHeight(path string) (uint64, error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrIncompleteImport, err)
	}
	defer db.Close()
	var h uint64
	err = db.View(func(tx *bbolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if m == nil {
			return ErrIncompleteImport
		}
		v := m.Get(metaImported)
		if len(v) != 8 {
			return ErrIncompleteImport
		}
		h = binary.BigEndian.Uint64(v)
		return nil
	})
	return h, err
}

// Base is the lowest height whose block this database holds in full: 0,
// or the height a state import started at (blocks below it are absent).
func (v *View) Base() uint64 {
	if b := v.tx.Bucket(bucketMeta).Get(metaImported); len(b) == 8 {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}
