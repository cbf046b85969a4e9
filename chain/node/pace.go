package node

import (
	"sync"
	"time"
)

// execPace measures how fast this node executes and commits transactions
// (wall time per transaction, an exponentially weighted average over
// blocks), so that a leader proposes no more than executes in 90% of a
// block interval. Under overload a block is then full but not
// longer, the interval holds and the excess waits in the mempool (or is
// refused there) instead of stretching every block (docs/CONSENSUS.md
// §8.4, *Saturation*). The cap is a proposer's choice, not a validity rule: blocks from
// other validators are checked against MaxBlockTxs only.
type execPace struct {
	mu    sync.Mutex
	perTx time.Duration // 0 until measured
}

// minPacedTxs keeps the cap from collapsing on a noisy measurement.
const minPacedTxs = 200

// observe records one executed block of txs transactions taking d (apply
// and commit). Blocks of fewer than minPacedTxs transactions are dominated
// by the fixed per-block cost and say little about the per-transaction
// one.
func (p *execPace) observe(txs int, d time.Duration) {
	if txs < minPacedTxs {
		return
	}
	per := d / time.Duration(txs)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.perTx == 0 {
		p.perTx = per
		return
	}
	p.perTx = (3*p.perTx + per) / 4
}

// limit is how many transactions fit in budget at the measured pace,
// within [minPacedTxs, most].
func (p *execPace) limit(budget time.Duration, most int) int {
	p.mu.Lock()
	per := p.perTx
	p.mu.Unlock()
	if per <= 0 {
		return most
	}
	return min(most, int(max(int64(budget/per), minPacedTxs)))
}

// blockCap is how many transactions this node proposes in one block:
// MaxBlockTxs on a devnet; on a network what it executes in 90% of a block
// interval, so that execution (which runs beside consensus) keeps pace
// with blocks at the interval.
func (n *Node) blockCap() int {
	if !n.gen.Multi() {
		return n.cfg.MaxBlockTxs
	}
	return n.pace.limit(n.cfg.BlockInterval*9/10, n.cfg.MaxBlockTxs)
}

// poolBlocks is how many full blocks of transactions the mempool admits on
// a network, but never fewer than a quarter of MaxTotal (a burst from one
// client is not overload); beyond that the going fee is refused
// (fee-based eviction still lets a higher fee in).
const poolBlocks = 3

// resizePool fits the mempool's admission limit to the measured pace.
func (n *Node) resizePool() {
	if n.gen.Multi() {
		n.pool.SetLimit(max(poolBlocks*n.blockCap(), n.pool.MaxTotal()/4))
	}
}
