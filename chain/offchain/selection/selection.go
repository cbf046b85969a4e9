// Package selection implements CIP-2 runner selection (seed 004 §4–§6):
// candidate filtering, the canonical candidate ordering and its Merkle root,
// the VRF seed, stake-weighted Fisher-Yates selection, the aggregator rule and
// timeout re-selection (retry seeds and exclusions).
//
// The code mirrors the specification's pseudocode line by line; see
// docs/OFFCHAIN.md for the exact preimages and the integer form of
// stake_to_weight.
package selection

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Protocol constants of §4–§6.
const (
	// MinStakeCBY is MIN_STAKE in whole CBY (seed 004, Security Considerations).
	MinStakeCBY = 10_000
	// SeedDomain is the VRF seed domain separator (§5).
	SeedDomain = "cowboy-runner-select-v2:"
	// RetryDomain is the re-selection seed domain separator (§6).
	RetryDomain = "retry:"
	// MaxRetries is MAX_RETRIES (§6).
	MaxRetries = 3
	// TimeoutPenalty is TIMEOUT_PENALTY, the reputation loss per timeout (§6).
	TimeoutPenalty = 5
	// MinReputation is the reputation filter threshold (§4 step 2).
	MinReputation = 50
	// MaxCandidates bounds a candidate list (keeps every weight sum in uint64
	// and the O(N·M) loop bounded).
	MaxCandidates = 1 << 16
)

// MinStake returns MIN_STAKE in base units: 10,000 CBY × 10^18.
func MinStake() *big.Int {
	return new(big.Int).Mul(big.NewInt(MinStakeCBY), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
}

// Errors. Every error returned by this package wraps one of these.
var (
	ErrNotEnoughCandidates = errors.New("selection: fewer candidates than runners requested")
	ErrBadCandidates       = errors.New("selection: invalid candidate list")
	ErrBadM                = errors.New("selection: runner count must be >= 1")
)

// Weight is stake_to_weight(s) = floor(log2(s / MIN_STAKE + 1)) + 1 (§5).
//
// It is computed in integers as bitlen(floor(s / MIN_STAKE) + 1): for any real
// x ≥ 0 with n = floor(x) and integer k, 2^k ≤ x+1 ⇔ 2^k ≤ n+1, so
// floor(log2(x+1)) = floor(log2(n+1)) = bitlen(n+1) − 1. A nil or zero stake
// has weight 1; a negative stake is a caller bug and also yields 1 (Filter and
// Select reject it first).
func Weight(stake *big.Int) uint64 {
	return weightWith(stake, MinStake())
}

func weightWith(stake, minStake *big.Int) uint64 {
	var q, r big.Int
	return weightScratch(stake, minStake, &q, &r)
}

// weightScratch computes the weight using caller-provided scratch integers
// (no allocation once they have grown).
func weightScratch(stake, minStake, q, r *big.Int) uint64 {
	if stake == nil || stake.Sign() <= 0 {
		return 1
	}
	q.QuoRem(stake, minStake, r)
	r.SetUint64(1)
	q.Add(q, r)
	return uint64(q.BitLen())
}

// Seed is the VRF seed of §5:
//
//	Keccak256(block_hash || "cowboy-runner-select-v2:" || job_id || submitted_at_le8)
func Seed(blockHash, jobID types.Hash, submittedAt uint64) types.Hash {
	var h [8]byte
	binary.LittleEndian.PutUint64(h[:], submittedAt)
	return types.Keccak256(blockHash[:], []byte(SeedDomain), jobID[:], h[:])
}

// RetrySeed is the re-selection seed of §6:
//
//	Keccak256(original_seed || "retry:" || retry_count_le4)
//
// retry_count is 1 for the first re-selection, 2 for the second, up to
// MaxRetries; attempt 0 uses the original seed.
func RetrySeed(original types.Hash, retryCount uint32) types.Hash {
	var c [4]byte
	binary.LittleEndian.PutUint32(c[:], retryCount)
	return types.Keccak256(original[:], []byte(RetryDomain), c[:])
}

// Stake is an address and its effective stake (self-bonded + delegated, CIP-13)
// in base units — the minimum a selection needs.
type Stake struct {
	Address types.Address
	Stake   *big.Int
}

// Select runs the stake-weighted Fisher-Yates selection of §5 over cands,
// which must be sorted strictly ascending by address (Filter's output), and
// returns the indices into cands of the m selected runners, in selection
// order. cands is not modified.
//
//	weights[i] ← stake_to_weight(candidates[i].stake)
//	current_seed ← seed
//	for i in 0..M:
//	    total_remaining ← sum(weights[i..N])
//	    hash ← Keccak256(current_seed || i_le8)
//	    r ← u64_from_le(hash[0..8]) mod total_remaining
//	    j ← weighted_pick(weights[i..N], r)   // smallest j with r < Σ weights[i..i+j]
//	    swap(candidates[i], candidates[i+j]); swap(weights[i], weights[i+j])
//	    current_seed ← hash
func Select(seed types.Hash, cands []Stake, m int) ([]int, error) {
	if m < 1 {
		return nil, fmt.Errorf("%w: got %d", ErrBadM, m)
	}
	if err := checkSorted(len(cands), func(i int) types.Address { return cands[i].Address }); err != nil {
		return nil, err
	}
	if m > len(cands) {
		return nil, fmt.Errorf("%w: %d of %d", ErrNotEnoughCandidates, m, len(cands))
	}
	minStake := MinStake()
	n := len(cands)
	weights := make([]uint64, n)
	idx := make([]int, n)
	var total uint64
	var q, rem big.Int
	for i, c := range cands {
		if c.Stake != nil && c.Stake.Sign() < 0 {
			return nil, fmt.Errorf("%w: negative stake for %s", ErrBadCandidates, c.Address)
		}
		weights[i] = weightScratch(c.Stake, minStake, &q, &rem)
		idx[i] = i
		total += weights[i]
	}
	current := seed
	var buf [types.HashLength + 8]byte
	for i := range m {
		copy(buf[:types.HashLength], current[:])
		binary.LittleEndian.PutUint64(buf[types.HashLength:], uint64(i))
		hash := types.Keccak256(buf[:])
		r := binary.LittleEndian.Uint64(hash[:8]) % total
		j := 0
		for acc := weights[i]; r >= acc; acc += weights[i+j] {
			j++
		}
		idx[i], idx[i+j] = idx[i+j], idx[i]
		weights[i], weights[i+j] = weights[i+j], weights[i]
		total -= weights[i] // total_remaining for the next round: sum(weights[i+1..N])
		current = hash
	}
	return idx[:m:m], nil
}

// checkSorted reports ErrBadCandidates unless the n addresses are strictly
// ascending (sorted and unique) and n ≤ MaxCandidates.
func checkSorted(n int, at func(int) types.Address) error {
	if n > MaxCandidates {
		return fmt.Errorf("%w: %d candidates exceed %d", ErrBadCandidates, n, MaxCandidates)
	}
	for i := 1; i < n; i++ {
		a, b := at(i-1), at(i)
		if bytes.Compare(a[:], b[:]) >= 0 {
			return fmt.Errorf("%w: not strictly ascending by address at index %d (%s, %s)", ErrBadCandidates, i, a, b)
		}
	}
	return nil
}

// SortStakes sorts s ascending by address and rejects duplicates.
func SortStakes(s []Stake) error {
	slices.SortFunc(s, func(a, b Stake) int { return bytes.Compare(a.Address[:], b.Address[:]) })
	return checkSorted(len(s), func(i int) types.Address { return s[i].Address })
}

// SelectAddresses is Select returning addresses.
func SelectAddresses(seed types.Hash, cands []Stake, m int) ([]types.Address, error) {
	idx, err := Select(seed, cands, m)
	if err != nil {
		return nil, err
	}
	out := make([]types.Address, len(idx))
	for k, i := range idx {
		out[k] = cands[i].Address
	}
	return out, nil
}
