package mempool

import (
	"container/heap"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// SelectLanes picks a block's transactions lane by lane (spec 002 §6.3,
// §6.4, §17.9) and returns at most max of them in priority order; the
// executor fits them exactly (it knows the timer lane's claim) and puts
// them in the block's seed order.
//
// Each lane's transactions are tagged by fees.LaneOf and ranked by
// effective fee at that lane's basefees (fees.LaneSchedule.Basefees),
// ties by hash. Pass 1 fills the system and runner lanes' reservations;
// pass 2 fills the rest of the block from all lanes. A sender contributes
// the contiguous run of transactions from its state nonce, in nonce order:
// when one of them cannot be taken (it does not fit, or it cannot pay its
// lane's basefee) the sender's later ones wait too. The timer lane's claim
// is unknown here and taken as zero, so the user lane may be offered more
// than the executor will accept; what does not fit stays in the pool.
func (p *Pool) SelectLanes(nonceOf func(types.Address) (uint64, error), bf fees.Basefees, max int, lanes fees.LaneSchedule, caps fees.LaneCaps) ([]*types.Tx, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var runs []*laneRun
	for _, from := range p.sortedAccounts() {
		n, err := nonceOf(from)
		if err != nil {
			return nil, err
		}
		r := &laneRun{}
		for e, ok := p.accounts[from].txs[n]; ok; e, ok = p.accounts[from].txs[n] {
			r.txs = append(r.txs, e)
			n++
		}
		if len(r.txs) > 0 {
			runs = append(runs, r)
		}
	}
	laneOf := func(e *entry) fees.Lane { return fees.LaneOf(e.tx, e.in) }
	item := func(r *laneRun) (*laneItem, bool) {
		if r.next >= len(r.txs) {
			return nil, false
		}
		e := r.txs[r.next]
		lbf := lanes.Basefees(bf, laneOf(e))
		if fees.Includable(e.tx, lbf) != nil {
			return nil, false
		}
		return &laneItem{e: e, fee: e.feeAt(lbf), r: r}, true
	}
	meter := caps.Meter()
	var out []*types.Tx
	reserved := func(e *entry) bool { l := laneOf(e); return l == fees.LaneSystem || l == fees.LaneRunner }

	// Pass 1: the reserved lanes, within their reservations.
	h := &laneHeap{}
	for _, r := range runs {
		if it, ok := item(r); ok && reserved(it.e) {
			h.items = append(h.items, it)
		}
	}
	heap.Init(h)
	for h.Len() > 0 && len(out) < max {
		it := heap.Pop(h).(*laneItem)
		l, c := laneOf(it.e), it.e.tx.CyclesLimit()
		if !meter.FitsReserved(l, c) {
			continue // the sender waits for pass 2
		}
		meter.Add(l, c)
		out = append(out, it.e.tx)
		r := it.r
		r.next++
		if nx, ok := item(r); ok && reserved(nx.e) {
			heap.Push(h, nx)
		}
	}
	// Pass 2: every lane, within what is left of the block.
	h = &laneHeap{}
	for _, r := range runs {
		if it, ok := item(r); ok {
			h.items = append(h.items, it)
		}
	}
	heap.Init(h)
	for h.Len() > 0 && len(out) < max {
		it := heap.Pop(h).(*laneItem)
		c := it.e.tx.CyclesLimit()
		if !meter.Fits(c) {
			continue // this sender is done for this block
		}
		meter.Add(laneOf(it.e), c)
		out = append(out, it.e.tx)
		r := it.r
		r.next++
		if nx, ok := item(r); ok {
			heap.Push(h, nx)
		}
	}
	return out, nil
}

// laneRun is one sender's contiguous pending run and how much of it is taken.
type laneRun struct {
	txs  []*entry
	next int
}

// laneItem is a heap entry: a pending transaction, its effective fee and,
// in SelectLanes, its sender's run.
type laneItem struct {
	e   *entry
	fee *big.Int
	r   *laneRun
}

// laneHeap pops the highest effective fee first, ties by lowest hash.
type laneHeap struct{ items []*laneItem }

func (h *laneHeap) Len() int { return len(h.items) }
func (h *laneHeap) Less(i, j int) bool {
	if c := h.items[i].fee.Cmp(h.items[j].fee); c != 0 {
		return c > 0
	}
	return lessHash(h.items[i].e.tx.Hash(), h.items[j].e.tx.Hash())
}
func (h *laneHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *laneHeap) Push(x any)    { h.items = append(h.items, x.(*laneItem)) }
func (h *laneHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return it
}
