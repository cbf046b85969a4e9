package node

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/store"
)

// DefaultPruneKeep is the number of recent heights whose state a node keeps
// unless told otherwise: light-client proofs are anchored a block or two
// behind the head, and state snapshots are taken every 10,000 heights or
// less, so a snapshot height stays provable until the next one exists.
const DefaultPruneKeep = 10_000

// startPruner runs the state pruner beside block execution until ctx is
// done or the returned stop function is called (which waits for it). It
// wakes every block interval and deletes what fell out of the kept window
// in bounded transactions (store.PruneStep), so a block commit waiting for
// the database waits for one batch at most. An archive node runs none.
func (n *Node) startPruner(ctx context.Context) (stop func()) {
	if n.cfg.Archive {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n.runPruner(ctx)
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}

func (n *Node) runPruner(ctx context.Context) {
	t := time.NewTicker(n.cfg.BlockInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := n.store.Prune(ctx, n.cfg.PruneKeep, store.DefaultPruneBatch)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case errors.Is(err, store.ErrNotInitialized):
		case err != nil:
			n.log.Error("state pruning failed; retrying next block", "err", err)
		case st.Deleted > 0:
			n.log.Debug("pruned state", "kept_from", st.Below, "nodes", st.Deleted, "batches", st.Batches)
		}
		if n.cfg.PruneHistory > 0 {
			n.pruneHistory(ctx)
		}
	}
}

// pruneHistory deletes the block history below the last cfg.PruneHistory
// heights, in bounded transactions.
func (n *Node) pruneHistory(ctx context.Context) {
	for ctx.Err() == nil {
		below, deleted, more, err := n.store.PruneHistoryStep(n.cfg.PruneHistory, store.DefaultHistoryBatch)
		switch {
		case errors.Is(err, store.ErrNotInitialized):
			return
		case err != nil:
			n.log.Error("history pruning failed; retrying next block", "err", err)
			return
		case deleted > 0:
			n.log.Debug("pruned history", "kept_from", below, "blocks", deleted)
		}
		if !more {
			return
		}
	}
}
