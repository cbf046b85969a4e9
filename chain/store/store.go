// Package store persists the chain on disk in one bbolt file: the flat
// consensus state and its sparse-Merkle commitment, the append-only ledger of
// blocks and receipts, and auxiliary indexes (transaction locations, events
// by emitter and by topic) that can always be rebuilt from the ledger.
//
// Every block is committed in exactly one bbolt write transaction (state
// writes, Merkle nodes, block, receipts, indexes and the head pointer), so a
// crash at any moment leaves either the previous head or the new one, never
// a mix. bbolt fsyncs on commit.
//
// Merkle nodes are filed under the height of the block that wrote them and
// their hash (smt.VersionedStore), so a block's nodes are appended together;
// a database from before that layout is refused with ErrOldLayout. Every
// commit also records the nodes it dropped, so Prune can delete the state of
// old heights while the node runs (prune.go, docs/STATE.md §Pruning).
package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/state/smt"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"go.etcd.io/bbolt"
)

var (
	bucketState = []byte("state")
	// Sparse-Merkle nodes filed by version (block height) and hash, and
	// the version of each committed root (smt.VersionedStore). The
	// hash-keyed layout before it used bucketSMTByHash.
	bucketSMT       = []byte("smt_v")
	bucketSMTRoots  = []byte("smt_roots")
	bucketSMTByHash = []byte("smt")
	// Orphan records (smt.OrphanRecorder): dropping height‖node version‖
	// hash for every Merkle node a block replaced, which Prune walks.
	bucketSMTOrphans = []byte("smt_orphans")
	bucketHeaders    = []byte("headers")  // height → header
	bucketTxs        = []byte("txs")      // height‖index → encoded transaction
	bucketReceipts   = []byte("receipts") // height‖index → receipt
	bucketHashes     = []byte("block_hashes")
	bucketTxIndex    = []byte("tx_index")
	bucketEvEmit     = []byte("ev_emitter")
	bucketEvTopic    = []byte("ev_topic")
	bucketMeta       = []byte("meta")

	metaHead = []byte("head")
	// metaPruneBelow is the lowest height whose state is kept (absent:
	// nothing pruned); see Prune.
	metaPruneBelow = []byte("prune_below")

	allBuckets = [][]byte{bucketState, bucketSMT, bucketSMTRoots, bucketSMTOrphans, bucketHeaders, bucketTxs, bucketReceipts, bucketHashes, bucketTxIndex, bucketEvEmit, bucketEvTopic, bucketMeta}
)

// Errors callers match with errors.Is.
var (
	ErrNotFound       = errors.New("not found")
	ErrNotInitialized = errors.New("chain database has no genesis block")
	ErrRootMismatch   = errors.New("state root mismatch")
	// ErrOldLayout is returned by Open for a database written by a version
	// that stored Merkle nodes by hash alone; re-initialise the node.
	// ErrPruned is returned for a state read (a proof) at a height whose
	// state was pruned (see Prune); blocks and receipts are never pruned.
	ErrPruned    = errors.New("state at this height is pruned")
	ErrOldLayout = errors.New("chain database uses the old hash-keyed Merkle node layout (re-initialise the node home)")
)

// Store is the node's chain database. It is safe for concurrent use: any
// number of readers, one committer.
type Store struct {
	db *bbolt.DB

	mu   sync.RWMutex
	head *types.Header // nil before genesis
	// viewHead is the decoded head header by height: every View starts
	// from it, and decoding it (with the canonical check) on each of the
	// thousands of views a second under load was a tenth of all decoding.
	// A height's header never changes, so a hit is exact.
	viewHead atomic.Pointer[types.Header]
	// archive stops orphan records being written (SetArchive).
	archive atomic.Bool
	// pruneMu serialises Prune calls.
	pruneMu sync.Mutex
}

// Open opens (creating if needed) the database at path.
func Open(path string) (*Store, error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 2 * time.Second, FreelistType: bbolt.FreelistMapType})
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s := &Store{db: db}
	err = db.Update(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketSMTByHash) != nil {
			return ErrOldLayout
		}
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		h, err := readHead(tx)
		if err != nil && !errors.Is(err, ErrNotInitialized) {
			return err
		}
		s.head = h
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: initialise %s: %w", path, err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

func heightKey(h uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], h)
	return k[:]
}

func readHead(tx *bbolt.Tx) (*types.Header, error) {
	v := tx.Bucket(bucketMeta).Get(metaHead)
	if v == nil {
		return nil, ErrNotInitialized
	}
	raw := tx.Bucket(bucketHeaders).Get(v)
	if raw == nil {
		return nil, fmt.Errorf("store: head header %x missing", v)
	}
	var h types.Header
	if err := codec.UnmarshalStored(raw, &h); err != nil {
		return nil, fmt.Errorf("store: head header: %w", err)
	}
	return &h, nil
}

// Head returns the latest committed header.
func (s *Store) Head() (*types.Header, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.head == nil {
		return nil, ErrNotInitialized
	}
	h := *s.head
	return &h, nil
}

// BlockBuilder receives the state root of the applied writes and returns the
// block and receipts to commit with them.
type BlockBuilder func(stateRoot types.Hash) (*types.Block, []*types.Receipt, error)

// EncodedBlockBuilder is a BlockBuilder that also returns each receipt's
// canonical encoding (codec.Marshal, in order), so a caller that already
// encoded the receipts to hash them does not pay for it twice. A nil slice
// means "encode them here".
type EncodedBlockBuilder func(stateRoot types.Hash) (*types.Block, []*types.Receipt, [][]byte, error)

// Commit applies writes to the state and its commitment, asks build for the
// block carrying the resulting root, and persists everything atomically. The
// block must extend the current head (or be the genesis block at height 0 on
// an empty database) and carry the computed root.
func (s *Store) Commit(writes []state.Write, build BlockBuilder) (*types.Block, error) {
	return s.CommitEncoded(writes, func(root types.Hash) (*types.Block, []*types.Receipt, [][]byte, error) {
		blk, receipts, err := build(root)
		return blk, receipts, nil, err
	})
}

// CommitEncoded is Commit for a builder that hands over the receipts'
// encodings with the receipts; the store writes those bytes as they are.
func (s *Store) CommitEncoded(writes []state.Write, build EncodedBlockBuilder) (*types.Block, error) {
	var out *types.Block
	err := s.db.Update(func(tx *bbolt.Tx) error {
		head, err := readHead(tx)
		if err != nil && !errors.Is(err, ErrNotInitialized) {
			return err
		}
		prevRoot := smt.EmptyRoot
		if head != nil {
			prevRoot = head.StateRoot
		}
		// New nodes are filed under the height being committed.
		var version uint64
		if head != nil {
			version = head.Height + 1
		}
		nodes, err := smt.NewBoltVersionedStore(tx, bucketSMT, bucketSMTRoots, version)
		if err != nil {
			return err
		}
		if !s.archive.Load() {
			if err := nodes.RecordOrphans(bucketSMTOrphans); err != nil {
				return err
			}
		}
		tree := smt.New(nodes, prevRoot)
		flat := tx.Bucket(bucketState)
		for _, w := range writes {
			if len(w.Key) == 0 {
				return errors.New("store: empty state key")
			}
			// A write that leaves a key as it was (the same value, or a
			// delete of an absent key) changes neither the flat state nor
			// the root: skip its tree update, so a commit costs what the
			// block changed.
			if old := flat.Get(w.Key); (w.Value == nil && old == nil) || (w.Value != nil && old != nil && bytes.Equal(old, w.Value)) {
				continue
			}
			if w.Value == nil {
				if err := tree.Delete(w.Key); err != nil {
					return err
				}
				if err := flat.Delete(w.Key); err != nil {
					return err
				}
				continue
			}
			if err := tree.Update(w.Key, nonEmpty(w.Value)); err != nil {
				return err
			}
			if err := flat.Put(w.Key, w.Value); err != nil {
				return err
			}
		}
		root, err := tree.Commit()
		if err != nil {
			return err
		}
		blk, receipts, encoded, err := build(types.Hash(root))
		if err != nil {
			return err
		}
		if encoded != nil && len(encoded) != len(receipts) {
			return fmt.Errorf("store: %d receipt encodings for %d receipts", len(encoded), len(receipts))
		}
		if blk.Header.StateRoot != types.Hash(root) {
			return fmt.Errorf("%w: block says %s, state gives %s", ErrRootMismatch, blk.Header.StateRoot, types.Hash(root))
		}
		if head == nil {
			if blk.Header.Height != 0 {
				return fmt.Errorf("store: first block must be genesis (height 0), got %d", blk.Header.Height)
			}
		} else if blk.Header.Height != head.Height+1 || blk.Header.ParentHash != head.Hash() {
			return fmt.Errorf("store: block %d does not extend head %d (%s)", blk.Header.Height, head.Height, head.Hash())
		}
		// One receipt per transaction, in order, then the block's timer
		// receipts (chain/execution: timer executions in the timer lane).
		if len(receipts) < len(blk.Txs) {
			return fmt.Errorf("store: %d receipts for %d transactions", len(receipts), len(blk.Txs))
		}
		if err := writeBlock(tx, blk, receipts, encoded); err != nil {
			return err
		}
		if uint64(len(receipts)) > 1<<32-1 {
			return errors.New("store: too many transactions in one block")
		}
		if err := tx.Bucket(bucketMeta).Put(metaHead, heightKey(blk.Header.Height)); err != nil {
			return err
		}
		out = blk
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: commit: %w", err)
	}
	s.mu.Lock()
	h := out.Header
	s.head = &h
	s.mu.Unlock()
	return out, nil
}

// nonEmpty maps an empty value to a single zero byte for the Merkle tree,
// which stores only non-empty values. State values are canonical CBOR and
// never empty, so this never conflates two real values.
func nonEmpty(v []byte) []byte {
	if len(v) == 0 {
		return []byte{0}
	}
	return v
}

func txKey(height uint64, index uint32) []byte {
	k := make([]byte, 12)
	binary.BigEndian.PutUint64(k, height)
	binary.BigEndian.PutUint32(k[8:], index)
	return k
}

func writeBlock(tx *bbolt.Tx, blk *types.Block, receipts []*types.Receipt, encoded [][]byte) error {
	hk := heightKey(blk.Header.Height)
	hdr, err := codec.Marshal(&blk.Header)
	if err != nil {
		return err
	}
	headers := tx.Bucket(bucketHeaders)
	headers.FillPercent = appendFill
	if err := headers.Put(hk, hdr); err != nil {
		return err
	}
	txs, rs := tx.Bucket(bucketTxs), tx.Bucket(bucketReceipts)
	txs.FillPercent, rs.FillPercent = appendFill, appendFill
	for i, raw := range blk.Txs {
		if err := txs.Put(txKey(blk.Header.Height, uint32(i)), raw); err != nil {
			return err
		}
	}
	for i := range receipts {
		k := txKey(blk.Header.Height, uint32(i))
		var enc []byte
		if encoded != nil {
			enc = encoded[i]
		} else if enc, err = codec.Marshal(receipts[i]); err != nil {
			return err
		}
		if err := rs.Put(k, enc); err != nil {
			return err
		}
	}
	return indexBlock(tx, blk, receipts)
}

func indexBlock(tx *bbolt.Tx, blk *types.Block, receipts []*types.Receipt) error {
	h := blk.Hash()
	hk := heightKey(blk.Header.Height)
	if err := tx.Bucket(bucketHashes).Put(h[:], hk); err != nil {
		return err
	}
	// The tx index's keys are hashes, spread at random over the bucket, and
	// the event indexes' start with an emitter or topic: each index's keys
	// are put in key order, so that bbolt's cursor walks its pages once
	// from left to right instead of seeking from the root into a random
	// page per key (the same entries; only the order of the puts differs).
	txEntries := make([]indexEntry, 0, len(receipts))
	var emitEntries, topicEntries []indexEntry
	for i, r := range receipts {
		txEntries = append(txEntries, indexEntry{key: r.TxHash[:], val: txKey(blk.Header.Height, uint32(i))})
		for j, ev := range r.Events {
			pos := eventPos{Height: blk.Header.Height, Tx: uint32(i), Event: uint32(j)}.bytes()
			emitEntries = append(emitEntries, indexEntry{key: append(ev.Emitter[:], pos...)})
			th := topicHash(ev.Topic)
			topicEntries = append(topicEntries, indexEntry{key: append(th[:], pos...)})
		}
	}
	if err := putSorted(tx.Bucket(bucketTxIndex), txEntries); err != nil {
		return err
	}
	if err := putSorted(tx.Bucket(bucketEvEmit), emitEntries); err != nil {
		return err
	}
	topics := tx.Bucket(bucketEvTopic)
	topics.FillPercent = appendFill
	return putSorted(topics, topicEntries)
}

// appendFill is the page fill of buckets whose keys a block appends in
// order (by height, or within a topic by height): bbolt's default (half)
// suits random keys, but appended pages are never filled again, so half
// of every page written was empty space, written and fsynced.
const appendFill = 0.95

// indexEntry is one key and value to put in an index bucket.
type indexEntry struct{ key, val []byte }

// putSorted puts entries into b in key order (it sorts entries).
func putSorted(b *bbolt.Bucket, entries []indexEntry) error {
	slices.SortFunc(entries, func(x, y indexEntry) int { return bytes.Compare(x.key, y.key) })
	for _, e := range entries {
		if err := b.Put(e.key, e.val); err != nil {
			return err
		}
	}
	return nil
}

func topicHash(t string) types.Hash { return types.Keccak256([]byte(t)) }

// View runs fn with a consistent read view of the latest committed state.
func (s *Store) View(fn func(v *View) error) error {
	return s.db.View(func(tx *bbolt.Tx) error {
		head := s.viewHead.Load()
		if k := tx.Bucket(bucketMeta).Get(metaHead); head == nil || k == nil || !bytes.Equal(k, heightKey(head.Height)) {
			var err error
			if head, err = readHead(tx); err != nil {
				return err
			}
			s.viewHead.Store(head)
		}
		return fn(&View{tx: tx, head: head})
	})
}

// View is a read-only snapshot of the chain. It implements state.Reader for
// the latest state. It is valid only inside Store.View.
type View struct {
	tx   *bbolt.Tx
	head *types.Header
}

// Height is the height of the header the view's state belongs to.
func (v *View) Height() uint64 { return v.head.Height }

// Head is the header the view's state belongs to.
func (v *View) Head() *types.Header { h := *v.head; return &h }

// Get implements state.Reader. The value is copied out of the mmap.
func (v *View) Get(key []byte) ([]byte, bool, error) {
	val := v.tx.Bucket(bucketState).Get(key)
	if val == nil {
		return nil, false, nil
	}
	return append([]byte(nil), val...), true, nil
}

// Scan implements state.Reader: every state key starting with prefix, in
// key order.
func (v *View) Scan(prefix []byte, fn func(key, value []byte) error) error {
	c := v.tx.Bucket(bucketState).Cursor()
	for k, val := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, val = c.Next() {
		if err := fn(append([]byte(nil), k...), append([]byte(nil), val...)); err != nil {
			return err
		}
	}
	return nil
}

// ForEach calls fn for every state key under prefix p, in key order.
func (v *View) ForEach(p state.Prefix, fn func(key, value []byte) error) error {
	c := v.tx.Bucket(bucketState).Cursor()
	for k, val := c.Seek([]byte{byte(p)}); k != nil && k[0] == byte(p); k, val = c.Next() {
		if err := fn(append([]byte(nil), k...), append([]byte(nil), val...)); err != nil {
			return err
		}
	}
	return nil
}

// Header returns the header at height.
func (v *View) Header(height uint64) (*types.Header, error) {
	raw := v.tx.Bucket(bucketHeaders).Get(heightKey(height))
	if raw == nil {
		return nil, fmt.Errorf("block %d: %w", height, ErrNotFound)
	}
	var h types.Header
	if err := codec.UnmarshalStored(raw, &h); err != nil {
		return nil, fmt.Errorf("decode header %d: %w", height, err)
	}
	return &h, nil
}

// Block returns the block at height.
func (v *View) Block(height uint64) (*types.Block, error) {
	h, err := v.Header(height)
	if err != nil {
		return nil, err
	}
	b := &types.Block{Header: *h, Txs: []types.Bytes{}}
	hk := heightKey(height)
	c := v.tx.Bucket(bucketTxs).Cursor()
	for k, val := c.Seek(hk); k != nil && bytes.HasPrefix(k, hk); k, val = c.Next() {
		b.Txs = append(b.Txs, append(types.Bytes(nil), val...))
	}
	return b, nil
}

// BlockByHash returns the block with the given hash.
func (v *View) BlockByHash(h types.Hash) (*types.Block, error) {
	hk := v.tx.Bucket(bucketHashes).Get(h[:])
	if hk == nil {
		return nil, fmt.Errorf("block %s: %w", h, ErrNotFound)
	}
	return v.Block(binary.BigEndian.Uint64(hk))
}

// Receipts returns the receipts of the block at height.
func (v *View) Receipts(height uint64) ([]*types.Receipt, error) {
	if _, err := v.Header(height); err != nil {
		return nil, err
	}
	hk := heightKey(height)
	rs := []*types.Receipt{}
	c := v.tx.Bucket(bucketReceipts).Cursor()
	for k, val := c.Seek(hk); k != nil && bytes.HasPrefix(k, hk); k, val = c.Next() {
		var r types.Receipt
		if err := codec.UnmarshalStored(val, &r); err != nil {
			return nil, fmt.Errorf("decode receipt %x: %w", k, err)
		}
		rs = append(rs, &r)
	}
	return rs, nil
}

// TxLocation is where a transaction was included.
type TxLocation struct {
	Height uint64
	Index  uint32
}

// FindTx returns the location, transaction and receipt of hash. For a
// receipt past the block's transactions (a timer execution), the
// transaction is nil.
func (v *View) FindTx(hash types.Hash) (TxLocation, *types.Tx, *types.Receipt, error) {
	loc := v.tx.Bucket(bucketTxIndex).Get(hash[:])
	if loc == nil {
		return TxLocation{}, nil, nil, fmt.Errorf("transaction %s: %w", hash, ErrNotFound)
	}
	l := TxLocation{Height: binary.BigEndian.Uint64(loc[:8]), Index: binary.BigEndian.Uint32(loc[8:])}
	raw := v.tx.Bucket(bucketTxs).Get(loc)
	rraw := v.tx.Bucket(bucketReceipts).Get(loc)
	if rraw == nil {
		return l, nil, nil, fmt.Errorf("transaction %s: index points at missing entry %d/%d", hash, l.Height, l.Index)
	}
	var tx *types.Tx
	if raw != nil {
		var err error
		if tx, err = types.DecodeTx(raw); err != nil {
			return l, nil, nil, err
		}
	}
	var r types.Receipt
	if err := codec.UnmarshalStored(rraw, &r); err != nil {
		return l, nil, nil, fmt.Errorf("decode receipt of %s: %w", hash, err)
	}
	return l, tx, &r, nil
}

// Prove returns the value of a state key at the given height (or the head if
// height is nil) with a Merkle proof against that block's state root.
func (v *View) Prove(key []byte, height *uint64) (root types.Hash, value []byte, proof *smt.Proof, err error) {
	hdr := v.head
	if height != nil {
		if below := pruneBelow(v.tx); *height < below {
			return types.Hash{}, nil, nil, fmt.Errorf("state at height %d (kept from %d): %w", *height, below, ErrPruned)
		}
		blk, err := v.Block(*height)
		if err != nil {
			return types.Hash{}, nil, nil, err
		}
		hdr = &blk.Header
	}
	nodes, err := smt.NewBoltVersionedStore(v.tx, bucketSMT, bucketSMTRoots, 0)
	if err != nil {
		return types.Hash{}, nil, nil, err
	}
	tree := smt.New(nodes, [32]byte(hdr.StateRoot))
	val, found, err := tree.Get(key)
	if err != nil {
		return types.Hash{}, nil, nil, err
	}
	p, err := tree.Prove(key)
	if err != nil {
		return types.Hash{}, nil, nil, err
	}
	if !found {
		val = nil
	}
	return hdr.StateRoot, val, p, nil
}
