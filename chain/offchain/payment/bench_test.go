package payment

import (
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// benchInput is a Success settlement of 3 payees with d delegators each
// (CIP-13 allows 200 per runner).
func benchInput(d int) Input {
	in := Input{Outcome: Success, MaxPrice: new(big.Int).Exp(big.NewInt(10), big.NewInt(21), nil), Tip: big.NewInt(12345),
		Bounds: job.ResourceBounds{MaxTokens: 1000, MaxWallTimeMs: 5000, MaxMemoryBytes: 1 << 26}, Submitter: types.Address{0xee},
		Treasury: types.Address{0x08}, Aggregator: types.Address{2}}
	for r := 0; r < 3; r++ {
		py := Payee{Runner: types.Address{byte(r + 1)}, SelfStake: new(big.Int).Exp(big.NewInt(10), big.NewInt(22), nil), CommissionBps: 1000,
			Rates: job.RateCard{Base: big.NewInt(1e16), PerWallMs: big.NewInt(1e12)}, Usage: job.Usage{WallTimeMs: 1500}}
		for k := 0; k < d; k++ {
			py.Delegations = append(py.Delegations, Delegation{Delegator: types.Address{0xd0, byte(k >> 8), byte(k)}, Amount: big.NewInt(int64(1e9 + k))})
		}
		in.Payees = append(in.Payees, py)
	}
	return in
}

func benchSettle(b *testing.B, d int) {
	in := benchInput(d)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Settle(in, DefaultParams()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSettleNoDelegators is the baseline: 3 payees, no delegations.
func BenchmarkSettleNoDelegators(b *testing.B) { benchSettle(b, 0) }

// BenchmarkSettle200Delegators: 3 payees with the maximum 200 delegators each.
func BenchmarkSettle200Delegators(b *testing.B) { benchSettle(b, 200) }
