package selection

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Candidate is a Runner Registry entry as the Job Dispatcher sees it at the
// submission block (§4).
type Candidate struct {
	Address types.Address
	// Stake is the effective stake (self-bonded + delegated, CIP-13), base units.
	Stake *big.Int
	// Capabilities are the job types the runner supports.
	Capabilities []job.JobType
	// LastHeartbeat is the block height of the runner's last heartbeat.
	LastHeartbeat uint64
	// Reputation is the registry's reputation score.
	Reputation uint64
	// TEE reports declared TEE support whose attestation the TEE Verifier
	// (0x05) accepted.
	TEE bool
	// Domains are the HTTP domains / domain sets the runner serves.
	Domains []string
	// Rates is the runner's published rate card.
	Rates job.RateCard
	// ActiveJobs and MaxConcurrentJobs feed the concurrency filter.
	ActiveJobs        uint32
	MaxConcurrentJobs uint32
}

// Requirements is what a job asks of its candidates.
type Requirements struct {
	JobType         job.JobType
	TEERequired     bool
	Bounds          job.ResourceBounds
	MaxPrice        *big.Int
	RequiredPool    []byte // nil: open
	RequiredDomains []string
	// AtBlock is the submission block (candidate snapshot height).
	AtBlock uint64
	// HeartbeatTimeoutBlocks is heartbeat_timeout_blocks of the health filter.
	HeartbeatTimeoutBlocks uint64
}

// RequirementsFromSpec derives Requirements from a validated JobSpec.
func RequirementsFromSpec(s *job.JobSpec, heartbeatTimeoutBlocks uint64) Requirements {
	return Requirements{
		JobType:                s.JobType,
		TEERequired:            s.TEERequired,
		Bounds:                 s.Bounds,
		MaxPrice:               s.MaxPrice,
		RequiredPool:           s.RequiredRunnerPool,
		RequiredDomains:        s.RequiredDomains,
		AtBlock:                s.SubmittedAt,
		HeartbeatTimeoutBlocks: heartbeatTimeoutBlocks,
	}
}

// PoolChecker answers the entitlement filter (§4 step 7, §7.3):
// whether runner holds a live Scope::RunnerPool(pool) + Action::RunnerJoinPool(pool)
// entitlement at block at. *entitlement.Registry implements it.
type PoolChecker interface {
	InPool(runner types.Address, pool []byte, at uint64) (bool, error)
}

var _ PoolChecker = (*entitlement.Registry)(nil)

// Reject records why a candidate was filtered out.
type Reject struct {
	Address types.Address
	Filter  Filter
}

// Filter names the seven filters of §4, applied in this order.
type Filter uint8

// The filters of §4.
const (
	FilterHealth      Filter = 1
	FilterReputation  Filter = 2
	FilterCapability  Filter = 3 // job type and, for http/mcp, required domains
	FilterTEE         Filter = 4
	FilterPrice       Filter = 5
	FilterConcurrency Filter = 6
	FilterEntitlement Filter = 7
)

func (f Filter) String() string {
	return [...]string{"?", "health", "reputation", "capability", "tee", "price", "concurrency", "entitlement"}[min(int(f), 7)]
}

// FilterCandidates applies the seven filters of §4 and returns the surviving
// candidates sorted ascending by address, plus the rejected ones with the
// first filter each failed (in input order). The input is not modified.
// Duplicate addresses or negative stakes are an error. pools may be nil only
// if req.RequiredPool is nil; if the Entitlement Registry does not exist the
// caller passes a checker that answers false (§7.6).
func FilterCandidates(cands []Candidate, req Requirements, pools PoolChecker) ([]Candidate, []Reject, error) {
	if req.RequiredPool != nil && pools == nil {
		return nil, nil, fmt.Errorf("%w: required pool without a pool checker", ErrBadCandidates)
	}
	var out []Candidate
	var rejects []Reject
	for _, c := range cands {
		if c.Stake == nil || c.Stake.Sign() < 0 {
			return nil, nil, fmt.Errorf("%w: missing or negative stake for %s", ErrBadCandidates, c.Address)
		}
		if err := c.Rates.Validate(); err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %w", ErrBadCandidates, c.Address, err)
		}
		f, err := firstFailing(&c, &req, pools)
		if err != nil {
			return nil, nil, fmt.Errorf("selection: filter %s: %w", c.Address, err)
		}
		if f != 0 {
			rejects = append(rejects, Reject{Address: c.Address, Filter: f})
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Candidate) int { return bytes.Compare(a.Address[:], b.Address[:]) })
	if err := checkSorted(len(out), func(i int) types.Address { return out[i].Address }); err != nil {
		return nil, nil, err
	}
	return out, rejects, nil
}

func firstFailing(c *Candidate, req *Requirements, pools PoolChecker) (Filter, error) {
	// 1. Health: heartbeat within heartbeat_timeout_blocks of the snapshot.
	if c.LastHeartbeat > req.AtBlock || req.AtBlock-c.LastHeartbeat > req.HeartbeatTimeoutBlocks {
		return FilterHealth, nil
	}
	// 2. Reputation ≥ 50.
	if c.Reputation < MinReputation {
		return FilterReputation, nil
	}
	// 3. Capability: supports the job type (and serves every required domain).
	if !slices.Contains(c.Capabilities, req.JobType) || !entitlement.Satisfies(req.RequiredDomains, c.Domains) {
		return FilterCapability, nil
	}
	// 4. TEE.
	if req.TEERequired && !c.TEE {
		return FilterTEE, nil
	}
	// 5. Price: this runner's estimated cost (its rate card applied to the
	// full bounds) ≤ max_price. With M runners the sum may exceed max_price;
	// settlement caps the total at max_price.
	if req.MaxPrice == nil || c.Rates.Cost(req.Bounds.AsUsage()).Cmp(req.MaxPrice) > 0 {
		return FilterPrice, nil
	}
	// 6. Concurrency: active_jobs < max_concurrent_jobs.
	if c.ActiveJobs >= c.MaxConcurrentJobs {
		return FilterConcurrency, nil
	}
	// 7. Entitlement (only when a pool is required).
	if req.RequiredPool != nil {
		ok, err := pools.InPool(c.Address, req.RequiredPool, req.AtBlock)
		if err != nil {
			return 0, err
		}
		if !ok {
			return FilterEntitlement, nil
		}
	}
	return 0, nil
}

// Stakes projects filtered candidates to the (address, stake) list Select uses.
func Stakes(cands []Candidate) []Stake {
	s := make([]Stake, len(cands))
	for i, c := range cands {
		s[i] = Stake{Address: c.Address, Stake: c.Stake}
	}
	return s
}

// SnapshotEntry is one leaf of the candidate snapshot: what re-selection and
// aggregator verification need from a candidate.
type SnapshotEntry struct {
	Address    types.Address
	Stake      *big.Int
	Reputation uint64
}

// Snapshot projects filtered candidates to snapshot entries.
func Snapshot(cands []Candidate) []SnapshotEntry {
	s := make([]SnapshotEntry, len(cands))
	for i, c := range cands {
		s[i] = SnapshotEntry{Address: c.Address, Stake: c.Stake, Reputation: c.Reputation}
	}
	return s
}

// LeafHash is the snapshot leaf preimage:
//
//	Keccak256(address(20) || stake as 32-byte big-endian || reputation_be8)
//
// It fails only for a stake outside [0, 2^256).
func (e SnapshotEntry) LeafHash() (types.Hash, error) {
	var buf [20 + 32 + 8]byte
	copy(buf[:20], e.Address[:])
	if e.Stake != nil {
		if e.Stake.Sign() < 0 || e.Stake.BitLen() > 256 {
			return types.Hash{}, fmt.Errorf("%w: stake of %s out of U256 range", ErrBadCandidates, e.Address)
		}
		e.Stake.FillBytes(buf[20:52])
	}
	binary.BigEndian.PutUint64(buf[52:], e.Reputation)
	return types.Keccak256(buf[:]), nil
}

// CandidateRoot is the Merkle root stored at submission time (§5, Security
// Considerations): types.MerkleRoot over the LeafHash of each entry, entries
// strictly ascending by address. The empty list has the zero root.
func CandidateRoot(entries []SnapshotEntry) (types.Hash, error) {
	if err := checkSorted(len(entries), func(i int) types.Address { return entries[i].Address }); err != nil {
		return types.Hash{}, err
	}
	leaves := make([]types.Hash, len(entries))
	for i, e := range entries {
		h, err := e.LeafHash()
		if err != nil {
			return types.Hash{}, err
		}
		leaves[i] = h
	}
	return types.MerkleRoot(leaves), nil
}

// Aggregator is the designated aggregator of §8: the selected runner with the
// highest reputation, ties broken by the lowest address. selected must be
// non-empty.
func Aggregator(selected []SnapshotEntry) (types.Address, error) {
	if len(selected) == 0 {
		return types.Address{}, fmt.Errorf("%w: no selected runners", ErrBadCandidates)
	}
	best := selected[0]
	for _, e := range selected[1:] {
		if e.Reputation > best.Reputation || (e.Reputation == best.Reputation && bytes.Compare(e.Address[:], best.Address[:]) < 0) {
			best = e
		}
	}
	return best.Address, nil
}

// Exclude returns the entries whose address is not in excluded, preserving
// order (so a sorted snapshot stays sorted). §6: timed-out runners of every
// earlier attempt of the job are excluded from each retry.
func Exclude(entries []SnapshotEntry, excluded []types.Address) []SnapshotEntry {
	out := make([]SnapshotEntry, 0, len(entries))
	for _, e := range entries {
		if !slices.Contains(excluded, e.Address) {
			out = append(out, e)
		}
	}
	return out
}

// Assignment is the outcome of one selection attempt.
type Assignment struct {
	Seed       types.Hash
	Runners    []types.Address // selection order
	Aggregator types.Address
}

// Assign runs attempt number retry (0 = first) for a job over its sorted
// snapshot: seed is the original VRF seed; for retry > 0 RetrySeed(seed,
// retry) is used and excluded runners are removed first.
func Assign(snapshot []SnapshotEntry, seed types.Hash, retry uint32, excluded []types.Address, m int) (Assignment, error) {
	pool := snapshot
	s := seed
	if retry > 0 {
		pool = Exclude(snapshot, excluded)
		s = RetrySeed(seed, retry)
	}
	stakes := make([]Stake, len(pool))
	for i, e := range pool {
		stakes[i] = Stake{Address: e.Address, Stake: e.Stake}
	}
	idx, err := Select(s, stakes, m)
	if err != nil {
		return Assignment{}, err
	}
	chosen := make([]SnapshotEntry, len(idx))
	runners := make([]types.Address, len(idx))
	for k, i := range idx {
		chosen[k] = pool[i]
		runners[k] = pool[i].Address
	}
	agg, err := Aggregator(chosen)
	if err != nil {
		return Assignment{}, err
	}
	return Assignment{Seed: s, Runners: runners, Aggregator: agg}, nil
}

// jsonCandidate is one element of SelectFromJSON's input.
type jsonCandidate struct {
	Address types.Address `json:"address"`
	Stake   string        `json:"stake"`
}

// ParseStake parses a base-unit amount written as a canonical decimal string:
// digits only, no sign, no leading zeros (except "0"), below 2^256.
func ParseStake(s string) (*big.Int, error) {
	if s == "" || len(s) > 78 || (len(s) > 1 && s[0] == '0') {
		return nil, fmt.Errorf("stake %q: not a canonical decimal", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return nil, fmt.Errorf("stake %q: not a canonical decimal", s)
		}
	}
	v, _ := new(big.Int).SetString(s, 10)
	if v.BitLen() > 256 {
		return nil, fmt.Errorf("stake %q: exceeds 2^256-1", s)
	}
	return v, nil
}

// ParseStakesJSON parses a JSON list of {"address": "0x…", "stake": "<decimal>"}
// in any order and returns it sorted by address; duplicates are an error.
func ParseStakesJSON(candidatesJSON []byte) ([]Stake, error) {
	dec := json.NewDecoder(bytes.NewReader(candidatesJSON))
	dec.DisallowUnknownFields()
	var in []jsonCandidate
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("%w: json: %w", ErrBadCandidates, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the JSON list", ErrBadCandidates)
	}
	out := make([]Stake, len(in))
	for i, c := range in {
		v, err := ParseStake(c.Stake)
		if err != nil {
			return nil, fmt.Errorf("%w: candidate %d: %w", ErrBadCandidates, i, err)
		}
		out[i] = Stake{Address: c.Address, Stake: v}
	}
	if err := SortStakes(out); err != nil {
		return nil, err
	}
	return out, nil
}

// SelectFromJSON is the CLI entry point: it parses candidatesJSON (see
// ParseStakesJSON), sorts it by address and returns the m addresses chosen by
// Select for seed, in selection order.
func SelectFromJSON(seed [32]byte, m int, candidatesJSON []byte) ([]types.Address, error) {
	stakes, err := ParseStakesJSON(candidatesJSON)
	if err != nil {
		return nil, err
	}
	return SelectAddresses(types.Hash(seed), stakes, m)
}
