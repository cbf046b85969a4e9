package verify

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Input is everything the Result Verifier knows when it checks reveals.
type Input struct {
	Spec *job.JobSpec // validated; Spec.JobID is the job id
	// Commitments of the job (job.Job.Commitments).
	Commitments []job.Commitment
	// Keys are the runners' registered Ed25519 result keys.
	Keys map[types.Address]ed25519.PublicKey
	// Reveals, in any order.
	Reveals []Reveal
}

// Invalid records a revealed result that broke a content rule.
type Invalid struct {
	Runner types.Address
	Reason string
}

// Outcome is the result of verification.
type Outcome struct {
	// Accepted reports whether a result reached the quorum; if not, Result is
	// nil and every revealing runner is in Dissented.
	Accepted       bool
	Result         []byte
	ResultHash     types.Hash
	Representative types.Address // runner whose result bytes were accepted
	// Agreed, Dissented and Missing are sorted and disjoint; together they are
	// all committed runners. Missing committed but did not reveal.
	Agreed    []types.Address
	Dissented []types.Address
	Missing   []types.Address
	// Invalid lists the dissenters whose result broke a content rule (size,
	// format, schema, range, embedding), with the reason.
	Invalid []Invalid
}

// Claim is the VerifiedResult an honest aggregator submits for o.
func (o *Outcome) Claim(jobID types.Hash) VerifiedResult {
	return VerifiedResult{JobID: jobID, ResultHash: o.ResultHash, Agreed: o.Agreed, Dissented: o.Dissented}
}

// Verify checks every reveal against its commitment and key, applies the size
// limit and the spec's verification mode, and returns the outcome. An error
// wrapping ErrBadReveal or ErrBadSubmission means the submission itself is
// invalid; a mode that finds no acceptable result returns an Outcome with
// Accepted = false and no error.
func Verify(in Input) (Outcome, error) {
	spec := in.Spec
	if spec == nil {
		return Outcome{}, fmt.Errorf("%w: no spec", ErrBadSubmission)
	}
	if spec.Verification.Mode == job.ModeDeterministic && !spec.TEERequired {
		return Outcome{}, fmt.Errorf("%w: deterministic mode requires tee_required", ErrBadSubmission)
	}
	reveals, err := sortReveals(in.Reveals)
	if err != nil {
		return Outcome{}, err
	}
	commits := make(map[types.Address]types.Hash, len(in.Commitments))
	for _, c := range in.Commitments {
		commits[c.Runner] = c.Hash
	}
	var resultSchema *jsonschema.Schema
	if spec.Verification.Mode != job.ModeNone && spec.ResultSchema.DataFormat == job.FormatJSON && len(spec.ResultSchema.JSONSchema) > 0 {
		if resultSchema, err = compileSchema(spec.ResultSchema.JSONSchema); err != nil {
			return Outcome{}, fmt.Errorf("%w: result_schema: %w", ErrBadSchema, err)
		}
	}
	var out Outcome
	revealed := map[types.Address]bool{}
	var valid []Reveal
	for i := range reveals {
		r := &reveals[i]
		c, ok := commits[r.Runner]
		if !ok {
			return Outcome{}, fmt.Errorf("%w: %s has no commitment", ErrBadSubmission, r.Runner)
		}
		if err := CheckReveal(spec.JobID, r, c, in.Keys[r.Runner]); err != nil {
			return Outcome{}, err
		}
		revealed[r.Runner] = true
		if reason := contentError(spec, resultSchema, r); reason != "" {
			out.Invalid = append(out.Invalid, Invalid{Runner: r.Runner, Reason: reason})
			continue
		}
		valid = append(valid, *r)
	}
	for _, c := range in.Commitments {
		if !revealed[c.Runner] {
			out.Missing = append(out.Missing, c.Runner)
		}
	}
	slices.SortFunc(out.Missing, cmpAddr)

	var g group
	switch spec.Verification.Mode {
	case job.ModeNone, job.ModeEconomicBond:
		g, err = single(valid)
	case job.ModeMajorityVote:
		g, err = majorityVote(spec, valid, &out)
	case job.ModeStructuredMatch:
		g, err = structuredMatch(spec, valid, &out)
	case job.ModeDeterministic:
		g = deterministic(valid)
	case job.ModeSemanticSimilarity:
		g = semantic(spec, valid)
	default:
		return Outcome{}, fmt.Errorf("%w: unknown mode %d", ErrBadSubmission, spec.Verification.Mode)
	}
	if err != nil {
		return Outcome{}, err
	}
	invalid := map[types.Address]bool{}
	for _, iv := range out.Invalid {
		invalid[iv.Runner] = true
	}
	if len(g.members) >= spec.Verification.Quorum() && g.members != nil {
		out.Accepted = true
		out.Result = slices.Clone(g.rep.Result)
		out.ResultHash = types.Keccak256(g.rep.Result)
		out.Representative = g.rep.Runner
		out.Agreed = g.members
	}
	for _, r := range reveals {
		if !slices.Contains(out.Agreed, r.Runner) {
			out.Dissented = append(out.Dissented, r.Runner)
		}
	}
	slices.SortFunc(out.Invalid, func(a, b Invalid) int { return cmpAddr(a.Runner, b.Runner) })
	return out, nil
}

// CheckSubmission verifies a full aggregator submission: the recomputed
// outcome must be accepted and equal to the claim.
func CheckSubmission(spec *job.JobSpec, commitments []job.Commitment, keys map[types.Address]ed25519.PublicKey, s *Submission) (Outcome, error) {
	if s.Claim.JobID != spec.JobID {
		return Outcome{}, fmt.Errorf("%w: claim is for job %s", ErrBadSubmission, s.Claim.JobID)
	}
	o, err := Verify(Input{Spec: spec, Commitments: commitments, Keys: keys, Reveals: s.Reveals})
	if err != nil {
		return Outcome{}, err
	}
	if !o.Accepted {
		return o, ErrNoResult
	}
	want := o.Claim(spec.JobID)
	if want.ResultHash != s.Claim.ResultHash || !slices.Equal(want.Agreed, s.Claim.Agreed) || !slices.Equal(want.Dissented, s.Claim.Dissented) {
		return o, fmt.Errorf("%w: claim differs from the recomputed outcome", ErrBadSubmission)
	}
	return o, nil
}

// contentError applies the per-result rules that do not depend on other
// runners: the size limit (all modes), the data format and the result schema
// (all modes but None), and the embedding shape (SemanticSimilarity).
func contentError(spec *job.JobSpec, resultSchema *jsonschema.Schema, r *Reveal) string {
	if lim := MaxResultBytes(spec); len(r.Result) > lim {
		return fmt.Sprintf("result is %d bytes, limit %d", len(r.Result), lim)
	}
	mode := spec.Verification.Mode
	if mode != job.ModeSemanticSimilarity && len(r.Embedding) != 0 {
		return "unexpected embedding"
	}
	// A fault report says the runner produced no result; in every mode,
	// None included, it must never be accepted (and paid) as one.
	if r.Report != nil && r.Report.Fault != FaultNone {
		return fmt.Sprintf("fault report %d, not a result", r.Report.Fault)
	}
	if mode == job.ModeNone {
		return ""
	}
	if len(r.Result) == 0 {
		return "empty result"
	}
	switch spec.ResultSchema.DataFormat {
	case job.FormatText:
		if !utf8.Valid(r.Result) {
			return "result is not UTF-8"
		}
	case job.FormatJSON:
		doc, err := parseJSON(r.Result)
		if err != nil {
			return "result is not JSON: " + err.Error()
		}
		if resultSchema != nil && resultSchema.Validate(doc) != nil {
			return "result does not match result_schema"
		}
	}
	if mode == job.ModeSemanticSimilarity {
		if len(r.Embedding) != int(spec.Verification.EmbeddingDim) {
			return fmt.Sprintf("embedding has %d dimensions, want %d", len(r.Embedding), spec.Verification.EmbeddingDim)
		}
		if isZero(r.Embedding) || !embeddingInRange(r.Embedding) {
			return "embedding is zero or has a component outside ±2^20"
		}
	}
	return ""
}

// group is an agreeing set: members sorted, rep the representative reveal.
type group struct {
	members []types.Address
	rep     Reveal
}

func single(valid []Reveal) (group, error) {
	if len(valid) == 0 {
		return group{}, nil
	}
	if len(valid) > 1 {
		return group{}, fmt.Errorf("%w: single-runner mode with %d results", ErrBadSubmission, len(valid))
	}
	return group{members: []types.Address{valid[0].Runner}, rep: valid[0]}, nil
}

// deterministic groups byte-identical results; the largest group wins, ties
// going to the group whose lowest member address is lowest (valid is sorted,
// so that is the group seen first).
func deterministic(valid []Reveal) group {
	return largestGroup(valid, func(a, b *Reveal) bool { return bytes.Equal(a.Result, b.Result) })
}

// largestGroup: for each reveal i in address order, G(i) = {j : same(i, j)};
// the largest G(i) wins, the earliest i on ties; rep is reveal i.
func largestGroup(valid []Reveal, same func(a, b *Reveal) bool) group {
	var best group
	for i := range valid {
		var m []types.Address
		for j := range valid {
			if i == j || same(&valid[i], &valid[j]) {
				m = append(m, valid[j].Runner)
			}
		}
		if len(m) > len(best.members) {
			best = group{members: m, rep: valid[i]}
		}
	}
	return best
}

func cmpAddr(a, b types.Address) int { return bytes.Compare(a[:], b[:]) }

// ValidateSchemas compiles every JSON Schema a spec carries (result_schema
// and StructuredMatch checks). The Job Dispatcher calls it at submission so a
// job with a broken schema is refused up front (actor fault) instead of
// failing at verification.
func ValidateSchemas(spec *job.JobSpec) error {
	if len(spec.ResultSchema.JSONSchema) > 0 {
		if _, err := compileSchema(spec.ResultSchema.JSONSchema); err != nil {
			return fmt.Errorf("%w: result_schema: %w", ErrBadSchema, err)
		}
	}
	for i, c := range spec.Verification.Checks {
		if c.Kind == job.CheckJSONSchema {
			if _, err := compileSchema(c.Schema); err != nil {
				return fmt.Errorf("%w: checks[%d]: %w", ErrBadSchema, i, err)
			}
		}
	}
	return nil
}
