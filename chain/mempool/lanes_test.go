package mempool

import (
	"crypto/ecdsa"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// laneTx builds a signed transaction: a transfer (user lane) or, with
// runner set, a runner heartbeat (runner lane).
func laneTx(t testing.TB, key *ecdsa.PrivateKey, nonce, cycles, maxFee, tip uint64, runner bool) (*types.Tx, types.Instruction) {
	t.Helper()
	to := types.Address{0xee, 1}
	var in types.Instruction
	payload := types.Bytes{}
	if runner {
		to = types.RunnerRegistryAddress
		in = &types.RunnerHeartbeat{}
		b, err := types.EncodeInstruction(in)
		if err != nil {
			t.Fatal(err)
		}
		payload = b
	}
	tx, _ := types.NewTx(types.TxData{ChainID: 1, Nonce: nonce, To: &to, Value: new(big.Int), Payload: payload,
		CyclesLimit: cycles, CellsLimit: 1_000, MaxFeePerCycle: maxFee, MaxFeePerCell: 10, TipPerCycle: tip})
	s, err := types.SignTx(tx, key)
	if err != nil {
		t.Fatal(err)
	}
	return s, in
}

func keys(n int) []*ecdsa.PrivateKey {
	out := make([]*ecdsa.PrivateKey, n)
	for i := range out {
		out[i], _ = crypto.GenerateKey()
	}
	return out
}

func TestSelectLanesReservesRunnerLane(t *testing.T) {
	p := New(Config{})
	lanes := fees.DefaultLanes()
	caps := lanes.Caps(fees.Default()) // runner 2.5M reserved, block 20M
	add := func(tx *types.Tx, in types.Instruction) {
		t.Helper()
		if _, err := p.Add(tx, in, rich(), bf); err != nil {
			t.Fatal(err)
		}
	}
	// Five users bidding high with 5M-cycle limits would fill the block
	// (25M > 20M) on fee order alone; one runner bids the least.
	ks := keys(6)
	var users []*types.Tx
	for i, k := range ks[:5] {
		tx, in := laneTx(t, k, 0, 5_000_000, 1_000, 500+uint64(i), false)
		users = append(users, tx)
		add(tx, in)
	}
	run, runIn := laneTx(t, ks[5], 0, 2_000_000, 20, 1, true)
	add(run, runIn)
	zero := func(types.Address) (uint64, error) { return 0, nil }
	got, err := p.SelectLanes(zero, bf, 100, lanes, caps)
	if err != nil {
		t.Fatal(err)
	}
	// Pass 1 takes the runner; pass 2 the three best users (2M + 15M), the
	// fourth (5M) does not fit in the 3M left.
	want := []*types.Tx{run, users[4], users[3], users[2]}
	if len(got) != len(want) {
		t.Fatalf("selected %d, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Hash() != want[i].Hash() {
			t.Fatalf("position %d: %s, want %s", i, got[i].Hash(), want[i].Hash())
		}
	}
	// Without the runner the users fill the block: unused reservations
	// spill to the user lane.
	p.Remove(run.Hash())
	got, _ = p.SelectLanes(zero, bf, 100, lanes, caps)
	if len(got) != 4 {
		t.Fatalf("without runner traffic %d users selected, want 4 (20M)", len(got))
	}
	// The count limit still applies.
	if got, _ = p.SelectLanes(zero, bf, 2, lanes, caps); len(got) != 2 {
		t.Fatalf("max 2: got %d", len(got))
	}
}

func TestSelectLanesKeepsNonceOrderAcrossLanes(t *testing.T) {
	p := New(Config{})
	lanes := fees.DefaultLanes()
	caps := lanes.Caps(fees.Default())
	ks := keys(2)
	// Sender 0: a cheap user transfer at nonce 0, then a runner
	// transaction at nonce 1. Sender 1: a runner transaction.
	u0, u0in := laneTx(t, ks[0], 0, 100_000, 20, 1, false)
	r1, r1in := laneTx(t, ks[0], 1, 100_000, 1_000, 900, true)
	r2, r2in := laneTx(t, ks[1], 0, 100_000, 50, 10, true)
	for _, x := range []struct {
		tx *types.Tx
		in types.Instruction
	}{{u0, u0in}, {r1, r1in}, {r2, r2in}} {
		if _, err := p.Add(x.tx, x.in, rich(), bf); err != nil {
			t.Fatal(err)
		}
	}
	got, err := p.SelectLanes(func(types.Address) (uint64, error) { return 0, nil }, bf, 10, lanes, caps)
	if err != nil {
		t.Fatal(err)
	}
	// Pass 1 can take only r2 (r1 waits behind u0); pass 2 takes u0 then r1.
	want := []*types.Tx{r2, u0, r1}
	for i := range want {
		if i >= len(got) || got[i].Hash() != want[i].Hash() {
			t.Fatalf("order %v", got)
		}
	}
	// A lane basefee the transaction's fee caps cannot pay leaves it (and
	// its sender's later ones) out: at 100x the runner lane charges 1,000
	// per cell, above both runner transactions' max_fee_per_cell.
	lanes.Multiplier[fees.LaneRunner] = 1_000_000
	got, _ = p.SelectLanes(func(types.Address) (uint64, error) { return 0, nil }, bf, 10, lanes, caps)
	if len(got) != 1 || got[0].Hash() != u0.Hash() {
		t.Fatalf("with a 100x runner lane: %d selected", len(got))
	}
}

func TestSelectLanesTiesByHash(t *testing.T) {
	p := New(Config{})
	lanes := fees.DefaultLanes()
	caps := lanes.Caps(fees.Default())
	var txs []*types.Tx
	for _, k := range keys(8) {
		tx, in := laneTx(t, k, 0, 100_000, 100, 5, false)
		txs = append(txs, tx)
		if _, err := p.Add(tx, in, rich(), bf); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := p.SelectLanes(func(types.Address) (uint64, error) { return 0, nil }, bf, 10, lanes, caps)
	if len(got) != len(txs) {
		t.Fatalf("%d selected", len(got))
	}
	for i := 1; i < len(got); i++ {
		if !lessHash(got[i-1].Hash(), got[i].Hash()) {
			t.Fatalf("equal fees not in hash order at %d", i)
		}
	}
}
