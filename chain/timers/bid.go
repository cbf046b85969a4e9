package timers

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// BidContext is what the block producer passes to a timer's Gas Bidding
// Agent (seed 003 §1, CIP-1). Its canonical CBOR array (Encode) is the
// calldata of the read-only getGasBid call.
type BidContext struct {
	_                   struct{} `cbor:",toarray"`
	TriggerHeight       uint64   `json:"trigger_block_height"` // the timer's target height
	CurrentHeight       uint64   `json:"current_block_height"`
	BasefeeCycle        uint64   `json:"basefee_cycle"`
	BasefeeCell         uint64   `json:"basefee_cell"`
	LastBlockCycleUsage uint64   `json:"last_block_cycle_usage"`
	OwnerBalance        *big.Int `json:"owner_actor_balance"`
}

// Encode returns the canonical CBOR encoding of the context.
func (c *BidContext) Encode() ([]byte, error) {
	if c.OwnerBalance == nil {
		return nil, fmt.Errorf("%w: bid context without owner balance", ErrInvalid)
	}
	b, err := codec.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("timers: encode bid context: %w", err)
	}
	return b, nil
}

// Bid is a GBA's answer (TxFeeParams): limits and prices for running the
// timer message in this block, with the same meaning as a transaction's.
type Bid struct {
	_              struct{} `cbor:",toarray"`
	CyclesLimit    uint64   `json:"cycles_limit"`
	CellsLimit     uint64   `json:"cells_limit"`
	MaxFeePerCycle uint64   `json:"max_fee_per_cycle"`
	MaxFeePerCell  uint64   `json:"max_fee_per_cell"`
	TipPerCycle    uint64   `json:"tip_per_cycle"`
	TipPerCell     uint64   `json:"tip_per_cell"`
}

// Encode returns the canonical CBOR encoding of the bid, the form a GBA
// returns it in.
func (b *Bid) Encode() ([]byte, error) {
	enc, err := codec.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("timers: encode bid: %w", err)
	}
	return enc, nil
}

// DecodeBid decodes a GBA's return value (canonical CBOR Bid).
func DecodeBid(b []byte) (Bid, error) {
	var bid Bid
	if err := codec.Unmarshal(b, &bid); err != nil {
		return Bid{}, fmt.Errorf("%w: bid: %v", ErrInvalid, err)
	}
	return bid, nil
}

// DefaultBid is the network default bid, used for timers without a GBA and
// when a GBA call fails, reverts, runs out of its cycles or returns an
// undecodable bid: the default limits, max fees at twice the basefees
// (includable through five full blocks, like fees.Suggest) and no tip. It
// relies on the anti-starvation boost to be scheduled under congestion.
func (p Params) DefaultBid(c BidContext) Bid {
	return Bid{
		CyclesLimit:    p.DefaultCyclesLimit,
		CellsLimit:     p.DefaultCellsLimit,
		MaxFeePerCycle: sat2(c.BasefeeCycle),
		MaxFeePerCell:  sat2(c.BasefeeCell),
	}
}

func sat2(v uint64) uint64 {
	if v > ^uint64(0)/2 {
		return ^uint64(0)
	}
	return 2 * v
}

// EffectiveTip is the per-cycle tip the bid pays at basefees b:
// min(tip_per_cycle, max_fee_per_cycle − basefee_cycle). ok is false when
// the bid cannot be included (a max fee below its basefee, or no cycles).
func (b Bid) EffectiveTip(bf fees.Basefees) (tip uint64, ok bool) {
	if b.CyclesLimit == 0 || b.MaxFeePerCycle < bf.Cycle || b.MaxFeePerCell < bf.Cell {
		return 0, false
	}
	return min(b.TipPerCycle, b.MaxFeePerCycle-bf.Cycle), true
}

// Priority is the anti-starvation boosted priority of a timer with
// effective tip tip after d deferrals, when the highest effective tip among
// this block's candidates is ceiling:
//
//	priority = ceiling − ((ceiling − tip) >> d)
//
// The gap to the best bid halves with every deferral (exponential decay),
// so after at most 64 deferrals (fewer: ⌈log2(gap+1)⌉) the timer ranks with
// the best bid of the block, where ties go to the most deferred timer. A
// timer that has never been deferred ranks by its own tip.
func Priority(tip, ceiling uint64, d uint64) uint64 {
	if tip >= ceiling {
		return tip
	}
	return ceiling - (ceiling-tip)>>min(d, 64)
}

// Candidate is a due timer with the bid its GBA returned.
type Candidate struct {
	Timer Timer
	Bid   Bid
}

// Selection is the outcome of Select: the timers to run this block in
// execution order, and those rolled over to the next block.
type Selection struct {
	Fire   []Candidate
	Defer  []Candidate
	Cycles uint64 // sum of the Fire bids' cycles limits (≤ budget)
}

// Select orders due timers under congestion and fills the timer lane.
// Includable candidates (EffectiveTip ok, cycles limit ≤ budget) are
// sorted by Priority descending, then deferrals descending, then target
// ascending, then id ascending; they are taken greedily (first fit) while
// their cycles limits fit in budget. Everything else is deferred. The input
// order does not matter: Select is a pure function of the set.
func Select(cands []Candidate, bf fees.Basefees, budget uint64) Selection {
	type ranked struct {
		c    Candidate
		prio uint64
	}
	var ok []ranked
	var sel Selection
	var ceiling uint64
	for _, c := range cands {
		tip, inc := c.Bid.EffectiveTip(bf)
		if !inc || c.Bid.CyclesLimit > budget {
			sel.Defer = append(sel.Defer, c)
			continue
		}
		ceiling = max(ceiling, tip)
		ok = append(ok, ranked{c: c, prio: tip})
	}
	for i := range ok {
		ok[i].prio = Priority(ok[i].prio, ceiling, ok[i].c.Timer.Deferrals)
	}
	slices.SortFunc(ok, func(a, b ranked) int {
		switch {
		case a.prio != b.prio:
			return cmpDesc(a.prio, b.prio)
		case a.c.Timer.Deferrals != b.c.Timer.Deferrals:
			return cmpDesc(a.c.Timer.Deferrals, b.c.Timer.Deferrals)
		case a.c.Timer.Target != b.c.Timer.Target:
			return cmpDesc(b.c.Timer.Target, a.c.Timer.Target)
		}
		return bytes.Compare(a.c.Timer.ID[:], b.c.Timer.ID[:])
	})
	for _, r := range ok {
		if r.c.Bid.CyclesLimit <= budget-sel.Cycles {
			sel.Fire = append(sel.Fire, r.c)
			sel.Cycles += r.c.Bid.CyclesLimit
		} else {
			sel.Defer = append(sel.Defer, r.c)
		}
	}
	slices.SortFunc(sel.Defer, func(a, b Candidate) int { return bytes.Compare(a.Timer.ID[:], b.Timer.ID[:]) })
	return sel
}

func cmpDesc(a, b uint64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// Refund is a deposit to return to an owner.
type Refund struct {
	Owner  types.Address
	Amount *big.Int
}

// Apply records a block's Selection at height: MarkFired for every fired
// timer (in order) and Defer for every deferred one. It returns the
// deposits of finished one-shot timers for the caller to refund.
func (q *Queue) Apply(kv KV, height uint64, sel Selection) ([]Refund, error) {
	var out []Refund
	for _, c := range sel.Fire {
		r, err := q.MarkFired(kv, c.Timer.ID, height)
		if err != nil {
			return nil, fmt.Errorf("fire %s: %w", c.Timer.ID, err)
		}
		if r.Sign() > 0 {
			out = append(out, Refund{Owner: c.Timer.Owner, Amount: r})
		}
	}
	for _, c := range sel.Defer {
		if err := q.Defer(kv, c.Timer.ID, height); err != nil {
			return nil, fmt.Errorf("defer %s: %w", c.Timer.ID, err)
		}
	}
	return out, nil
}
