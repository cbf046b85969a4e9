package timers

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func TestPriorityDecay(t *testing.T) {
	const ceil = 1_000_000
	prev := Priority(0, ceil, 0)
	if prev != 0 {
		t.Fatalf("undeferred priority %d, want its tip", prev)
	}
	for d := uint64(1); d <= 70; d++ {
		p := Priority(0, ceil, d)
		if p < prev || p > ceil {
			t.Fatalf("d=%d: priority %d not monotone within [tip, ceiling]", d, p)
		}
		// the gap halves: ceiling − p = (ceiling − tip) >> d
		if ceil-p != uint64(ceil)>>min(d, 64) {
			t.Fatalf("d=%d: gap %d", d, ceil-p)
		}
		prev = p
	}
	if Priority(0, ceil, 20) != ceil || Priority(0, ^uint64(0), 64) != ^uint64(0) {
		t.Fatal("boost does not reach the ceiling")
	}
	if Priority(500, 100, 3) != 500 {
		t.Fatal("tip above ceiling changed")
	}
}

func TestSelectOrderAndBudget(t *testing.T) {
	bf := fees.Basefees{Cycle: 100, Cell: 10}
	mk := func(i int, tip, cycles, deferrals uint64) Candidate {
		return Candidate{
			Timer: Timer{ID: types.Hash{byte(i)}, Target: 10, Deferrals: deferrals},
			Bid:   Bid{CyclesLimit: cycles, MaxFeePerCycle: 1000, MaxFeePerCell: 10, TipPerCycle: tip},
		}
	}
	cands := []Candidate{
		mk(1, 5, 100, 0),
		mk(2, 50, 100, 0),
		mk(3, 50, 100, 0), // ties with 2: id decides
		mk(4, 0, 100, 10), // boosted: gap 50>>10 = 0 → ceiling, most deferred → first
		mk(5, 40, 1000, 0),
		{Timer: Timer{ID: types.Hash{6}}, Bid: Bid{CyclesLimit: 1, MaxFeePerCycle: 99, MaxFeePerCell: 10}}, // below basefee
		mk(7, 1000, 5000, 0), // larger than the whole budget
	}
	sel := Select(cands, bf, 350)
	var fired []byte
	for _, c := range sel.Fire {
		fired = append(fired, c.Timer.ID[0])
	}
	if !slices.Equal(fired, []byte{4, 2, 3}) || sel.Cycles != 300 {
		t.Fatalf("fired %v (%d cycles)", fired, sel.Cycles)
	}
	if len(sel.Defer) != 4 {
		t.Fatalf("deferred %d", len(sel.Defer))
	}
	// order independence
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		r.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		s2 := Select(cands, bf, 350)
		for i := range s2.Fire {
			if s2.Fire[i].Timer.ID != sel.Fire[i].Timer.ID {
				t.Fatal("selection depends on input order")
			}
		}
	}
	// Effective tip is capped by max fee − basefee.
	if tip, ok := (Bid{CyclesLimit: 1, MaxFeePerCycle: 120, TipPerCycle: 50, MaxFeePerCell: 10}).EffectiveTip(bf); !ok || tip != 20 {
		t.Fatalf("effective tip %d %v", tip, ok)
	}
}

func TestDefaultBidAndContext(t *testing.T) {
	p := DefaultParams()
	c := BidContext{TriggerHeight: 5, CurrentHeight: 9, BasefeeCycle: 7, BasefeeCell: 3, LastBlockCycleUsage: 1, OwnerBalance: big.NewInt(1)}
	b := p.DefaultBid(c)
	if b.MaxFeePerCycle != 14 || b.MaxFeePerCell != 6 || b.TipPerCycle != 0 || b.CyclesLimit != p.DefaultCyclesLimit {
		t.Fatalf("default bid %+v", b)
	}
	enc, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) == 0 || enc[0] != 0x86 { // array(6)
		t.Fatalf("context encoding %x", enc)
	}
	bb, err := (&b).Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeBid(bb)
	if err != nil || back != b {
		t.Fatalf("bid round trip %+v %v", back, err)
	}
}

// TestStarvation saturates the timer lane: every block brings more fresh
// high bidders than the lane can run, and one timer bids the network
// default (no tip). The boost must get it executed within a bounded number
// of blocks, and every high bidder must eventually run too.
func TestStarvation(t *testing.T) {
	p := DefaultParams()
	q := mustQueue(t, p)
	kv := newMemKV()
	bf := fees.Basefees{Cycle: 1_000, Cell: 10}
	budget := uint64(2_000_000) // the timer lane at genesis (§17.9): 20 default-limit timers
	const perBlock = 25         // > 20 fit: saturated
	highTip := map[types.Hash]uint64{}
	const lowAt = 10 // the flood has built a backlog by then
	low, _, err := q.Schedule(kv, Timer{Owner: addr(1), Handler: "low", Target: lowAt, CreatedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	owner := 100
	firedAt := uint64(0)
	maxBacklog := 0
	for h := uint64(2); h < 400; h++ {
		if h < 300 { // a flood for 300 blocks, then the lane drains
			for i := range perBlock {
				if i%20 == 0 {
					owner++ // stay under the per-owner cap
				}
				id, _, err := q.Schedule(kv, Timer{Owner: addr(owner), Handler: "hi", Target: h + 1, CreatedAt: h})
				if err != nil {
					t.Fatal(err)
				}
				highTip[id] = 1_000 + uint64(i)
			}
		}
		due, err := q.Due(kv, h)
		if err != nil {
			t.Fatal(err)
		}
		maxBacklog = max(maxBacklog, len(due))
		cands := make([]Candidate, len(due))
		for i, d := range due {
			ctx := BidContext{TriggerHeight: d.Target, CurrentHeight: h, BasefeeCycle: bf.Cycle, BasefeeCell: bf.Cell, OwnerBalance: big.NewInt(1e18)}
			b := p.DefaultBid(ctx)
			if tip, ok := highTip[d.ID]; ok {
				b.TipPerCycle = tip
			}
			cands[i] = Candidate{Timer: d, Bid: b}
		}
		sel := Select(cands, bf, budget)
		if sel.Cycles > budget || len(sel.Fire) != 20 && len(due) >= 20 {
			t.Fatalf("h=%d: %d fired, %d cycles", h, len(sel.Fire), sel.Cycles)
		}
		for _, c := range sel.Fire {
			if c.Timer.ID == low {
				firedAt = h
			}
		}
		if _, err := q.Apply(kv, h, sel); err != nil {
			t.Fatal(err)
		}
		if firedAt == 0 && h >= lowAt {
			if lt, err := q.Get(kv, low); err != nil || lt.Deferrals != h-lowAt+1 {
				t.Fatalf("h=%d: low deferrals %d (%v)", h, lt.Deferrals, err)
			}
		}
	}
	// Gap to the best bid is ~1,024 (2^10): ≤ 11 deferrals reach the
	// ceiling, then it wins ties as the most deferred.
	if firedAt <= lowAt || firedAt > lowAt+12 {
		t.Fatalf("low bidder fired at %d", firedAt)
	}
	st, _ := q.Stats(kv)
	if st.Depth() != 0 {
		t.Fatalf("lane never drained: %+v (max backlog %d)", st, maxBacklog)
	}
	t.Logf("low bidder fired at height %d; max due backlog %d", firedAt, maxBacklog)
}
