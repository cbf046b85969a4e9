package node

import (
	"context"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Block timing (docs/CONSENSUS.md §8.4, *Block timing* and *Saturation*).
// A leader asked to build waits for the block interval after its parent
// only when there is nothing to do:
// the interval is the pace of empty blocks. It builds at once (after
// MinBlockGap) when
//   - a block on the path from the last final block carries transactions:
//     the block built now certifies it and, by the two-chain rule,
//     finalizes it, so a transaction is final about two quorum round trips
//     after it is proposed instead of a block interval later; or
//   - the mempool holds executable transactions not already ordered;
// and only while execution keeps up (at most maxExecLag finalized blocks
// wait for execution), so ordering cannot run away from state: at
// saturation blocks follow one another as fast as they execute, each full.
// A block holds what the lanes' cycle budget and MaxBlockTxs allow, never
// more because the mempool is deep.

// maxExecLag is how many finalized blocks may wait for execution before
// the leader stops building early.
const maxExecLag = 2

// buildPoll is how often a waiting builder looks again without a wake-up.
const buildPoll = 20 * time.Millisecond

// startBuild answers a BuildRequest in the background: wait as above,
// select transactions, hand the payload back.
func (v *validator) startBuild(ctx context.Context, req *consensus.BuildRequest) {
	if v.cancelB != nil {
		v.cancelB()
	}
	bctx, cancel := context.WithCancel(ctx)
	v.cancelB = cancel
	pts, err := v.timestampOf(req.Parent)
	if err != nil {
		v.log.Error("build: parent payload", "err", err)
		return
	}
	// Transactions ordered but not yet executed must not be picked again.
	var pending []*types.Tx
	for _, b := range req.Path {
		if p, err := decodeCertified(b.Payload); err == nil {
			pending = v.n.appendTxs(pending, p.Txs)
		}
	}
	round, filler := req.Round, req.Height > v.epochEnd
	go func() {
		defer cancel()
		parent := time.UnixMilli(int64(pts))
		due := parent.Add(v.n.cfg.BlockInterval)
		early := parent.Add(v.n.cfg.MinBlockGap)
		timer := time.NewTimer(time.Until(due))
		defer timer.Stop()
		poll := time.NewTicker(buildPoll)
		defer poll.Stop()
		var txs []*types.Tx
		for {
			now := time.Now()
			if !now.Before(due) {
				txs = v.selectFor(filler, pending)
				break
			}
			if !filler && !now.Before(early) && v.execLag() <= maxExecLag {
				if len(pending) > 0 {
					txs = v.selectFor(false, pending)
					break
				}
				if v.n.pool.Executable() > 0 {
					if txs = v.selectFor(false, pending); len(txs) > 0 {
						break
					}
				}
			}
			select {
			case <-bctx.Done():
				return
			case <-timer.C:
			case <-poll.C:
			case <-v.n.txWake:
			}
		}
		ts := max(uint64(time.Now().UnixMilli()), pts+1)
		p := payload{Timestamp: ts, Txs: make([]types.Bytes, 0, len(txs))}
		if head, err := v.n.store.Head(); err == nil {
			p.Exec = consensus.ExecCommit{Height: head.Height, Header: head.Hash()}
		}
		size := 0
		for _, tx := range txs {
			raw := tx.Encode()
			if size+len(raw) > maxPayload-1024 {
				break
			}
			size += len(raw)
			p.Txs = append(p.Txs, raw)
		}
		select {
		case v.built <- builtPayload{round: round, payload: codec.MustMarshal(&p)}:
		case <-bctx.Done():
		}
	}()
}

// selectFor picks the payload's transactions against the executed state,
// skipping those ordered but not executed (pending on the path, queued for
// execution). A filler past the epoch's end is empty.
func (v *validator) selectFor(filler bool, pending []*types.Tx) []*types.Tx {
	if filler {
		return nil
	}
	queued := v.queued()
	var txs []*types.Tx
	err := v.n.store.View(func(sv *store.View) error {
		bf, err := v.n.basefees(sv)
		if err != nil {
			return err
		}
		txs, err = v.n.selectTxs(sv, bf, append(queued, pending...))
		return err
	})
	if err != nil {
		v.log.Error("build: select transactions", "err", err)
		return nil
	}
	return txs
}

// execLag is how many finalized blocks wait for execution.
func (v *validator) execLag() int {
	v.qmu.Lock()
	defer v.qmu.Unlock()
	return len(v.queue)
}

// appendTxs decodes a payload's transactions, reusing those already
// decoded on this node.
func (n *Node) appendTxs(dst []*types.Tx, raws []types.Bytes) []*types.Tx {
	for _, raw := range raws {
		if tx, _, err := n.decode(raw); err == nil {
			dst = append(dst, tx)
		}
	}
	return dst
}

// queued returns the transactions of finalized blocks not yet executed.
func (v *validator) queued() []*types.Tx {
	v.qmu.Lock()
	defer v.qmu.Unlock()
	var out []*types.Tx
	for _, r := range v.queue {
		if p, err := decodeCertified(r.Block.Payload); err == nil {
			out = v.n.appendTxs(out, p.Txs)
		}
	}
	return out
}
