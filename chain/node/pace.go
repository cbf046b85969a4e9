package node

import (
	"sync"
	"time"
)

// execPace measures the rate at which this node executes transactions
// (over its last paceWindow executed blocks, wall time), so that on a
// network the mempool admits a few seconds of it and refuses the excess
// at admission, cheaply and at once, instead of queueing it for many
// intervals (docs/CONSENSUS.md §8.4, *Saturation*).
//
// An earlier version also capped a block at what executed in 90% of an
// interval at the measured per-transaction time. Under overload the
// measurement grew with CPU contention and per-block fixed costs, blocks
// shrank, and committed throughput fell to 41% of the saturated maximum;
// the lanes' cycle budget and the execution-lag bound (build.go) already
// bound a block and the interval, so the cap is gone.
type execPace struct {
	mu     sync.Mutex
	blocks []paceSample // the last paceWindow executed blocks, oldest first
}

type paceSample struct {
	at  time.Time
	txs int
}

const paceWindow = 10

// observe records one executed block of txs transactions, finished at.
func (p *execPace) observe(txs int, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocks = append(p.blocks, paceSample{at, txs})
	if len(p.blocks) > paceWindow {
		p.blocks = p.blocks[1:]
	}
}

// rate is the measured transactions per second, 0 until two blocks.
func (p *execPace) rate() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.blocks) < 2 {
		return 0
	}
	span := p.blocks[len(p.blocks)-1].at.Sub(p.blocks[0].at).Seconds()
	if span <= 0 {
		return 0
	}
	txs := 0
	for _, b := range p.blocks[1:] {
		txs += b.txs
	}
	return float64(txs) / span
}

// poolSeconds is how many seconds of measured execution the mempool admits
// on a network, but never fewer than a quarter of MaxTotal (a burst from
// one client is not overload); beyond that the going fee is refused
// (fee-based eviction still lets a higher fee in).
const poolSeconds = 3

// resizePool fits the mempool's admission limit to the measured pace.
func (n *Node) resizePool() {
	if n.gen.Multi() {
		n.pool.SetLimit(max(int(poolSeconds*n.pace.rate()), n.pool.MaxTotal()/4))
	}
}
