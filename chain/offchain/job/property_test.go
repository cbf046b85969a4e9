package job

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TestLifecycleRandomWalk drives 3,000 jobs with random event streams and
// checks, after every step, that Step did not touch its input, rejected
// events changed nothing, the record round-trips through its encoding, and
// the structural invariants hold.
func TestLifecycleRandomWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := DefaultParams()
	pool := make([]types.Address, 12)
	for i := range pool {
		pool[i] = addr(byte(i + 1))
	}
	for it := 0; it < 3000; it++ {
		j := threeRunnerJob()
		at := uint64(100)
		for step := 0; step < 60 && !j.State.Terminal(); step++ {
			at += uint64(rng.IntN(15))
			var ev Event
			pick := func() types.Address {
				if len(j.Runners) > 0 && rng.IntN(4) > 0 {
					return j.Runners[rng.IntN(len(j.Runners))]
				}
				return pool[rng.IntN(len(pool))]
			}
			switch rng.IntN(8) {
			case 0:
				perm := rng.Perm(len(pool))[:3]
				rs := []types.Address{pool[perm[0]], pool[perm[1]], pool[perm[2]]}
				ev = Assigned{At: at, Runners: rs, Aggregator: rs[rng.IntN(3)]}
			case 1, 2:
				ev = Committed{At: at, Runner: pick(), Hash: types.Hash{byte(step)}}
			case 3:
				ev = Tick{At: at}
			case 4:
				ev = Revealed{At: at, Runner: pick()}
			case 5:
				var agreed []types.Address
				for _, c := range j.Commitments {
					if rng.IntN(3) > 0 {
						agreed = append(agreed, c.Runner)
					}
				}
				ev = Verified{At: at, Submitter: pick(), Agreed: agreed}
			case 6:
				ev = Rejected{At: at}
			default:
				if rng.IntN(4) == 0 {
					ev = Challenged{At: at, Upheld: rng.IntN(2) == 0}
				} else {
					ev = NoCandidates{At: at}
				}
			}
			before, _ := j.Encode()
			n, fx, err := Step(j, ev, p)
			after, _ := j.Encode()
			if !bytes.Equal(before, after) {
				t.Fatalf("Step mutated its input on %T", ev)
			}
			if err != nil {
				if !errors.Is(err, ErrTransition) || fx != nil {
					t.Fatalf("bad rejection: %v %v", err, fx)
				}
				continue
			}
			checkInvariants(t, &n, p)
			enc, err := n.Encode()
			if err != nil {
				t.Fatal(err)
			}
			dec, err := DecodeJob(enc)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if again, _ := dec.Encode(); !bytes.Equal(again, enc) {
				t.Fatal("round trip")
			}
			j = n
		}
		if j.State.Terminal() {
			if _, _, err := Step(j, Tick{At: at + 10_000}, p); !errors.Is(err, ErrTransition) {
				t.Fatal("terminal job accepted an event")
			}
		}
	}
}

func checkInvariants(t *testing.T, j *Job, p Params) {
	t.Helper()
	sortedUnique := func(name string, s []types.Address) {
		for i := 1; i < len(s); i++ {
			if bytes.Compare(s[i-1][:], s[i][:]) >= 0 {
				t.Fatalf("%s not sorted/unique: %v", name, s)
			}
		}
	}
	if j.Retry > p.MaxRetries {
		t.Fatalf("retry %d", j.Retry)
	}
	sortedUnique("excluded", j.Excluded)
	sortedUnique("revealed", j.Revealed)
	sortedUnique("agreed", j.Agreed)
	for i := 1; i < len(j.Commitments); i++ {
		if bytes.Compare(j.Commitments[i-1].Runner[:], j.Commitments[i].Runner[:]) >= 0 {
			t.Fatal("commitments not sorted/unique")
		}
	}
	for _, c := range j.Commitments {
		if !slices.Contains(j.Runners, c.Runner) {
			t.Fatalf("commitment from unselected %s", c.Runner)
		}
	}
	for _, r := range j.Runners {
		if contains(j.Excluded, r) && j.State == StateAssigned {
			t.Fatalf("excluded runner %s assigned", r)
		}
	}
	switch j.State {
	case StatePending:
		if len(j.Runners) != 0 || len(j.Commitments) != 0 {
			t.Fatal("pending job with runners")
		}
	case StateVerified, StateFinalized:
		if len(j.Agreed) < j.Spec.Verification.Quorum() {
			t.Fatal("verified below quorum")
		}
	case StateFailed:
		if j.Fail == FailNone {
			t.Fatal("failed without reason")
		}
	}
}
