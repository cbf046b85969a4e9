package verify

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec/jsoncanon"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
)

// majorityVote: each valid result votes with the canonical value at
// VoteField; the value with the most votes wins if no other value has as
// many, and must reach the quorum. A result without the field casts no vote
// (it dissents). The representative is the lowest-address winner.
func majorityVote(spec *job.JobSpec, valid []Reveal, out *Outcome) (group, error) {
	field := spec.Verification.VoteField
	votes := map[string][]int{}
	var order []string
	for i := range valid {
		doc, _ := parseJSON(valid[i].Result) // format already checked
		v, ok := lookup(doc, field)
		if !ok {
			out.Invalid = append(out.Invalid, Invalid{Runner: valid[i].Runner, Reason: "vote field " + field + " missing"})
			continue
		}
		k := canonical(v)
		if _, seen := votes[k]; !seen {
			order = append(order, k)
		}
		votes[k] = append(votes[k], i)
	}
	best, tie := "", false
	for _, k := range order { // first-seen order: deterministic
		switch {
		case best == "" || len(votes[k]) > len(votes[best]):
			best, tie = k, false
		case len(votes[k]) == len(votes[best]):
			tie = true
		}
	}
	if best == "" || tie {
		return group{}, nil
	}
	return groupOf(valid, votes[best]), nil
}

func groupOf(valid []Reveal, idx []int) group {
	g := group{rep: valid[idx[0]]}
	for _, i := range idx {
		g.members = append(g.members, valid[i].Runner)
	}
	return g
}

// structuredMatch runs the pipeline of §9 in three passes:
//
//  1. per-result checks (JsonSchema, NumericRange) in pipeline order — a
//     failing result dissents;
//  2. per-field majority (FieldMajority) in pipeline order — the value at the
//     field must be held by a strict majority of the remaining results, else
//     no result is accepted; the minority dissents;
//  3. grouping by FieldMatch (canonical equality) and NumericTolerance
//     (|a − b| ≤ tolerance, exact rationals): for each remaining result r in
//     address order, G(r) = results matching r on every such field; the
//     largest G(r) wins (earliest r on ties), r is the representative.
func structuredMatch(spec *job.JobSpec, valid []Reveal, out *Outcome) (group, error) {
	checks := spec.Verification.Checks
	docs := make([]any, len(valid))
	alive := make([]bool, len(valid))
	for i := range valid {
		docs[i], _ = parseJSON(valid[i].Result)
		alive[i] = true
	}
	drop := func(i int, reason string) {
		alive[i] = false
		out.Invalid = append(out.Invalid, Invalid{Runner: valid[i].Runner, Reason: reason})
	}
	for ci, c := range checks {
		switch c.Kind {
		case job.CheckJSONSchema:
			s, err := compileSchema(c.Schema)
			if err != nil {
				return group{}, fmt.Errorf("%w: checks[%d]: %w", ErrBadSchema, ci, err)
			}
			for i := range valid {
				if alive[i] && s.Validate(docs[i]) != nil {
					drop(i, fmt.Sprintf("checks[%d]: schema mismatch", ci))
				}
			}
		case job.CheckNumericRange:
			var lo, hi *big.Rat
			if c.Min != "" {
				lo, _ = job.ParseDecimal(c.Min)
			}
			if c.Max != "" {
				hi, _ = job.ParseDecimal(c.Max)
			}
			for i := range valid {
				if !alive[i] {
					continue
				}
				v, ok := lookup(docs[i], c.Field)
				n, isNum := jsoncanon.Rat(v)
				if !ok || !isNum || (lo != nil && n.Cmp(lo) < 0) || (hi != nil && n.Cmp(hi) > 0) {
					drop(i, fmt.Sprintf("checks[%d]: %s out of range", ci, c.Field))
				}
			}
		}
	}
	for ci, c := range checks {
		if c.Kind != job.CheckFieldMajority {
			continue
		}
		counts := map[string]int{}
		n := 0
		for i := range valid {
			if alive[i] {
				n++
				if v, ok := lookup(docs[i], c.Field); ok {
					counts[canonical(v)]++
				}
			}
		}
		winner := ""
		for k, cnt := range counts { // at most one key can hold a strict majority
			if 2*cnt > n {
				winner = k
			}
		}
		if winner == "" {
			return group{}, nil
		}
		for i := range valid {
			if !alive[i] {
				continue
			}
			if v, ok := lookup(docs[i], c.Field); !ok || canonical(v) != winner {
				drop(i, fmt.Sprintf("checks[%d]: minority value at %s", ci, c.Field))
			}
		}
	}
	var tols []*big.Rat
	for _, c := range checks {
		if c.Kind == job.CheckNumericTolerance {
			t, _ := job.ParseDecimal(c.Tolerance)
			tols = append(tols, t)
		} else {
			tols = append(tols, nil)
		}
	}
	same := func(a, b int) bool {
		for ci, c := range checks {
			switch c.Kind {
			case job.CheckFieldMatch:
				va, oka := lookup(docs[a], c.Field)
				vb, okb := lookup(docs[b], c.Field)
				if !oka || !okb || canonical(va) != canonical(vb) {
					return false
				}
			case job.CheckNumericTolerance:
				va, oka := lookup(docs[a], c.Field)
				vb, okb := lookup(docs[b], c.Field)
				na, isa := jsoncanon.Rat(va)
				nb, isb := jsoncanon.Rat(vb)
				if !oka || !okb || !isa || !isb {
					return false
				}
				d := new(big.Rat).Sub(na, nb)
				if d.Abs(d).Cmp(tols[ci]) > 0 {
					return false
				}
			}
		}
		return true
	}
	var best []int
	for i := range valid {
		if !alive[i] {
			continue
		}
		var g []int
		for j := range valid {
			if alive[j] && (i == j || same(i, j)) {
				g = append(g, j)
			}
		}
		if len(g) > len(best) {
			// The representative must be i itself: put it first.
			best = append([]int{i}, without(g, i)...)
		}
	}
	if best == nil {
		return group{}, nil
	}
	g := group{rep: valid[best[0]]}
	for j := range valid {
		for _, k := range best {
			if k == j {
				g.members = append(g.members, valid[j].Runner)
			}
		}
	}
	return g, nil
}

func without(s []int, x int) []int {
	var out []int
	for _, v := range s {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

// Embedding fixed point. A runner quantises each component x of its
// embedding to e = round_half_even(x · 2^EmbeddingFracBits), which must lie in
// [−MaxEmbeddingAbs, MaxEmbeddingAbs]. Cosine similarity is scale-invariant,
// so the scale only sets precision; the bound keeps every dot product and
// squared norm of up to job.MaxEmbeddingDim components inside int64.
const (
	EmbeddingFracBits = 16
	MaxEmbeddingAbs   = 1 << 20
)

func isZero(e []int32) bool {
	for _, v := range e {
		if v != 0 {
			return false
		}
	}
	return true
}

func embeddingInRange(e []int32) bool {
	for _, v := range e {
		if v > MaxEmbeddingAbs || v < -MaxEmbeddingAbs {
			return false
		}
	}
	return true
}

func dot(a, b []int32) int64 {
	var s int64
	for i := range a {
		s += int64(a[i]) * int64(b[i])
	}
	return s
}

// SimilarAtLeast decides cos(a, b) ≥ ppm / 10^6 exactly, for 0 < ppm ≤ 10^6
// and non-zero in-range embeddings of equal length:
//
//	a·b > 0  and  (a·b)² · 10^12 ≥ ppm² · |a|² · |b|²
//
// with |a|² = a·a. Dot products are exact int64 (|components| ≤ 2^20,
// ≤ 4096 components ⇒ |a·b| < 2^53); the squared comparison uses math/big.
func SimilarAtLeast(a, b []int32, ppm uint32) bool {
	d := dot(a, b)
	if ppm == 0 {
		return d >= 0
	}
	if d <= 0 {
		return false
	}
	lhs := new(big.Int).SetInt64(d)
	lhs.Mul(lhs, lhs).Mul(lhs, big.NewInt(1_000_000_000_000))
	rhs := new(big.Int).SetUint64(uint64(ppm))
	rhs.Mul(rhs, rhs).Mul(rhs, big.NewInt(dot(a, a))).Mul(rhs, big.NewInt(dot(b, b)))
	return lhs.Cmp(rhs) >= 0
}

// semantic clusters results by embedding: for each valid result i in address
// order, C(i) = {j : cos(i, j) ≥ threshold}; the largest C(i) wins (earliest i
// on ties) and i's result is accepted.
func semantic(spec *job.JobSpec, valid []Reveal) group {
	ppm := spec.Verification.SimilarityPpm
	return largestGroup(valid, func(a, b *Reveal) bool { return SimilarAtLeast(a.Embedding, b.Embedding, ppm) })
}
