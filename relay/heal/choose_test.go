package heal

import (
	"testing"
	"time"
)

func ids(n int) [][20]byte {
	out := make([][20]byte, n)
	for i := range out {
		out[i] = [20]byte{byte(i + 1)}
	}
	return out
}

// Every relay picks the same repairer for a stripe whatever order it lists
// the holders in, and the picks for many stripes spread over all holders
// (one dead relay is no storm on one survivor).
func TestRepairerDeterministicAndSpread(t *testing.T) {
	hs := ids(5)
	rev := make([][20]byte, len(hs))
	for i, h := range hs {
		rev[len(hs)-1-i] = h
	}
	count := map[[20]byte]int{}
	for s := range 500 {
		key := [32]byte{byte(s), byte(s >> 8), 7}
		a, ok1 := Repairer(hs, key)
		b, ok2 := Repairer(rev, key)
		if !ok1 || !ok2 || a != b {
			t.Fatalf("stripe %d: %x vs %x", s, a, b)
		}
		count[a]++
	}
	for _, h := range hs {
		if count[h] < 50 { // 100 expected each
			t.Fatalf("repairs per holder %v: not spread", count)
		}
	}
	if _, ok := Repairer(nil, [32]byte{}); ok {
		t.Fatal("a repairer without holders")
	}
}

// Targets exclude every relay of the stripe and are in a fixed order.
func TestTargetsExcludeStripe(t *testing.T) {
	all := ids(6)
	holders := map[[20]byte]bool{all[0]: true, all[2]: true}
	got := Targets(all, holders, [32]byte{9})
	if len(got) != 4 {
		t.Fatalf("targets %x", got)
	}
	for _, g := range got {
		if holders[g] {
			t.Fatalf("target %x already holds the stripe", g)
		}
	}
	again := Targets([][20]byte{all[5], all[4], all[3], all[2], all[1], all[0]}, holders, [32]byte{9})
	for i := range got {
		if got[i] != again[i] {
			t.Fatalf("order depends on input order: %x vs %x", got, again)
		}
	}
}

// The limiter holds the average rate with a fake clock: no wall time.
func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(1<<20, func() time.Time { return now }) // 1 MiB/s, burst 1 MiB
	if d := l.Reserve(1 << 20); d != 0 {
		t.Fatalf("burst: wait %v", d)
	}
	if d := l.Reserve(2 << 20); d != 2*time.Second {
		t.Fatalf("2 MiB over budget: wait %v, want 2s", d)
	}
	now = now.Add(3 * time.Second) // debt paid, 1 s of tokens back
	if d := l.Reserve(512 << 10); d != 0 {
		t.Fatalf("after refill: wait %v", d)
	}
	if d := NewLimiter(0, nil).Reserve(1 << 30); d != 0 {
		t.Fatalf("unlimited: wait %v", d)
	}
}
