package store

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/state/smt"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"go.etcd.io/bbolt"
)

// Pruning deletes the state (sparse-Merkle nodes) of old heights. Every
// block records, in bucketSMTOrphans, the nodes its changes replaced; a node
// dropped by block d belongs only to heights below d. Prune first raises the
// prune watermark (metaPruneBelow, the lowest height whose state is kept),
// in its own transaction, so reads below it refuse with ErrPruned from then
// on; it then deletes, in bounded transactions, the nodes dropped at or
// below the watermark together with their orphan records. A crash between
// (or inside) those transactions leaves every kept height whole, and the
// next Prune carries on where it stopped.
//
// Only state is pruned. Headers, transactions, receipts and their indexes
// are the chain's history and are kept; the flat state bucket holds the
// head's state alone and so does not grow with height.

// SetArchive makes the store an archive: commits stop writing orphan
// records (Prune then has nothing to delete). Nodes dropped while it is on
// are never pruned later; call it before the first commit of a run.
func (s *Store) SetArchive(on bool) { s.archive.Store(on) }

// PrunedBelow returns the lowest height whose state is kept (0 when nothing
// was pruned).
func (s *Store) PrunedBelow() uint64 { return s.metaHeight(metaPruneBelow, 0) }

func pruneBelow(tx *bbolt.Tx) uint64 { return readMetaHeight(tx, metaPruneBelow, 0) }

// metaHeight reads a height kept under key in the meta bucket (def when
// none is).
func (s *Store) metaHeight(key []byte, def uint64) uint64 {
	h := def
	_ = s.db.View(func(tx *bbolt.Tx) error {
		h = readMetaHeight(tx, key, def)
		return nil
	})
	return h
}

func readMetaHeight(tx *bbolt.Tx, key []byte, def uint64) uint64 {
	if v := tx.Bucket(bucketMeta).Get(key); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return def
}

// PruneStats reports one Prune call.
type PruneStats struct {
	Below   uint64 // lowest kept height after the call
	Deleted int    // Merkle nodes deleted
	Batches int    // write transactions that deleted nodes
}

// Prune keeps the state of the last keep heights (keep >= 1: the head's
// state is never pruned) and deletes older nodes in transactions of at
// most batch deletions each (PruneStep), yielding the database to block
// commits between them. It returns when nothing more is due or ctx is
// done (then with ctx's error; what was deleted stays deleted, and the
// rest is left for the next call).
func (s *Store) Prune(ctx context.Context, keep uint64, batch int) (PruneStats, error) {
	var st PruneStats
	for {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		below, n, more, err := s.PruneStep(keep, batch)
		if err != nil {
			return st, err
		}
		st.Below = below
		if n > 0 {
			st.Batches++
		}
		st.Deleted += n
		if !more {
			return st, nil
		}
	}
}

// PruneStep is one bounded step of Prune, in one write transaction: it
// raises the prune watermark to head+1-keep if that is higher (so reads
// below it refuse with ErrPruned from this commit on) and deletes at most
// batch nodes that only heights below the watermark reference. It returns
// the watermark, the number deleted and whether more are due.
func (s *Store) PruneStep(keep uint64, batch int) (below uint64, deleted int, more bool, err error) {
	if batch <= 0 {
		batch = DefaultPruneBatch
	}
	err = s.pruneTx("prune", keep, func(tx *bbolt.Tx, head *types.Header) error {
		below = pruneBelow(tx)
		if head.Height+1 > keep {
			if want := head.Height + 1 - keep; want > below {
				below = want
				if err := tx.Bucket(bucketMeta).Put(metaPruneBelow, heightKey(want)); err != nil {
					return err
				}
			}
		}
		if below == 0 {
			return nil
		}
		var err error
		deleted, more, err = smt.PruneOrphans(tx, bucketSMT, bucketSMTRoots, bucketSMTOrphans, below, batch)
		return err
	})
	if err != nil {
		return 0, 0, false, err
	}
	return below, deleted, more, nil
}

// pruneTx runs fn in one write transaction with the head, one pruning
// step at a time; what names the step in errors.
func (s *Store) pruneTx(what string, keep uint64, fn func(tx *bbolt.Tx, head *types.Header) error) error {
	if keep == 0 {
		return fmt.Errorf("store: %s: keep must be at least 1", what)
	}
	s.pruneMu.Lock()
	defer s.pruneMu.Unlock()
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		head, err := readHead(tx)
		if err != nil {
			return err
		}
		return fn(tx, head)
	}); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	return nil
}

// DefaultPruneBatch is the number of nodes PruneStep deletes in one
// transaction when not told: a few milliseconds of work, so a block commit
// waiting for the database is never held up for long.
const DefaultPruneBatch = 2000
