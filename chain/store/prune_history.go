package store

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"go.etcd.io/bbolt"
)

// History pruning deletes the block history below the kept window: the
// headers, transactions and receipts of heights 1 … below-1 and their
// index entries (block hash, transaction hash, event emitter and topic).
// The genesis block (height 0) is always kept. A node that prunes history
// serves blocks, transactions, receipts and events of its window only;
// reads below it find nothing (ErrNotFound). Consensus block sync and
// snapshot offers are served from the finalized-block log (a separate
// database), so history pruning does not change what a node can serve to
// other nodes. Measured in docs/BENCHMARKS.md: at 100,000 blocks the
// history kept forever (headers alone, ≈0.5 KiB of pages a block) would
// be ≈12× the live state of that run by itself.

var metaHistoryBelow = []byte("history_below") // lowest height above 0 whose block is kept

// HistoryBelow returns the lowest height above genesis whose block history
// is kept (0 or 1 when none was pruned).
func (s *Store) HistoryBelow() uint64 { return s.metaHeight(metaHistoryBelow, 1) }

func historyBelow(tx *bbolt.Tx) uint64 { return readMetaHeight(tx, metaHistoryBelow, 1) }

// PruneHistoryStep is one bounded step of history pruning, in one write
// transaction: it deletes the blocks (with their transactions, receipts
// and index entries) of at most batch heights below head+1-keep, starting
// with the lowest kept one, and records how far it got. It returns the
// lowest height whose history is kept, the blocks deleted and whether more
// are due. A crash loses nothing: the watermark moves in the same
// transaction as the deletions.
func (s *Store) PruneHistoryStep(keep uint64, batch int) (below uint64, deleted int, more bool, err error) {
	if batch <= 0 {
		batch = DefaultHistoryBatch
	}
	err = s.pruneTx("prune history", keep, func(tx *bbolt.Tx, head *types.Header) error {
		below = historyBelow(tx)
		if head.Height+1 <= keep {
			return nil
		}
		want := head.Height + 1 - keep
		for below < want && deleted < batch {
			if err := deleteBlock(tx, below); err != nil {
				return err
			}
			below++
			deleted++
		}
		more = below < want
		if deleted == 0 {
			return nil
		}
		return tx.Bucket(bucketMeta).Put(metaHistoryBelow, heightKey(below))
	})
	if err != nil {
		return 0, 0, false, err
	}
	return below, deleted, more, nil
}

// deleteBlock deletes the block at height h (a height never written, as
// below a restored snapshot, is skipped) with its index entries.
func deleteBlock(tx *bbolt.Tx, h uint64) error {
	hk := heightKey(h)
	headers := tx.Bucket(bucketHeaders)
	raw := headers.Get(hk)
	if raw == nil {
		return nil
	}
	var hdr types.Header
	if err := codec.UnmarshalStored(raw, &hdr); err != nil {
		return fmt.Errorf("decode header %d: %w", h, err)
	}
	hash := hdr.Hash()
	if err := tx.Bucket(bucketHashes).Delete(hash[:]); err != nil {
		return err
	}
	txIndex, emit, topic := tx.Bucket(bucketTxIndex), tx.Bucket(bucketEvEmit), tx.Bucket(bucketEvTopic)
	if err := deletePrefix(tx.Bucket(bucketReceipts), hk, func(k, v []byte) error {
		var r types.Receipt
		if err := codec.UnmarshalStored(v, &r); err != nil {
			return fmt.Errorf("decode receipt %x: %w", k, err)
		}
		if err := txIndex.Delete(r.TxHash[:]); err != nil {
			return err
		}
		i := binary.BigEndian.Uint32(k[8:])
		for j, ev := range r.Events {
			pos := eventPos{Height: h, Tx: i, Event: uint32(j)}.bytes()
			if err := emit.Delete(append(ev.Emitter[:], pos...)); err != nil {
				return err
			}
			th := topicHash(ev.Topic)
			if err := topic.Delete(append(th[:], pos...)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := deletePrefix(tx.Bucket(bucketTxs), hk, nil); err != nil {
		return err
	}
	return headers.Delete(hk)
}

// deletePrefix deletes b's keys that start with prefix, calling each (if
// set) with the key and value first.
func deletePrefix(b *bbolt.Bucket, prefix []byte, each func(k, v []byte) error) error {
	var keys [][]byte
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if each != nil {
			if err := each(k, v); err != nil {
				return err
			}
		}
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// DefaultHistoryBatch is the number of blocks PruneHistoryStep deletes in
// one transaction when not told.
const DefaultHistoryBatch = 64
