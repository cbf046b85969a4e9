package rent

import "math/big"

// Next is the rate rule of spec 002 "State Rent":
//
//	rent_rate_{i+1} = rent_rate_i × (1 + clamp((S − T)/(T·α), −δ, +δ))
//
// with α = 8 and δ = 1/8, in integer arithmetic: the adjustment is
// rate·(S−T)/(T·α) truncated toward zero, bounded by rate/8 either way.
// A positive rate never falls below 1 (it could not rise again from 0).
// T = 0 leaves the rate unchanged.
func Next(rate *big.Int, s, t uint64) *big.Int {
	out := new(big.Int).Set(rate)
	if t == 0 || rate.Sign() <= 0 {
		return out
	}
	num := new(big.Int).Sub(new(big.Int).SetUint64(s), new(big.Int).SetUint64(t))
	den := new(big.Int).Mul(new(big.Int).SetUint64(t), big.NewInt(Alpha))
	// |num|/den ≥ δ = 1/DeltaDen ⇔ |num|·DeltaDen ≥ den.
	abs := new(big.Int).Abs(num)
	var adj *big.Int
	if new(big.Int).Mul(abs, big.NewInt(DeltaDen)).Cmp(den) >= 0 {
		adj = new(big.Int).Quo(rate, big.NewInt(DeltaDen))
		if num.Sign() < 0 {
			adj.Neg(adj)
		}
	} else {
		adj = new(big.Int).Mul(rate, num)
		adj.Quo(adj, den) // truncates toward zero
	}
	out.Add(out, adj)
	if out.Sign() <= 0 {
		out.SetInt64(1)
	}
	return out
}
