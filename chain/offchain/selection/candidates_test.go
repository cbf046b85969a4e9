package selection

import (
	"errors"
	"math/big"
	"slices"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

type fakePools map[types.Address]bool

func (f fakePools) InPool(r types.Address, pool []byte, at uint64) (bool, error) {
	if string(pool) == "boom" {
		return false, errors.New("storage failure")
	}
	return f[r], nil
}

func goodCandidate(i int) Candidate {
	return Candidate{
		Address:           addrN(i),
		Stake:             cby(10_000),
		Capabilities:      []job.JobType{job.JobTypeLLM, job.JobTypeHTTP},
		LastHeartbeat:     95,
		Reputation:        80,
		TEE:               true,
		Domains:           []string{"*.example.com", "set:price_feeds"},
		Rates:             job.RateCard{Base: big.NewInt(10), PerToken: big.NewInt(1)},
		ActiveJobs:        1,
		MaxConcurrentJobs: 4,
	}
}

func baseReq() Requirements {
	return Requirements{
		JobType:                job.JobTypeHTTP,
		Bounds:                 job.ResourceBounds{MaxTokens: 100, MaxWallTimeMs: 1000, MaxMemoryBytes: 1 << 20},
		MaxPrice:               big.NewInt(110),
		RequiredDomains:        []string{"api.example.com", "set:price_feeds"},
		AtBlock:                100,
		HeartbeatTimeoutBlocks: 10,
	}
}

func TestFilterCandidates(t *testing.T) {
	tests := []struct {
		name   string
		mutC   func(*Candidate)
		mutR   func(*Requirements)
		reject Filter
	}{
		{"passes", nil, nil, 0},
		{"heartbeat at the timeout edge", func(c *Candidate) { c.LastHeartbeat = 90 }, nil, 0},
		{"stale heartbeat", func(c *Candidate) { c.LastHeartbeat = 89 }, nil, FilterHealth},
		{"heartbeat in the future", func(c *Candidate) { c.LastHeartbeat = 101 }, nil, FilterHealth},
		{"reputation 50 passes", func(c *Candidate) { c.Reputation = 50 }, nil, 0},
		{"reputation 49", func(c *Candidate) { c.Reputation = 49 }, nil, FilterReputation},
		{"no capability", func(c *Candidate) { c.Capabilities = []job.JobType{job.JobTypeLLM} }, nil, FilterCapability},
		{"missing domain", func(c *Candidate) { c.Domains = []string{"*.example.com"} }, nil, FilterCapability},
		{"no tee needed", func(c *Candidate) { c.TEE = false }, nil, 0},
		{"tee required", func(c *Candidate) { c.TEE = false }, func(r *Requirements) { r.TEERequired = true }, FilterTEE},
		{"price equal passes", nil, func(r *Requirements) { r.MaxPrice = big.NewInt(110) }, 0},
		{"price too high", nil, func(r *Requirements) { r.MaxPrice = big.NewInt(109) }, FilterPrice},
		{"at capacity", func(c *Candidate) { c.ActiveJobs = 4 }, nil, FilterConcurrency},
		{"pool member", nil, func(r *Requirements) { r.RequiredPool = []byte("p") }, 0},
		{"not pool member", func(c *Candidate) { c.Address = addrN(77) }, func(r *Requirements) { r.RequiredPool = []byte("p") }, FilterEntitlement},
		{"first failing filter wins", func(c *Candidate) { c.Reputation = 0; c.ActiveJobs = 9 }, nil, FilterReputation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := goodCandidate(1)
			r := baseReq()
			if tc.mutC != nil {
				tc.mutC(&c)
			}
			if tc.mutR != nil {
				tc.mutR(&r)
			}
			out, rej, err := FilterCandidates([]Candidate{c}, r, fakePools{addrN(1): true})
			if err != nil {
				t.Fatal(err)
			}
			if tc.reject == 0 {
				if len(out) != 1 || len(rej) != 0 {
					t.Fatalf("want pass, got rejects %v", rej)
				}
				return
			}
			if len(out) != 0 || len(rej) != 1 || rej[0].Filter != tc.reject {
				t.Fatalf("want reject by %s, got out=%d rej=%v", tc.reject, len(out), rej)
			}
		})
	}
}

func TestFilterSortsAndRejectsBadInput(t *testing.T) {
	var cs []Candidate
	for i := 10; i > 0; i-- {
		cs = append(cs, goodCandidate(i))
	}
	out, _, err := FilterCandidates(cs, baseReq(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(out, func(a, b Candidate) int { return compareAddr(a.Address, b.Address) }) || len(out) != 10 {
		t.Fatal("output not sorted")
	}
	if _, _, err := FilterCandidates(append(cs, goodCandidate(3)), baseReq(), nil); !errors.Is(err, ErrBadCandidates) {
		t.Fatalf("duplicate: %v", err)
	}
	bad := goodCandidate(1)
	bad.Stake = nil
	if _, _, err := FilterCandidates([]Candidate{bad}, baseReq(), nil); !errors.Is(err, ErrBadCandidates) {
		t.Fatalf("nil stake: %v", err)
	}
	r := baseReq()
	r.RequiredPool = []byte("p")
	if _, _, err := FilterCandidates(cs, r, nil); !errors.Is(err, ErrBadCandidates) {
		t.Fatalf("pool without checker: %v", err)
	}
	r.RequiredPool = []byte("boom")
	if _, _, err := FilterCandidates(cs, r, fakePools{}); err == nil {
		t.Fatal("checker error swallowed")
	}
}

func compareAddr(a, b types.Address) int {
	for i := range a {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return 0
}

func TestAggregatorAndAssign(t *testing.T) {
	e := func(i int, rep uint64) SnapshotEntry {
		return SnapshotEntry{Address: addrN(i), Stake: cby(10_000), Reputation: rep}
	}
	entries := []SnapshotEntry{e(1, 70), e(2, 90), e(3, 90), e(4, 10)}
	slices.SortFunc(entries, func(a, b SnapshotEntry) int { return compareAddr(a.Address, b.Address) })
	agg, err := Aggregator(entries)
	if err != nil {
		t.Fatal(err)
	}
	lo := addrN(2)
	if compareAddr(addrN(3), lo) < 0 {
		lo = addrN(3)
	}
	if agg != lo {
		t.Fatalf("aggregator %s, want lowest address among reputation 90 (%s)", agg, lo)
	}
	if _, err := Aggregator(nil); err == nil {
		t.Fatal("empty aggregator")
	}

	seed := types.Keccak256([]byte("assign"))
	a0, err := Assign(entries, seed, 0, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if a0.Seed != seed {
		t.Fatal("attempt 0 must use the original seed")
	}
	a1, err := Assign(entries, seed, 1, a0.Runners, 2)
	if err != nil {
		t.Fatal(err)
	}
	if a1.Seed != RetrySeed(seed, 1) {
		t.Fatal("retry seed")
	}
	for _, r := range a1.Runners {
		if slices.Contains(a0.Runners, r) {
			t.Fatalf("timed-out runner %s re-selected", r)
		}
	}
	if _, err := Assign(entries, seed, 2, append(a0.Runners, a1.Runners...), 1); !errors.Is(err, ErrNotEnoughCandidates) {
		t.Fatalf("exhausted candidates: %v", err)
	}
	root1, _ := CandidateRoot(entries)
	entries[0].Stake = new(big.Int).Add(entries[0].Stake, big.NewInt(1))
	root2, _ := CandidateRoot(entries)
	if root1 == root2 {
		t.Fatal("root ignores stake")
	}
	if _, err := CandidateRoot([]SnapshotEntry{entries[1], entries[0]}); !errors.Is(err, ErrBadCandidates) {
		t.Fatal("unsorted root accepted")
	}
}

func TestFilterWithEntitlementRegistry(t *testing.T) {
	reg := entitlement.NewRegistry(entitlement.NewMemKV(), types.GovernanceAddress)
	pool := []byte("p")
	until := uint64(150)
	if _, err := reg.Grant(addrN(0), addrN(1), entitlement.RunnerPoolScope(pool), entitlement.RunnerJoinPoolAction(pool), entitlement.Constraints{ValidUntil: &until}, 1); err != nil {
		t.Fatal(err)
	}
	r := baseReq()
	r.RequiredPool = pool
	out, rej, err := FilterCandidates([]Candidate{goodCandidate(1), goodCandidate(2)}, r, reg)
	if err != nil || len(out) != 1 || out[0].Address != addrN(1) || len(rej) != 1 || rej[0].Filter != FilterEntitlement {
		t.Fatalf("out %v rej %v err %v", out, rej, err)
	}
	r.AtBlock, r.HeartbeatTimeoutBlocks = 151, 1000
	if out, _, _ := FilterCandidates([]Candidate{goodCandidate(1)}, r, reg); len(out) != 0 {
		t.Fatal("expired pool membership admitted")
	}
}
