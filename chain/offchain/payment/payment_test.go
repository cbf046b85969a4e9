package payment

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func addr(b byte) types.Address {
	var a types.Address
	a[19] = b
	return a
}

var (
	submitter = addr(0xAA)
	treasury  = types.TreasuryAddress
	r1, r2    = addr(1), addr(2)
	d1, d2    = addr(0x51), addr(0x52)
)

func payee(a types.Address, tokens uint64) Payee {
	return Payee{Runner: a, SelfStake: big.NewInt(1), Rates: job.RateCard{Base: big.NewInt(100), PerToken: big.NewInt(1)}, Usage: job.Usage{Tokens: tokens}}
}

func bounds() job.ResourceBounds {
	return job.ResourceBounds{MaxTokens: 10_000, MaxWallTimeMs: 1000, MaxMemoryBytes: 1 << 30}
}

type want struct {
	kind   Kind
	to     types.Address
	amount int64
}

func TestSettleTable(t *testing.T) {
	del := payee(r1, 900) // cost 1000
	del.SelfStake = big.NewInt(25)
	del.Delegations = []Delegation{{d1, big.NewInt(50)}, {d2, big.NewInt(25)}}
	del.CommissionBps = 1000
	tests := []struct {
		name string
		in   Input
		want []want
	}{
		{"success, one runner who aggregates", Input{Outcome: Success, Payees: []Payee{payee(r1, 500)}, Aggregator: r1},
			// X = min(100+500, 1000) = 600; burn 60; treasury 6; pool 534;
			// bonus 534·5% = 26; rest 508; tip 10 → runner 544; refund 400.
			[]want{{KindBurn, types.Address{}, 60}, {KindTreasury, treasury, 6}, {KindRunner, r1, 544}, {KindRefund, submitter, 400}}},
		{"success, two runners pro rata with bonus and dust", Input{Outcome: Success, Payees: []Payee{payee(r1, 500), payee(r2, 200)}, Aggregator: r2, Tip: big.NewInt(11)},
			// X = 900; burn 90; treasury 9; pool 801; bonus 40 → r2; rest 761:
			// r1 761·600/900 = 507, r2 253, dust 1 → r2; tip 11: 5 + 5 + dust 1 → r2.
			[]want{{KindBurn, types.Address{}, 90}, {KindTreasury, treasury, 9}, {KindRunner, r1, 512}, {KindRunner, r2, 300}, {KindRefund, submitter, 100}}},
		{"success capped at max_price", Input{Outcome: Success, Payees: []Payee{payee(r1, 5000)}, Aggregator: r1},
			// X = 1000; burn 100; treasury 10; pool 890 (bonus 44 + 846); tip 10.
			[]want{{KindBurn, types.Address{}, 100}, {KindTreasury, treasury, 10}, {KindRunner, r1, 900}}},
		{"success usage clamped to bounds", Input{Outcome: Success, Payees: []Payee{payee(r1, 1<<40)}, Aggregator: r1, MaxPrice: big.NewInt(1 << 50)},
			// tokens clamped to 10,000: X = 10,100; burn 1010; treasury 101; pool 8989 + tip 10.
			[]want{{KindBurn, types.Address{}, 1010}, {KindTreasury, treasury, 101}, {KindRunner, r1, 8999}, {KindRefund, submitter, 1<<50 - 10_100}}},
		{"success, aggregator not paid (dissented): no bonus, dust to lowest", Input{Outcome: Success, Payees: []Payee{payee(r1, 0), payee(r2, 0)}, Aggregator: addr(9), Tip: big.NewInt(1)},
			// X = 200; burn 20; treasury 2; pool 178 split 89/89; tip 1 → r1.
			[]want{{KindBurn, types.Address{}, 20}, {KindTreasury, treasury, 2}, {KindRunner, r1, 90}, {KindRunner, r2, 89}, {KindRefund, submitter, 800}}},
		{"success with delegators", Input{Outcome: Success, Payees: []Payee{del}, Aggregator: addr(9), Tip: big.NewInt(0)},
			// X = 1000; pool 890 → P = 890; delegated 75 of 100 → D = 667;
			// commission 66 → pool 601; d1 601·50/75 = 400; d2 200; runner 290.
			[]want{{KindBurn, types.Address{}, 100}, {KindTreasury, treasury, 10}, {KindRunner, r1, 290}, {KindDelegator, d1, 400}, {KindDelegator, d2, 200}}},
		{"runner fault: full refund", Input{Outcome: RunnerFault, Payees: []Payee{payee(r1, 500)}},
			[]want{{KindRefund, submitter, 1010}}},
		{"impossible job: pro rata by progress", Input{Outcome: ImpossibleJob, Payees: []Payee{payee(r1, 500)}, Aggregator: r1, ProgressBps: 5000},
			// X = min(600, 1000·50%) = 500; burn 50; treasury 5; runner 445; tip refunded.
			[]want{{KindBurn, types.Address{}, 50}, {KindTreasury, treasury, 5}, {KindRunner, r1, 445}, {KindRefund, submitter, 510}}},
		{"external fault: progress complete, usage below", Input{Outcome: ExternalFault, Payees: []Payee{payee(r1, 500)}, ProgressBps: 10_000},
			[]want{{KindBurn, types.Address{}, 60}, {KindTreasury, treasury, 6}, {KindRunner, r1, 534}, {KindRefund, submitter, 410}}},
		{"external fault: no progress", Input{Outcome: ExternalFault, Payees: []Payee{payee(r1, 500)}},
			[]want{{KindRefund, submitter, 1010}}},
		{"actor fault: minimum fee", Input{Outcome: ActorFault, Payees: []Payee{payee(r1, 500)}, MinFee: big.NewInt(20)},
			// X = 20; burn 2; treasury 0 (omitted); runner 18; refund 990.
			[]want{{KindBurn, types.Address{}, 2}, {KindRunner, r1, 18}, {KindRefund, submitter, 990}}},
		{"actor fault: minimum fee above max_price", Input{Outcome: ActorFault, Payees: []Payee{payee(r1, 0)}, MinFee: big.NewInt(5000)},
			[]want{{KindBurn, types.Address{}, 100}, {KindTreasury, treasury, 10}, {KindRunner, r1, 890}, {KindRefund, submitter, 10}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Submitter, in.Treasury, in.Bounds = submitter, treasury, bounds()
			if in.MaxPrice == nil {
				in.MaxPrice = big.NewInt(1000)
			}
			if in.Tip == nil {
				in.Tip = big.NewInt(10)
			}
			st, err := Settle(in, DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			for _, tr := range st.Transfers {
				got = append(got, want{tr.Kind, tr.To, tr.Amount.Int64()})
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("transfers\n got %v\nwant %v", got, tc.want)
			}
			checkConserved(t, in, st)
		})
	}
}

func checkConserved(t *testing.T, in Input, st Settlement) {
	t.Helper()
	sum := new(big.Int)
	for _, tr := range st.Transfers {
		if tr.Amount.Sign() <= 0 {
			t.Fatalf("non-positive transfer %+v", tr)
		}
		sum.Add(sum, tr.Amount)
	}
	if sum.Cmp(in.Escrow()) != 0 {
		t.Fatalf("sum out %s != escrow %s", sum, in.Escrow())
	}
}

func TestSettleRejectsBadInput(t *testing.T) {
	base := Input{Outcome: Success, MaxPrice: big.NewInt(1), Tip: big.NewInt(0), Payees: []Payee{payee(r1, 0)}}
	bad := []func(*Input){
		func(in *Input) { in.MaxPrice = nil },
		func(in *Input) { in.MaxPrice = big.NewInt(0) },
		func(in *Input) { in.Tip = big.NewInt(-1) },
		func(in *Input) { in.Outcome = 0 },
		func(in *Input) { in.Payees = nil },
		func(in *Input) { in.Payees = []Payee{payee(r2, 0), payee(r1, 0)} },
		func(in *Input) { in.Payees = []Payee{payee(r1, 0), payee(r1, 0)} },
		func(in *Input) { in.ProgressBps = 10_001 },
		func(in *Input) { p := payee(r1, 0); p.CommissionBps = 10_001; in.Payees = []Payee{p} },
		func(in *Input) {
			p := payee(r1, 0)
			p.Delegations = []Delegation{{d2, big.NewInt(1)}, {d1, big.NewInt(1)}}
			in.Payees = []Payee{p}
		},
	}
	for i, mut := range bad {
		in := base
		mut(&in)
		if _, err := Settle(in, DefaultParams()); !errors.Is(err, ErrInput) {
			t.Errorf("case %d: want ErrInput, got %v", i, err)
		}
	}
}

func randBig(rng *rand.Rand) *big.Int {
	switch rng.IntN(4) {
	case 0:
		return big.NewInt(0)
	case 1:
		return big.NewInt(rng.Int64N(1000))
	case 2:
		return new(big.Int).Lsh(big.NewInt(rng.Int64N(1<<62)), uint(rng.IntN(130)))
	}
	return big.NewInt(rng.Int64N(1 << 62))
}

// TestConservationProperty: for 50,000 random settlements of every row, the
// transfers sum exactly to the escrow, none is negative, the burn and
// Treasury shares are exactly floor(X/10) and floor(X/100), and X never
// exceeds max_price.
func TestConservationProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 50_000; it++ {
		n := 1 + rng.IntN(5)
		var payees []Payee
		for i := 0; i < n; i++ {
			p := Payee{Runner: addr(byte(10 + 3*i)), SelfStake: randBig(rng), CommissionBps: uint16(rng.IntN(10_001)),
				Rates: job.RateCard{Base: randBig(rng), PerToken: randBig(rng), PerWallMs: randBig(rng), PerMemoryMiB: randBig(rng)},
				Usage: job.Usage{Tokens: rng.Uint64N(1 << 20), WallTimeMs: rng.Uint64N(1 << 20), MemoryBytes: rng.Uint64()}}
			for k := 0; k < rng.IntN(4); k++ {
				p.Delegations = append(p.Delegations, Delegation{Delegator: addr(byte(200 + k)), Amount: randBig(rng)})
			}
			payees = append(payees, p)
		}
		mp := randBig(rng)
		mp.Add(mp, big.NewInt(1))
		in := Input{
			Outcome: Outcome(1 + rng.IntN(5)), MaxPrice: mp, Tip: randBig(rng), Submitter: submitter, Treasury: treasury,
			Bounds: job.ResourceBounds{MaxTokens: rng.Uint64N(1 << 21), MaxWallTimeMs: rng.Uint64N(1 << 21), MaxMemoryBytes: rng.Uint64()},
			Payees: payees, Aggregator: addr(byte(10 + 3*rng.IntN(n+1))), ProgressBps: uint16(rng.IntN(10_001)), MinFee: randBig(rng),
		}
		st, err := Settle(in, Params{AggregatorBonusBps: uint16(rng.IntN(10_001))})
		if err != nil {
			t.Fatalf("iteration %d: %v", it, err)
		}
		checkConserved(t, in, st)
		if st.Payment.Cmp(in.MaxPrice) > 0 {
			t.Fatalf("payment %s above max_price %s", st.Payment, in.MaxPrice)
		}
		var burn, tr big.Int
		for _, x := range st.Transfers {
			switch x.Kind {
			case KindBurn:
				burn.Add(&burn, x.Amount)
			case KindTreasury:
				tr.Add(&tr, x.Amount)
			}
		}
		if burn.Cmp(mulDiv(st.Payment, 1000, 10_000)) != 0 || tr.Cmp(mulDiv(st.Payment, 100, 10_000)) != 0 {
			t.Fatalf("burn %s treasury %s for payment %s", &burn, &tr, st.Payment)
		}
		if in.Outcome == RunnerFault && st.Refund.Cmp(in.Escrow()) != 0 {
			t.Fatal("runner fault must refund everything")
		}
	}
}

func TestNeedsReview(t *testing.T) {
	s := &job.ResultSchema{ExpectedExecutionMs: 100}
	if NeedsReview(job.Usage{WallTimeMs: 200}, s) || !NeedsReview(job.Usage{WallTimeMs: 201}, s) {
		t.Fatal(">2× expected usage rule")
	}
}
