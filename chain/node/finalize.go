package node

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// What a validator does with blocks: Verify before voting, then, once
// blocks are final, record them and execute them in order on top of the
// chain head (executeFinal).

// Verify is the consensus.Application: what an honest validator checks
// before voting for a block. Execution happens on finality, so this checks
// what can be checked without the parent's state: the payload decodes, the
// timestamp moves forward and is not far ahead of this node's clock, and
// every transaction is well formed and signed for this chain.
func (v *validator) Verify(b *consensus.Block, path []*consensus.Block) error {
	if len(b.Payload) > maxPayload {
		return fmt.Errorf("payload of %d bytes", len(b.Payload))
	}
	p, err := decodePayload(b.Payload)
	if err != nil {
		return err
	}
	if err := v.checkExec(p.Exec); err != nil {
		return err
	}
	parent := v.root
	if len(path) > 0 {
		parent = path[len(path)-1]
	}
	pts, err := v.timestampOf(parent)
	if err != nil {
		return err
	}
	if p.Timestamp <= pts {
		return fmt.Errorf("timestamp %d not after the parent's %d", p.Timestamp, pts)
	}
	if limit := uint64(time.Now().Add(maxClockDrift).UnixMilli()); p.Timestamp > limit {
		return fmt.Errorf("timestamp %d ahead of this node's clock", p.Timestamp)
	}
	if len(p.Txs) > v.n.cfg.MaxBlockTxs {
		return fmt.Errorf("%d transactions, limit %d", len(p.Txs), v.n.cfg.MaxBlockTxs)
	}
	if b.Height > v.epochEnd && len(p.Txs) > 0 {
		return fmt.Errorf("height %d is past the epoch's last block %d: only empty blocks", b.Height, v.epochEnd)
	}
	// Transactions this node admitted or saw before were checked then;
	// the others are checked in parallel.
	seen := make(map[types.Hash]bool, len(p.Txs))
	var fresh []*types.Tx
	var at []int
	for i, raw := range p.Txs {
		tx, checked, err := v.n.decode(raw)
		if err != nil {
			return fmt.Errorf("tx %d: %w", i, err)
		}
		if seen[tx.Hash()] {
			return fmt.Errorf("tx %d (%s) twice", i, tx.Hash())
		}
		seen[tx.Hash()] = true
		if !checked {
			fresh, at = append(fresh, tx), append(at, i)
		}
	}
	for k, err := range v.n.checkAll(fresh) {
		if err != nil {
			return fmt.Errorf("tx %d (%s): %w", at[k], fresh[k].Hash(), err)
		}
	}
	// This node votes for the block: its transactions are on their way
	// and no longer count against the pool's admission limit.
	hs := make([]types.Hash, 0, len(seen))
	for h := range seen {
		hs = append(hs, h)
	}
	v.n.pool.MarkOrdered(hs...)
	return nil
}

// checkExec is the state commitment rule (docs/CONSENSUS.md §8.8): a
// proposal commits to the proposer's executed head, and this validator
// votes only for a header it has executed itself. A height it has not
// executed yet defers the vote (consensus.ErrNotReady): the core asks
// again on its next tick.
func (v *validator) checkExec(c consensus.ExecCommit) error {
	head, err := v.n.store.Head()
	if err != nil {
		return err
	}
	if c.Height > head.Height {
		return fmt.Errorf("%w: commits to height %d, executed %d", consensus.ErrNotReady, c.Height, head.Height)
	}
	var h types.Hash
	if c.Height == head.Height {
		h = head.Hash()
	} else if err := v.n.store.View(func(sv *store.View) error {
		hdr, err := sv.Header(c.Height)
		if err != nil {
			return err
		}
		h = hdr.Hash()
		return nil
	}); err != nil {
		return err
	}
	if h != c.Header {
		return fmt.Errorf("%w: commits to header %s at height %d, this node executed %s", consensus.ErrUncommitted, c.Header, c.Height, h)
	}
	return nil
}

func (v *validator) timestampOf(b *consensus.Block) (uint64, error) {
	if b.Height == 0 {
		return v.genTs, nil
	}
	// The parent is on the certified path: only its timestamp is read.
	var p payloadTime
	if err := codec.UnmarshalStored(b.Payload, &p); err != nil {
		return 0, fmt.Errorf("node: decode block payload: %w", err)
	}
	return p.Timestamp, nil
}

// onFinalized logs finalized blocks durably and queues them for execution.
//
// Blocks past the epoch's last block are empty fillers of the old
// configuration: they finalize the last block and are dropped. When the
// last block is final only as an ancestor of a filler, its record gets a
// proof through the fillers (FinalityProof.Via), so that peers syncing can
// check it.
func (v *validator) onFinalized(fs []consensus.Finalized) error {
	var recs []finalRecord
	for i, f := range fs {
		if f.Block.Height > v.epochEnd || v.switching {
			break
		}
		r := finalRecord{Block: *f.Block, QC: f.QC, Proof: f.Proof}
		if f.Block.Height == v.epochEnd {
			v.switching = true
			if last := fs[len(fs)-1]; r.Proof == nil && last.Proof != nil {
				p := *last.Proof
				p.Via = nil
				for _, g := range fs[i+1:] {
					p.Via = append(p.Via, g.Block.ID())
				}
				r.Proof = &p
			}
		}
		recs = append(recs, r)
	}
	if len(recs) == 0 {
		return nil
	}
	if err := v.flog.Put(recs...); err != nil {
		return err
	}
	v.advance(recs)
	return nil
}

func (v *validator) advance(recs []finalRecord) {
	last := recs[len(recs)-1]
	prevRound := v.root.Round
	v.root = &last.Block
	v.rootHash = last.Block.Hash()
	v.lastFin = time.Now()
	v.qmu.Lock()
	v.queue = append(v.queue, recs...)
	v.qmu.Unlock()
	v.serveParked(false) // full nodes waiting for these blocks
	select {
	case v.qwake <- struct{}{}:
	default:
	}
	// Drop WAL records the new root makes irrelevant, every 100 rounds.
	if last.Block.Round/100 != prevRound/100 {
		if err := v.wal.Compact(last.Block.Round); err != nil {
			v.log.Warn("compact consensus WAL", "err", err)
		}
	}
}

// executor executes finalized blocks in order and commits them to the
// chain store. A failure is retried: the block is final, so the node must
// execute it; only a deterministic outcome may be committed.
func (v *validator) executor(ctx context.Context) error {
	for {
		v.qmu.Lock()
		var next *finalRecord
		if len(v.queue) > 0 {
			next = &v.queue[0]
		}
		v.qmu.Unlock()
		if next == nil {
			select {
			case <-ctx.Done():
				return nil
			case <-v.qwake:
				continue
			}
		}
		if err := v.n.executeFinal(ctx, next); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			v.log.Error("executing finalized block failed; retrying", "height", next.Block.Height, "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		v.qmu.Lock()
		v.queue = slices.Delete(v.queue, 0, 1)
		v.qmu.Unlock()
	}
}

// executeFinal executes a finalized consensus block on top of the chain
// head and commits it. Its header is derived from the consensus block and
// the execution result alone, so every node commits the same header.
// Randomness comes from the parent's beacon value R_{n-1}: the block's own
// VRF output is revealed with it and is usable from the next block on.
func (n *Node) executeFinal(ctx context.Context, r *finalRecord) error {
	b := &r.Block
	head, err := n.store.Head()
	if err != nil {
		return err
	}
	if b.Height <= head.Height {
		return nil // committed before a restart
	}
	if b.Height != head.Height+1 {
		return fmt.Errorf("node: finalized block %d does not follow the head %d", b.Height, head.Height)
	}
	p, err := decodeCertified(b.Payload)
	if err != nil {
		p = &payload{} // cannot happen for a block honest validators voted for
	}
	txs := n.appendTxs(nil, p.Txs)
	seed := head.VRFOutput // R_{n-1}
	if head.Height == 0 {
		seed = n.gen.Seed(head.Hash())
	}
	ts := max(p.Timestamp, head.Timestamp+1)
	env := execution.BlockEnv{Height: b.Height, Timestamp: ts, Proposer: b.Proposer, Seed: seed, Signers: b.Justify.Signers}
	var res *execution.Result
	if err := n.store.View(func(v *store.View) error {
		start := time.Now()
		var err error
		res, err = n.exec.Apply(ctx, v, env, txs, execution.Ordered)
		n.observeExecution(start, len(txs))
		return err
	}); err != nil {
		return err
	}
	commitStart := time.Now()
	blk, err := n.store.CommitEncoded(res.Writes, func(root types.Hash) (*types.Block, []*types.Receipt, [][]byte, error) {
		blk, encoded := res.BlockEncoded(n.gen.ChainID, head, env, root)
		// The consensus fields: the round, the VRF reveal and the QC that
		// justified the block.
		blk.Header.Round, blk.Header.VRFOutput, blk.Header.VRFProof = b.Round, b.VRFOutput, b.VRFProof
		blk.Header.ParentQC = codec.MustMarshal(&b.Justify)
		return blk, res.Receipts, encoded, nil
	})
	if err != nil {
		return err
	}
	n.observeCommit(commitStart)
	ntx := len(blk.Txs)
	n.pace.observe(ntx, time.Now())
	n.resizePool()
	if ntx > 0 {
		n.log.Info("block", "height", blk.Header.Height, "txs", ntx, "round", b.Round, "hash", blk.Hash())
	} else {
		n.log.Debug("block", "height", blk.Header.Height, "round", b.Round, "hash", blk.Hash())
	}
	n.maybeSnapshot(blk.Header.Height)
	return n.afterCommit(res)
}
