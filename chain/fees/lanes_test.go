package fees

import (
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

func laneTx(t *testing.T, to *types.Address) *types.Tx {
	t.Helper()
	tx, err := types.NewTx(types.TxData{ChainID: 1, To: to, Value: new(big.Int), CyclesLimit: 1, Payload: types.Bytes{}})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

type kindOnly types.InstructionKind

func (k kindOnly) InstructionKind() types.InstructionKind { return types.InstructionKind(k) }

func TestLaneOf(t *testing.T) {
	gov, reg, user := types.GovernanceAddress, types.RunnerRegistryAddress, types.Address{0xaa}
	cases := []struct {
		to   *types.Address
		in   types.Instruction
		want Lane
	}{
		{&user, nil, LaneUser},
		{&gov, nil, LaneSystem},
		{&gov, &types.Call{Handler: "vote"}, LaneSystem},
		{nil, kindOnly(70), LaneSystem},
		{nil, kindOnly(79), LaneSystem},
		{nil, kindOnly(80), LaneUser},
		{&reg, &types.RunnerRegister{}, LaneRunner},
		{&reg, &types.RunnerHeartbeat{}, LaneRunner},
		{&reg, &types.RunnerDeregister{}, LaneRunner},
		{&reg, kindOnly(types.KindRunnerStake), LaneRunner},
		{&reg, kindOnly(types.KindRunnerUnstake), LaneRunner},
		{&reg, kindOnly(types.KindRunnerSetCommission), LaneRunner},
		{&reg, &types.CommitResult{}, LaneRunner},
		{&reg, &types.SubmitResult{}, LaneRunner},
		{&reg, &types.RevealResult{}, LaneRunner},
		{&reg, kindOnly(types.KindChallengeResult), LaneRunner},
		{&reg, kindOnly(types.KindTEEAttest), LaneRunner},
		{&reg, kindOnly(types.KindTEEAttestResult), LaneRunner},
		{&reg, kindOnly(types.KindSecretPut), LaneUser},
		{&reg, &types.SubmitJob{}, LaneUser},
		{&reg, kindOnly(types.KindRunnerDelegateStake), LaneUser},
		{&user, &types.Call{Handler: "x"}, LaneUser},
		{nil, &types.Deploy{}, LaneUser},
	}
	for i, c := range cases {
		if got := LaneOf(laneTx(t, c.to), c.in); got != c.want {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
}

func TestLaneCapsAndMultipliers(t *testing.T) {
	l := DefaultLanes()
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	c := l.Caps(Default())
	// §17.9 at the 10M target; the user lane has the rest of the 20M cap.
	want := [NumLanes]uint64{500_000, 2_000_000, 2_500_000, 15_000_000}
	if c.Reserved != want || c.Total != 20_000_000 {
		t.Fatalf("caps %+v", c)
	}
	bf := Basefees{Cycle: 1_000, Cell: 3}
	if got := l.Basefees(bf, LaneUser); got != bf {
		t.Fatalf("1x multiplier changed basefees: %+v", got)
	}
	l.Multiplier[LaneRunner] = 5_000 // 0.5x
	l.Multiplier[LaneSystem] = 25_000
	if got := l.Basefees(bf, LaneRunner); got != (Basefees{Cycle: 500, Cell: 1}) {
		t.Fatalf("0.5x: %+v", got)
	}
	if got := l.Basefees(Basefees{Cycle: 1, Cell: 1}, LaneRunner); got != (Basefees{Cycle: 1, Cell: 1}) {
		t.Fatalf("floor: %+v", got)
	}
	if got := l.Basefees(bf, LaneSystem); got != (Basefees{Cycle: 2_500, Cell: 7}) {
		t.Fatalf("2.5x: %+v", got)
	}
	if got := l.Basefees(Basefees{Cycle: ^uint64(0)}, LaneSystem); got.Cycle != ^uint64(0) {
		t.Fatalf("overflow not saturated: %+v", got)
	}
	bad := DefaultLanes()
	bad.RunnerBps = 7_600
	if bad.Validate() == nil {
		t.Error("reservations above 100% of the target accepted")
	}
	bad = DefaultLanes()
	bad.Multiplier[LaneTimer] = 0
	if bad.Validate() == nil {
		t.Error("zero multiplier accepted")
	}
}

func TestLaneMeter(t *testing.T) {
	c := DefaultLanes().Caps(Default())
	m := c.Meter()
	m.Add(LaneTimer, 2_000_000) // the timer lane's claim
	if !m.FitsReserved(LaneRunner, 2_500_000) || m.FitsReserved(LaneRunner, 2_500_001) {
		t.Fatal("runner reservation")
	}
	m.Add(LaneRunner, 2_000_000)
	if m.FitsReserved(LaneRunner, 600_000) || !m.FitsReserved(LaneRunner, 500_000) {
		t.Fatal("runner reservation after use")
	}
	// Pass 2: the rest of the block, for any lane, reserved leftovers included.
	if !m.Fits(16_000_000) || m.Fits(16_000_001) {
		t.Fatal("block remainder")
	}
	m.Add(LaneUser, 16_000_000)
	if m.Fits(1) || m.FitsReserved(LaneSystem, 1) {
		t.Fatal("full block still fits")
	}
	if m.Used(LaneUser) != 16_000_000 || m.Total() != 20_000_000 {
		t.Fatalf("used %d total %d", m.Used(LaneUser), m.Total())
	}
}
