package timers

import (
	"bytes"
	"cmp"
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func addr(i int) types.Address {
	var a types.Address
	a[0] = 0xAA
	a[18] = byte(i >> 8)
	a[19] = byte(i)
	return a
}

func mustQueue(t testing.TB, p Params) *Queue {
	t.Helper()
	q, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// refTimer is the reference model's view of a timer.
type refTimer struct {
	id       types.Hash
	owner    types.Address
	target   uint64
	interval uint64
	deposit  *big.Int
	fromFar  bool // scheduled into tier 3
}

// model is the plain reference: a map and sorting, no tiers.
type model struct {
	p       Params
	timers  map[types.Hash]*refTimer
	pending map[types.Address]uint64
	nonce   map[types.Address]uint64
	cursor  uint64
	basefee uint64
	started bool
}

func newModel(p Params) *model {
	return &model{p: p, timers: map[types.Hash]*refTimer{}, pending: map[types.Address]uint64{},
		nonce: map[types.Address]uint64{}, basefee: p.InitialBasefee}
}

func (m *model) atHeight(target uint64) uint64 {
	var k uint64
	for _, t := range m.timers {
		if t.target == target && t.target > m.cursor {
			k++
		}
	}
	return k
}

// due is every timer with target ≤ h, ordered by (target, id).
func (m *model) due(h uint64) []*refTimer {
	var out []*refTimer
	for _, t := range m.timers {
		if t.target <= h {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *refTimer) int {
		if c := cmp.Compare(a.target, b.target); c != 0 {
			return c
		}
		return bytes.Compare(a.id[:], b.id[:])
	})
	return out
}

func (m *model) ids() []types.Hash {
	out := make([]types.Hash, 0, len(m.timers))
	for id := range m.timers {
		out = append(out, id)
	}
	slices.SortFunc(out, func(a, b types.Hash) int { return bytes.Compare(a[:], b[:]) })
	return out
}

// checkLayout verifies, from the raw keys, that every timer is indexed
// exactly once, in the tier locate assigns for the current cursor, and that
// every counter matches.
func checkLayout(t *testing.T, kv *memKV, q *Queue, m *model) {
	t.Helper()
	st, err := q.Stats(kv)
	if err != nil {
		t.Fatal(err)
	}
	if st.Height != m.cursor || st.Basefee != m.basefee {
		t.Fatalf("stats height/basefee = %d/%d, model %d/%d", st.Height, st.Basefee, m.cursor, m.basefee)
	}
	var tiers [4]uint64
	for id, r := range m.timers {
		tr, k := locate(r.target, m.cursor, id)
		if _, ok := kv.m[string(k)]; !ok {
			t.Fatalf("timer %s (target %d, cursor %d) not at its tier-%d key", id, r.target, m.cursor, tr)
		}
		tiers[tr]++
	}
	if got := [4]uint64{st.Due, st.Tier1, st.Tier2, st.Tier3}; got != tiers {
		t.Fatalf("tier counts %v, want %v", got, tiers)
	}
	count := map[byte]uint64{}
	heights := map[uint64]uint64{}
	for _, k := range kv.keys {
		if k[0] != PrefixTimers {
			t.Fatalf("key outside prefix: %x", k)
		}
		count[k[1]]++
		if k[1] == tableHeight {
			heights[beU64([]byte(k[2:]))] = beU64(kv.m[k])
		}
	}
	n := uint64(len(m.timers))
	if count[tableRecord] != n || count[tableOwned] != n ||
		count[tableRing]+count[tableEpoch]+count[tableFar]+count[tableDue] != n {
		t.Fatalf("key counts %v, want %d timers", count, n)
	}
	want := map[uint64]uint64{}
	for _, r := range m.timers {
		if r.target > m.cursor {
			want[r.target]++
		}
	}
	if len(want) != len(heights) {
		t.Fatalf("%d height counters, want %d", len(heights), len(want))
	}
	for h, c := range want {
		if heights[h] != c {
			t.Fatalf("height %d counter %d, want %d", h, heights[h], c)
		}
	}
	for o, c := range m.pending {
		got, err := q.PendingCount(kv, o)
		if err != nil || got != c {
			t.Fatalf("owner %s pending %d (%v), want %d", o, got, err, c)
		}
	}
}

func beU64(b []byte) uint64 {
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

// horizon draws a target distance that lands in every tier: the ring,
// tier-2 buckets, tier 3, and exact epoch and ring boundaries.
func horizon(r *rand.Rand, h uint64) uint64 {
	switch r.IntN(6) {
	case 0:
		return 1 + r.Uint64N(8)
	case 1:
		return 1 + r.Uint64N(2*EpochLength)
	case 2: // just around the tier-1/tier-2 and tier-2/tier-3 boundaries of the current epoch
		e := (h + 1) / EpochLength
		b := []uint64{(e + 2) * EpochLength, (e + 2 + EpochBuckets) * EpochLength}[r.IntN(2)]
		d := b - h - 2 + r.Uint64N(4)
		return max(d, 1)
	case 3:
		return 1 + r.Uint64N((EpochBuckets+2)*EpochLength)
	default:
		return 1 + r.Uint64N(4*(EpochBuckets+2)*EpochLength)
	}
}

// runOps drives q and the model with one seeded op stream for blocks
// [start, start+blocks), checking every result against the model, and
// returns the store.
func runOps(t *testing.T, seed uint64, start, blocks uint64, check bool) *memKV {
	p := DefaultParams()
	p.MaxPerOwner = 400
	p.TargetDepth = 200 // the basefee moves both ways
	q := mustQueue(t, p)
	m := newModel(p)
	kv := newMemKV()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	const owners = 7
	farToDue := 0
	for h := start; h < start+blocks; h++ {
		// Transactions of block h: schedule, cancel, reschedule.
		for range r.IntN(4) {
			o := addr(r.IntN(owners))
			tm := Timer{Owner: o, Handler: []string{"tick", "on_timeout", "h"}[r.IntN(3)],
				Target: h + horizon(r, h), CreatedAt: h}
			if r.IntN(4) == 0 {
				tm.Data = []byte{0x82, 0x01, 0x02}
			}
			if r.IntN(5) == 0 {
				tm.Interval = 1 + r.Uint64N(3*EpochLength)
			}
			if !m.started {
				m.cursor, m.started = h-1, true
			}
			wantK := m.atHeight(tm.Target) + 1
			id, c, err := q.Schedule(kv, tm)
			if m.pending[o] >= p.MaxPerOwner {
				if !errors.Is(err, ErrCapReached) {
					t.Fatalf("h=%d: over cap: %v", h, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("h=%d schedule: %v", h, err)
			}
			if wantID := TimerID(o, m.nonce[o], tm.Target, tm.Handler); id != wantID {
				t.Fatalf("id %s, want %s", id, wantID)
			}
			wantBurn, _ := p.Surcharge(m.basefee, wantK)
			if c.Deposit.Cmp(p.Deposit(m.pending[o])) != 0 || c.Burn.Cmp(wantBurn) != 0 {
				t.Fatalf("charge %v/%v, want %v/%v (n=%d k=%d)", c.Deposit, c.Burn, p.Deposit(m.pending[o]), wantBurn, m.pending[o], wantK)
			}
			tr, _ := locate(tm.Target, m.cursor, id)
			m.timers[id] = &refTimer{id: id, owner: o, target: tm.Target, interval: tm.Interval, deposit: c.Deposit, fromFar: tr == tierFar}
			m.pending[o]++
			m.nonce[o]++
		}
		if len(m.timers) > 0 && r.IntN(3) == 0 {
			ids := m.ids()
			id := ids[r.IntN(len(ids))]
			rt := m.timers[id]
			if r.IntN(8) == 0 {
				if _, err := q.Cancel(kv, addr(owners+1), id); !errors.Is(err, ErrNotOwner) {
					t.Fatalf("cancel by stranger: %v", err)
				}
			}
			if r.IntN(4) == 0 {
				nt := h + horizon(r, h)
				wantK := m.atHeight(nt) + 1
				if rt.target == nt && rt.target > m.cursor {
					wantK--
				}
				c, err := q.Reschedule(kv, rt.owner, id, nt, h)
				if err != nil {
					t.Fatalf("reschedule: %v", err)
				}
				wantBurn, _ := p.Surcharge(m.basefee, wantK)
				if c.Burn.Cmp(wantBurn) != 0 || c.Deposit.Sign() != 0 {
					t.Fatalf("reschedule charge %v/%v, want 0/%v", c.Deposit, c.Burn, wantBurn)
				}
				rt.target = nt
				tr, _ := locate(nt, m.cursor, id)
				rt.fromFar = tr == tierFar
			} else {
				refund, err := q.Cancel(kv, rt.owner, id)
				if err != nil {
					t.Fatalf("cancel: %v", err)
				}
				if refund.Cmp(rt.deposit) != 0 {
					t.Fatalf("refund %v, want %v", refund, rt.deposit)
				}
				delete(m.timers, id)
				m.pending[rt.owner]--
				if _, err := q.Cancel(kv, rt.owner, id); !errors.Is(err, ErrNotFound) {
					t.Fatalf("second cancel: %v", err)
				}
			}
		}
		// Timer phase of block h.
		due, err := q.Due(kv, h)
		if err != nil {
			t.Fatalf("h=%d due: %v", h, err)
		}
		if !m.started {
			m.cursor, m.started = h-1, true
		}
		for x := m.cursor + 1; x <= h; x++ {
			m.basefee = p.NextBasefee(m.basefee, uint64(len(m.timers)))
		}
		m.cursor = h
		want := m.due(h)
		if len(due) != len(want) {
			t.Fatalf("h=%d: %d due, want %d", h, len(due), len(want))
		}
		for i := range due {
			if due[i].ID != want[i].id || due[i].Target != want[i].target {
				t.Fatalf("h=%d due[%d] = %s@%d, want %s@%d", h, i, due[i].ID, due[i].Target, want[i].id, want[i].target)
			}
		}
		// Fire a random subset; defer the rest.
		for _, d := range due {
			rt := m.timers[d.ID]
			if rt.fromFar {
				farToDue++
			}
			if r.IntN(3) == 0 {
				if err := q.Defer(kv, d.ID, h); err != nil {
					t.Fatal(err)
				}
				continue
			}
			refund, err := q.MarkFired(kv, d.ID, h)
			if err != nil {
				t.Fatalf("fire: %v", err)
			}
			if rt.interval == 0 {
				if refund.Cmp(rt.deposit) != 0 {
					t.Fatalf("fire refund %v, want %v", refund, rt.deposit)
				}
				delete(m.timers, d.ID)
				m.pending[rt.owner]--
			} else {
				if refund.Sign() != 0 {
					t.Fatal("interval refunded on fire")
				}
				next := rt.target + rt.interval
				for next <= h {
					next += rt.interval
				}
				rt.target = next
				got, err := q.Get(kv, d.ID)
				if err != nil || got.Target != next || got.Deferrals != 0 {
					t.Fatalf("interval next %d (%v), want %d", got.Target, err, next)
				}
			}
		}
		if check && (h%97 == 0 || (h+1)%EpochLength == 0 || h%EpochLength == 0) {
			checkLayout(t, kv, q, m)
		}
	}
	if blocks > (2+EpochBuckets)*EpochLength+2*EpochLength && farToDue == 0 {
		t.Fatal("no timer travelled from tier 3 to due")
	}
	t.Logf("seed %d: %d due deliveries of timers scheduled into tier 3", seed, farToDue)
	if check {
		checkLayout(t, kv, q, m)
		for o := range m.pending {
			ts, err := q.ListByOwner(kv, o)
			if err != nil || uint64(len(ts)) != m.pending[o] {
				t.Fatalf("ListByOwner %s: %d (%v), want %d", o, len(ts), err, m.pending[o])
			}
			for _, x := range ts {
				if m.timers[x.ID] == nil || m.timers[x.ID].owner != o {
					t.Fatalf("ListByOwner returned a stranger %s", x.ID)
				}
			}
		}
	}
	return kv
}

// TestQueueMatchesReference runs seeded random schedules, cancels,
// reschedules, fires and defers over enough blocks to cross many ring
// wraps, tier-2 → ring and tier-3 → tier-2 promotions, comparing every
// Due result, charge and counter with a plain sorted reference.
func TestQueueMatchesReference(t *testing.T) {
	// Tier 3 starts (2+EpochBuckets)×EpochLength = 8,448 blocks ahead, so
	// the long run lets timers travel tier 3 → 2 → 1 → due.
	long := uint64(11_000)
	short := uint64(3_000)
	if testing.Short() {
		long = short
	}
	for _, tc := range []struct {
		seed, start, blocks uint64
	}{
		{1, 1, long},
		{2, EpochLength - 3, short},       // starts just before an epoch boundary
		{3, 1<<32 + RingSlots - 1, short}, // large heights, at a ring wrap
		{4, 5*EpochLength + 17, short},
	} {
		runOps(t, tc.seed, tc.start, tc.blocks, true)
	}
}

// TestDeterminism feeds two independent stores the same op stream and
// demands byte-identical state, and runs the same stream through a
// state.Overlay and demands identical writes.
func TestDeterminism(t *testing.T) {
	a := runOps(t, 42, 100, 2000, false)
	b := runOps(t, 42, 100, 2000, false)
	if !bytes.Equal(a.dump(), b.dump()) {
		t.Fatal("same ops, different state")
	}
	c := runOps(t, 43, 100, 2000, false)
	if bytes.Equal(a.dump(), c.dump()) {
		t.Fatal("different seeds gave identical state")
	}
}

// TestOverlayCompatible runs the queue on a state.Overlay over committed
// state, committing every block, and compares it key for key with memKV.
func TestOverlayCompatible(t *testing.T) {
	q := mustQueue(t, DefaultParams())
	mem := newMemKV()
	base := newMemKV()
	r := rand.New(rand.NewPCG(7, 7))
	for h := uint64(1); h < 1500; h++ {
		o := state.NewOverlay(base)
		for _, kv := range []KV{mem, o} {
			rr := rand.New(rand.NewPCG(h, 1))
			for range rr.IntN(3) {
				if _, _, err := q.Schedule(kv, Timer{Owner: addr(rr.IntN(3)), Handler: "x", Target: h + horizon(rr, h), CreatedAt: h}); err != nil {
					t.Fatal(err)
				}
			}
			due, err := q.Due(kv, h)
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range due {
				if i%2 == 0 {
					if _, err := q.MarkFired(kv, d.ID, h); err != nil {
						t.Fatal(err)
					}
				} else if err := q.Defer(kv, d.ID, h); err != nil {
					t.Fatal(err)
				}
			}
		}
		_ = r
		for _, w := range o.Writes() {
			if w.Value == nil {
				base.Delete(w.Key)
			} else {
				base.Set(w.Key, w.Value)
			}
		}
	}
	if !bytes.Equal(mem.dump(), base.dump()) {
		t.Fatal("overlay-committed state differs from direct state")
	}
}

func TestScheduleValidation(t *testing.T) {
	q := mustQueue(t, DefaultParams())
	kv := newMemKV()
	ok := Timer{Owner: addr(1), Handler: "h", Target: 20, CreatedAt: 10}
	for name, tm := range map[string]Timer{
		"past target":  {Owner: addr(1), Handler: "h", Target: 10, CreatedAt: 10},
		"no handler":   {Owner: addr(1), Target: 20, CreatedAt: 10},
		"long handler": {Owner: addr(1), Handler: string(make([]byte, 65)), Target: 20, CreatedAt: 10},
		"bad data":     {Owner: addr(1), Handler: "h", Data: []byte{0xff}, Target: 20, CreatedAt: 10},
		"bad utf8":     {Owner: addr(1), Handler: "\xff", Target: 20, CreatedAt: 10},
	} {
		if _, _, err := q.Schedule(kv, tm); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, _, err := q.Schedule(kv, ok); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Due(kv, 15); err != nil {
		t.Fatal(err)
	}
	stale := ok
	stale.CreatedAt, stale.Target = 12, 30
	if _, _, err := q.Schedule(kv, stale); !errors.Is(err, ErrInvalid) {
		t.Errorf("created before queue height: %v", err)
	}
	if _, err := q.MarkFired(kv, TimerID(addr(1), 0, 20, "h"), 15); !errors.Is(err, ErrNotDue) {
		t.Errorf("fire before due: %v", err)
	}
	if _, err := q.Get(kv, types.Hash{1}); !errors.Is(err, ErrNotFound) {
		t.Errorf("get missing: %v", err)
	}
}

func TestCapAndSurchargeLimit(t *testing.T) {
	p := DefaultParams()
	p.MaxPerOwner = 3
	p.MaxSurchargeExp = 2
	q := mustQueue(t, p)
	kv := newMemKV()
	for i := range 3 {
		if _, _, err := q.Schedule(kv, Timer{Owner: addr(1), Handler: "h", Target: 100 + uint64(i), CreatedAt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := q.Schedule(kv, Timer{Owner: addr(1), Handler: "h", Target: 200, CreatedAt: 1}); !errors.Is(err, ErrCapReached) {
		t.Fatalf("cap: %v", err)
	}
	// 16 free + 2 doublings fit at one height; the 19th is refused.
	for i := range 18 {
		if _, _, err := q.Schedule(kv, Timer{Owner: addr(10 + i), Handler: "h", Target: 500, CreatedAt: 1}); err != nil {
			t.Fatal(i, err)
		}
	}
	if _, _, err := q.Schedule(kv, Timer{Owner: addr(99), Handler: "h", Target: 500, CreatedAt: 1}); !errors.Is(err, ErrHeightFull) {
		t.Fatalf("surcharge limit: %v", err)
	}
	total, n, err := q.DropOwner(kv, addr(1))
	if err != nil || n != 3 || total.Cmp(new(big.Int).Mul(p.Deposit(0), big.NewInt(3))) != 0 {
		t.Fatalf("drop owner: %v %d %v", total, n, err)
	}
}

func TestDueLimit(t *testing.T) {
	q := mustQueue(t, DefaultParams())
	kv := newMemKV()
	var ids []types.Hash
	for i := range 10 {
		id, _, err := q.Schedule(kv, Timer{Owner: addr(i), Handler: "h", Target: 5 + uint64(i%3), CreatedAt: 1})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	all, err := q.Due(kv, 9)
	if err != nil || len(all) != 10 {
		t.Fatalf("due %d %v", len(all), err)
	}
	some, err := q.DueLimit(kv, 9, 4)
	if err != nil || len(some) != 4 {
		t.Fatalf("limited due %d %v", len(some), err)
	}
	for i := range some {
		if some[i].ID != all[i].ID {
			t.Fatal("limit does not keep the oldest first")
		}
	}
}

func TestActive(t *testing.T) {
	q := mustQueue(t, DefaultParams())
	kv := newMemKV()
	if ok, err := Active(kv); ok || err != nil {
		t.Fatal("fresh state active")
	}
	if _, _, err := q.Schedule(kv, Timer{Owner: addr(1), Handler: "h", Target: 9, CreatedAt: 3}); err != nil {
		t.Fatal(err)
	}
	if ok, err := Active(kv); !ok || err != nil {
		t.Fatal("not active after schedule")
	}
	// The lead's execution code reads the header at this exact key.
	if !bytes.Equal(metaKey(), []byte{0x0A, 0x08}) {
		t.Fatalf("meta key moved: %x", metaKey())
	}
}
