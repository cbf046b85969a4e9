package rent

import (
	"math/big"
	"testing"
)

func TestNext(t *testing.T) {
	const T = 1_000_000
	for _, c := range []struct {
		name string
		rate int64
		s, t uint64
		want int64
	}{
		{"at target", 800, T, T, 800},
		{"above, inside the clamp", 800, T + T/2, T, 850}, // +(0.5/8) = +6.25%
		{"below, inside the clamp", 800, T - T/2, T, 750}, // −6.25%
		{"far above: +δ", 800, 10 * T, T, 900},            // +12.5%
		{"exactly +δ", 800, 2 * T, T, 900},                // (S−T)/(T·8) = 1/8
		{"empty state: −δ", 800, 0, T, 700},               // −12.5%
		{"truncates toward zero up", 7, T + 1000, T, 7},   // 7·1000/8e6 → 0
		{"truncates toward zero down", 7, T - 1000, T, 7}, // never rounds away from zero
		{"a positive rate stays ≥ 1", 1, 0, T, 1},         // 1 − 1/8 → 1
		{"zero rate stays zero", 0, 10 * T, T, 0},         // rent off by rate
		{"no target leaves it", 800, 10 * T, 0, 800},
		{"big rates stay exact", 1 << 62, 10 * T, T, (1 << 62) + (1 << 59)},
	} {
		got := Next(big.NewInt(c.rate), c.s, c.t)
		if got.Cmp(big.NewInt(c.want)) != 0 {
			t.Errorf("%s: Next(%d, S=%d, T=%d) = %s, want %d", c.name, c.rate, c.s, c.t, got, c.want)
		}
	}
}

func TestNextConverges(t *testing.T) {
	// Over target for 16 epochs then under for 16: each step within ±12.5%.
	r := big.NewInt(1_000_000)
	for i := 0; i < 32; i++ {
		s := uint64(3_000_000)
		if i >= 16 {
			s = 0
		}
		n := Next(r, s, 1_000_000)
		lo := new(big.Int).Sub(r, new(big.Int).Quo(r, big.NewInt(8)))
		hi := new(big.Int).Add(r, new(big.Int).Quo(r, big.NewInt(8)))
		if n.Cmp(lo) < 0 || n.Cmp(hi) > 0 {
			t.Fatalf("step %d: %s → %s leaves ±δ", i, r, n)
		}
		r = n
	}
}
