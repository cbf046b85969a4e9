package fees

import (
	"errors"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

func TestNextBasefee(t *testing.T) {
	s := Default()
	T := s.TargetCycles
	cases := []struct {
		name            string
		cur, used, want uint64
	}{
		{"at target unchanged", 1000, T, 1000},
		{"full block +12.5%", 1000, 2 * T, 1125},  // (U−T)/(T·8) = 1/8, at the clamp
		{"empty block −12.5%", 1000, 0, 875},      // −1/8, at the clamp
		{"half over target", 1000, T + T/2, 1062}, // +1/16 → 62.5 truncated
		{"floor holds", 1, 0, 1},                  // never below 1
		{"floor can rise", 1, 2 * T, 2},           // at least +1 above target
		{"tiny excess still rises", 1000, T + 1, 1001},
		{"tiny deficit rounds down", 1000, T - 1, 999},
	}
	for _, c := range cases {
		if got := s.NextBasefee(c.cur, c.used, T); got != c.want {
			t.Errorf("%s: NextBasefee(%d, %d) = %d, want %d", c.name, c.cur, c.used, got, c.want)
		}
	}
	// Sustained full blocks grow geometrically; sustained empty blocks decay to the floor.
	b := uint64(1_000_000_000)
	for i := 0; i < 10; i++ {
		b = s.NextBasefee(b, 2*T, T)
	}
	if b <= 3_000_000_000 || b >= 3_300_000_000 {
		t.Errorf("10 full blocks: %d, want ≈1.125^10×1e9", b)
	}
	for i := 0; i < 400; i++ {
		b = s.NextBasefee(b, 0, T)
	}
	if b != 1 {
		t.Errorf("decay to floor: %d", b)
	}
}

func transfer(t *testing.T, d types.TxData) *types.Tx {
	t.Helper()
	to := types.SystemAddress(0x200)
	d.To = &to
	tx, err := types.NewTx(d)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

func TestSettle(t *testing.T) {
	tx := transfer(t, types.TxData{ChainID: 1, Value: big.NewInt(5), CyclesLimit: 20_000, CellsLimit: 10,
		MaxFeePerCycle: 100, MaxFeePerCell: 50, TipPerCycle: 7, TipPerCell: 60})
	b := Basefees{Cycle: 95, Cell: 20}
	c := Settle(tx, b, 10_000, 4)
	// cycles: 10000×(95 + min(7, 5)) = 1,000,000; cells: 4×(20 + min(60, 30)) = 200
	if c.Fee.Cmp(big.NewInt(1_000_200)) != 0 || c.Burned.Cmp(big.NewInt(950_080)) != 0 || c.Tip.Cmp(big.NewInt(50_120)) != 0 {
		t.Fatalf("fee %s burned %s tip %s", c.Fee, c.Burned, c.Tip)
	}
	if MaxCost(tx).Cmp(big.NewInt(5+20_000*100+10*50)) != 0 {
		t.Fatalf("max cost %s", MaxCost(tx))
	}
	if err := Includable(tx, Basefees{Cycle: 101, Cell: 1}); !errors.Is(err, types.ErrFeeCapTooLow) {
		t.Fatalf("includable: %v", err)
	}
}

func TestCheckLimits(t *testing.T) {
	s := Default()
	ok := transfer(t, types.TxData{ChainID: 1, CyclesLimit: TransferCycles})
	if err := s.CheckLimits(ok, nil); err != nil {
		t.Fatal(err)
	}
	low := transfer(t, types.TxData{ChainID: 1, CyclesLimit: TransferCycles - 1})
	if err := s.CheckLimits(low, nil); !errors.Is(err, types.ErrIntrinsicCost) {
		t.Fatalf("below intrinsic: %v", err)
	}
	high := transfer(t, types.TxData{ChainID: 1, CyclesLimit: s.MaxTxCycles + 1})
	if err := s.CheckLimits(high, nil); !errors.Is(err, types.ErrLimitsExceeded) {
		t.Fatalf("above max: %v", err)
	}
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestSuggest(t *testing.T) {
	e := Default().Suggest(Basefees{Cycle: 10, Cell: 3}, TransferCycles, 0, 0, 0)
	if e.CyclesLimit != 12_000 || e.MaxFeePerCycle != 21 || e.TipPerCycle != 1 || e.MaxFee != "252000" {
		t.Fatalf("%+v", e)
	}
}
