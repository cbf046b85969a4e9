package timers

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/state"
)

// BenchmarkTimers measures, for N = 10^3 … 10^6 pending timers, the cost of
// one enqueue into each tier, of one block's timer phase, and two baselines
// in the same run (results and ratios in docs/TIMERS.md):
//
//	go test -run XXX -bench Timers -benchtime 2000x ./chain/timers
//	go test -run XXX -bench 'Timers/N=1000$' ./chain/timers   # one size
//
// The store is skipKV (ordered, O(log n), a stand-in for bbolt's B+tree).
// Each N has N pending one-shot timers at one per 4 heights over the next
// 4N heights (almost all in tier 3, constant density per height) plus 16
// interval timers of period 1, due every block.
//
// The garbage collector is paused inside timed loops of at most
// maxGCPausedOps iterations: the 10^6-timer in-memory store is ~1 GB of Go
// pointers that every GC cycle would re-mark, a cost bbolt (an mmap the Go
// GC never scans) does not have.
func BenchmarkTimers(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) { benchSize(b, n) })
	}
}

func benchSize(b *testing.B, n int) {
	{
		kv, q := benchStore(b, n)
		st, err := q.Stats(kv)
		if err != nil {
			b.Fatal(err)
		}
		now := st.Height
		for _, tc := range []struct {
			name     string
			min, max uint64
		}{
			{"tier1", 1, EpochLength},
			{"tier2", 3 * EpochLength, (EpochBuckets + 1) * EpochLength},
			{"tier3", (EpochBuckets + 4) * EpochLength, uint64(8 * n)},
		} {
			// One Schedule into a state.Overlay over the store (a fresh
			// overlay per 1,024 schedules, like a block's change set).
			b.Run("enqueue-"+tc.name, func(b *testing.B) {
				r := rand.New(rand.NewPCG(3, 4))
				var c countingKV
				b.ReportAllocs()
				steps0 := kv.steps
				func() {
					defer pauseGC(b)()
					var best bestChunk
					for i := range b.N {
						best.tick(i)
						if i%1024 == 0 {
							c.KV = state.NewOverlay(kv)
						}
						tm := Timer{Owner: addr(10_000 + i%1024), Handler: "h", Target: now + tc.min + r.Uint64N(tc.max-tc.min), CreatedAt: now}
						if _, _, err := q.Schedule(&c, tm); err != nil {
							b.Fatal(err)
						}
					}
					best.report(b)
				}()
				c.report(b, kv.steps-steps0)
			})
		}
		// One block's timer phase: Due at the next height (ring slot → due
		// set, tier promotions, basefee update), then
		// MarkFired for every due timer, directly on the store.
		b.Run("dequeueBlock", func(b *testing.B) {
			st, err := q.Stats(kv)
			if err != nil {
				b.Fatal(err)
			}
			h, fired := st.Height, 0
			c := countingKV{KV: kv}
			b.ReportAllocs()
			steps0 := kv.steps
			func() {
				defer pauseGC(b)()
				var best bestChunk
				for i := range b.N {
					best.tick(i)
					h++
					due, err := q.Due(&c, h)
					if err != nil {
						b.Fatal(err)
					}
					for _, d := range due {
						if _, err := q.MarkFired(&c, d.ID, h); err != nil {
							b.Fatal(err)
						}
					}
					fired += len(due)
				}
				best.report(b)
			}()
			c.report(b, kv.steps-steps0)
			b.ReportMetric(float64(fired)/float64(b.N), "fired/block")
		})
		val := make([]byte, 120)
		// Baseline 1: a plain Go map insert of a record-sized value into a
		// map of N entries.
		b.Run("baseline-mapInsert", func(b *testing.B) {
			m := make(map[string][]byte, n)
			for i := range n {
				m[string(RecordKey(TimerID(addr(1), uint64(i), 0, "x")))] = val
			}
			keys := make([]string, b.N)
			for i := range keys {
				keys[i] = string(RecordKey(TimerID(addr(2), uint64(i), 0, "x")))
			}
			defer pauseGC(b)()
			var best bestChunk
			for i := range b.N {
				best.tick(i)
				m[keys[i]] = append([]byte(nil), val...)
			}
			best.report(b)
		})
		// Baseline 2: one Set of a new key into the ordered store holding
		// the N timers.
		b.Run("baseline-storeSet", func(b *testing.B) {
			keys := make([][]byte, b.N)
			for i := range keys {
				keys[i] = RecordKey(TimerID(addr(3), uint64(i), 0, "x"))
			}
			steps0 := kv.steps
			func() {
				defer pauseGC(b)()
				var best bestChunk
				for i := range b.N {
					best.tick(i)
					kv.Set(keys[i], val)
				}
				best.report(b)
			}()
			b.ReportMetric(float64(kv.steps-steps0)/float64(b.N), "seeksteps/op")
			for _, k := range keys {
				kv.Delete(k)
			}
		})
		kv = nil
		runtime.GC()
	}
}

const maxGCPausedOps = 50_000

// bestChunk times the loop in chunks of 256 iterations (two scheduler
// epochs for the block benchmark) and reports the fastest chunk's mean as
// best-ns/op: on a shared machine the minimum is far less noisy than the
// mean.
type bestChunk struct {
	start time.Time
	best  time.Duration
	full  bool
}

const chunk = 256

func (c *bestChunk) tick(i int) {
	if i%chunk != 0 {
		return
	}
	now := time.Now()
	if i > 0 {
		if d := now.Sub(c.start); !c.full || d < c.best {
			c.best, c.full = d, true
		}
	}
	c.start = now
}

func (c *bestChunk) report(b *testing.B) {
	if c.full {
		b.ReportMetric(float64(c.best.Nanoseconds())/chunk, "best-ns/op")
	}
}

// countingKV counts the KV operations the queue issues (deterministic,
// unlike time on a shared machine).
type countingKV struct {
	KV
	ops, scanned uint64
}

func (c *countingKV) Get(k []byte) ([]byte, bool, error) { c.ops++; return c.KV.Get(k) }
func (c *countingKV) Set(k, v []byte)                    { c.ops++; c.KV.Set(k, v) }
func (c *countingKV) Delete(k []byte)                    { c.ops++; c.KV.Delete(k) }
func (c *countingKV) Scan(p []byte, fn func(k, v []byte) error) error {
	c.ops++
	return c.KV.Scan(p, func(k, v []byte) error { c.scanned++; return fn(k, v) })
}

// report adds kvops/op (Get, Set, Delete, Scan calls), scanned/op (keys
// visited by scans) and seeksteps/op (skip-list nodes visited: the
// store's O(log n) work).
func (c *countingKV) report(b *testing.B, steps uint64) {
	n := float64(b.N)
	b.ReportMetric(float64(c.ops)/n, "kvops/op")
	b.ReportMetric(float64(c.scanned)/n, "scanned/op")
	b.ReportMetric(float64(steps)/n, "seeksteps/op")
}

// pauseGC collects, pauses the GC when b.N is small enough, resets the
// timer, and returns the function that restores both.
func pauseGC(b *testing.B) func() {
	runtime.GC()
	old := 100
	paused := b.N <= maxGCPausedOps
	if paused {
		old = debug.SetGCPercent(-1)
	}
	b.ResetTimer()
	return func() {
		b.StopTimer()
		if paused {
			debug.SetGCPercent(old)
		}
	}
}

func benchStore(b *testing.B, n int) (*skipKV, *Queue) {
	q := mustQueue(b, benchParams())
	kv := newSkipKV(uint64(n))
	r := rand.New(rand.NewPCG(uint64(n), 1))
	const start = 1_000
	for i := range n {
		tm := Timer{Owner: addr(i % 4096), Handler: "far", Target: start + 1 + r.Uint64N(uint64(4*n)), CreatedAt: start}
		if _, _, err := q.Schedule(kv, tm); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 16 {
		tm := Timer{Owner: addr(5000 + i), Handler: "every", Target: start + 1, Interval: 1, CreatedAt: start}
		if _, _, err := q.Schedule(kv, tm); err != nil {
			b.Fatal(err)
		}
	}
	return kv, q
}

func benchParams() Params {
	p := DefaultParams()
	p.MaxPerOwner = 1 << 40
	p.MaxSurchargeExp = 1 << 20
	return p
}
