package timers

import (
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

func TestDeposit(t *testing.T) {
	p := DefaultParams()
	p.BaseDeposit = 7
	for n, want := range map[uint64]int64{0: 7, 99: 7, 100: 14, 199: 14, 250: 21, 1000: 77} {
		if got := p.Deposit(n); got.Cmp(big.NewInt(want)) != 0 {
			t.Errorf("deposit(%d) = %v, want %d", n, got, want)
		}
	}
}

func TestSurcharge(t *testing.T) {
	p := DefaultParams()
	for k, want := range map[uint64]int64{1: 3, 16: 3, 17: 6, 18: 12, 26: 3 << 10} {
		got, ok := p.Surcharge(3, k)
		if !ok || got.Cmp(big.NewInt(want)) != 0 {
			t.Errorf("surcharge(3, %d) = %v, want %d", k, got, want)
		}
	}
	if _, ok := p.Surcharge(1, 16+p.MaxSurchargeExp); !ok {
		t.Error("surcharge at the limit refused")
	}
	if _, ok := p.Surcharge(1, 17+p.MaxSurchargeExp); ok {
		t.Error("surcharge beyond the limit quoted")
	}
}

func TestTimerBasefee(t *testing.T) {
	p := DefaultParams()
	p.TargetDepth = 1000
	if got := p.NextBasefee(800, 1000); got != 800 {
		t.Errorf("at target: %d", got)
	}
	if got := p.NextBasefee(800, 100_000); got != 900 { // +12.5% cap
		t.Errorf("far above target: %d", got)
	}
	if got := p.NextBasefee(800, 0); got != 700 { // −12.5% cap
		t.Errorf("empty queue: %d", got)
	}
	if got := p.NextBasefee(800, 1500); got != 850 { // 800 × (1 + 500/8000)
		t.Errorf("above target: %d", got)
	}
	if got := p.NextBasefee(1, 1001); got != 2 {
		t.Errorf("above target at the floor must rise: %d", got)
	}
	if got := p.NextBasefee(1, 0); got != p.MinBasefee {
		t.Errorf("floor: %d", got)
	}
}

func TestCap(t *testing.T) {
	p := DefaultParams()
	if !p.CanAdd(p.MaxPerOwner-1) || p.CanAdd(p.MaxPerOwner) {
		t.Error("cap")
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := p
	bad.MaxPerOwner = 0
	if bad.Validate() == nil {
		t.Error("zero cap accepted")
	}
}

func TestNextOccurrence(t *testing.T) {
	for _, c := range []struct{ target, interval, h, want uint64 }{
		{10, 5, 10, 15},
		{10, 5, 14, 15},
		{10, 5, 15, 20},
		{10, 5, 31, 35},
		{10, 1, 10, 11},
	} {
		if got, ok := nextOccurrence(c.target, c.interval, c.h); !ok || got != c.want {
			t.Errorf("next(%d,%d,%d) = %d", c.target, c.interval, c.h, got)
		}
	}
	if _, ok := nextOccurrence(^uint64(0)-3, 10, ^uint64(0)-3); ok {
		t.Error("overflow not detected")
	}
	if _, ok := nextOccurrence(10, 0, 10); ok {
		t.Error("one-shot has a next occurrence")
	}
}

// TestTimerIDVector pins the id derivation documented in docs/TIMERS.md.
func TestTimerIDVector(t *testing.T) {
	var owner types.Address
	for i := range owner {
		owner[i] = 0x11
	}
	want := types.Keccak256(owner[:], []byte{0, 0, 0, 0, 0, 0, 0, 7}, []byte{0, 0, 0, 0, 0, 0, 0, 100}, []byte("tick"))
	got := TimerID(owner, 7, 100, "tick")
	if got != want {
		t.Fatalf("TimerID = %s, want %s", got, want)
	}
	t.Logf("TimerID(0x11×20, 7, 100, \"tick\") = %s", got)
}
