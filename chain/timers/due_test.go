package timers

import (
	"testing"
)

// readAllKV scans like state.Overlay: it reads every key under the prefix
// before calling fn, so stopping early saves nothing; read counts them.
type readAllKV struct {
	KV
	read uint64
}

func (r *readAllKV) Scan(p []byte, fn func(k, v []byte) error) error {
	type kv struct{ k, v []byte }
	var all []kv
	if err := r.KV.Scan(p, func(k, v []byte) error {
		all = append(all, kv{append([]byte(nil), k...), append([]byte(nil), v...)})
		return nil
	}); err != nil {
		return err
	}
	r.read += uint64(len(all))
	for _, e := range all {
		if err := fn(e.k, e.v); err != nil {
			return err
		}
	}
	return nil
}

// TestDueLimitReadsOnlyTheOldest: with a backlog of 3,000 due timers over
// 3,000 heights, DueLimit(limit 10) reads the oldest block of the due set,
// not the backlog, and the floor moves up as the oldest are fired.
func TestDueLimitReadsOnlyTheOldest(t *testing.T) {
	q := mustQueue(t, DefaultParams())
	mem := newMemKV()
	const n = 3_000
	for i := 0; i < n; i++ {
		if _, _, err := q.Schedule(mem, Timer{Owner: addr(i % 7), Handler: "h", Target: uint64(2 + i), CreatedAt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.DueLimit(mem, n+1, 1); err != nil { // advance: everything is due
		t.Fatal(err)
	}
	kv := &readAllKV{KV: mem}
	for round := 0; round < 40; round++ {
		kv.read = 0
		got, err := q.DueLimit(kv, n+1, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 10 || got[0].Target != uint64(2+10*round) || got[9].Target != uint64(11+10*round) {
			t.Fatalf("round %d: %d due, first target %d", round, len(got), got[0].Target)
		}
		if kv.read > 2*dueSpan {
			t.Fatalf("round %d: read %d due keys for 10", round, kv.read)
		}
		for _, tm := range got {
			if _, err := q.MarkFired(mem, tm.ID, n+1); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The full due set is still there, in order.
	all, err := q.Due(mem, n+1)
	if err != nil || len(all) != n-400 || all[0].Target != 402 {
		t.Fatalf("due set %d (%v), first %d", len(all), err, all[0].Target)
	}
}

// TestAdvanceHasNoEpochBurst: with timers at every height through tier 3,
// advancing one height costs the same at scheduler-epoch boundaries as
// anywhere else (one height promoted per tier boundary per block; an
// earlier version moved two 128-height buckets at every boundary).
func TestAdvanceHasNoEpochBurst(t *testing.T) {
	q := mustQueue(t, DefaultParams())
	mem := newMemKV()
	const perHeight, last = 2, RingSlots + EpochBuckets*EpochLength + 600
	i := 0
	for h := uint64(2); h <= last; h++ {
		for k := 0; k < perHeight; k++ {
			if _, _, err := q.Schedule(mem, Timer{Owner: addr(i / 900), Handler: "h", Target: h, CreatedAt: 1}); err != nil {
				t.Fatal(err)
			}
			i++
		}
	}
	var ops []uint64 // from the second height on: the first advances two
	for h := uint64(2); h < 3+3*EpochLength; h++ {
		c := &countingKV{KV: mem}
		due, err := q.DueLimit(c, h, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, tm := range due {
			if _, err := q.MarkFired(mem, tm.ID, h); err != nil {
				t.Fatal(err)
			}
		}
		if h > 2 {
			ops = append(ops, c.ops+c.scanned)
		}
	}
	lo, hi := ops[0], ops[0]
	for _, o := range ops {
		lo, hi = min(lo, o), max(hi, o)
	}
	if hi > lo+4 {
		t.Fatalf("per-height work ranges %d..%d store operations (epoch-boundary burst?): %v", lo, hi, ops)
	}
}
