package consensus_test

import (
	"math"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/sim"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func set(t *testing.T, stakes ...uint64) *consensus.ValidatorSet {
	t.Helper()
	var vals []consensus.Validator
	for i, s := range stakes {
		pk := types.Keccak256([]byte{byte(i)})
		vals = append(vals, consensus.Validator{Address: types.Address{byte(i + 1)}, PubKey: pk[:], Stake: s})
	}
	vs, err := consensus.NewValidatorSet(vals, sim.InsecureVerifier{})
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestQuorumIsMoreThanTwoThirdsOfStake(t *testing.T) {
	for _, tc := range []struct {
		stakes []uint64
		want   uint64
	}{
		{[]uint64{1, 1, 1}, 3},
		{[]uint64{1, 1, 1, 1}, 3},
		{[]uint64{1, 1, 1, 1, 1, 1, 1}, 5},
		{[]uint64{10, 20, 30, 40}, 67},
		{[]uint64{math.MaxUint64 / 2, math.MaxUint64 / 2}, 12297829382473034410}, // ⌊2(2^64-2)/3⌋+1
	} {
		vs := set(t, tc.stakes...)
		if q := vs.Quorum(); q != tc.want {
			t.Errorf("stakes %v: quorum %d, want %d", tc.stakes, q, tc.want)
		}
		if q := vs.Quorum(); 3*(q-1) > 2*vs.TotalStake() && vs.TotalStake() < math.MaxUint64/3 {
			t.Errorf("stakes %v: quorum %d not minimal", tc.stakes, q)
		}
	}
	if _, err := consensus.NewValidatorSet([]consensus.Validator{{Stake: 0, PubKey: make([]byte, 32)}}, sim.InsecureVerifier{}); err == nil {
		t.Fatal("zero stake accepted")
	}
	if _, err := consensus.NewValidatorSet([]consensus.Validator{{Stake: math.MaxUint64, PubKey: make([]byte, 32)}, {Address: types.Address{1}, Stake: 1, PubKey: make([]byte, 32)}}, sim.InsecureVerifier{}); err == nil {
		t.Fatal("stake overflow accepted")
	}
}

func TestLeaderRotationAndWeights(t *testing.T) {
	vs := set(t, 1, 2, 3, 4)
	seed := types.Keccak256([]byte("seed"))
	const rounds = 20000
	count := make([]int, vs.Len())
	prev := -1
	var window []int
	for r := uint64(1); r <= rounds; r++ {
		if r%256 == 0 || window == nil {
			window = vs.LeaderWindow(seed, r-r%256)
		}
		l := window[r%256]
		if r%1000 == 0 && vs.Leader(seed, r) != l {
			t.Fatalf("Leader and LeaderWindow disagree at round %d", r)
		}
		if l == prev && r%256 != 0 {
			t.Fatalf("round %d repeats proposer %d", r, l)
		}
		count[l]++
		prev = l
	}
	// Rotation bends the distribution toward smaller stakes; the order by
	// stake must survive and nobody may starve.
	for i := 1; i < len(count); i++ {
		if count[i] <= count[i-1] {
			t.Fatalf("proposer counts %v not increasing with stake", count)
		}
	}
	t.Logf("stakes 1:2:3:4 → proposer counts %v over %d rounds", count, rounds)
	if count[0] < rounds/20 {
		t.Fatalf("smallest validator starves: %v", count)
	}
	single := set(t, 5)
	if single.Leader(seed, 1) != 0 || single.Leader(seed, 2) != 0 {
		t.Fatal("single validator must lead every round")
	}
}
