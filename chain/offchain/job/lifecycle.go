package job

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// State is a job's lifecycle state (seed 004 §3, §6, §8).
type State uint8

// Job states.
//
//	Pending ──Assigned──▶ Assigned ──all M commit / quorum at deadline──▶ Committed
//	   ▲                     │ deadline, < quorum commits, retry < MaxRetries
//	   └─────────────────────┘ (timed-out runners penalised + excluded, RetrySeed)
//	Committed ──aggregator Verified──▶ Verified ──challenge window──▶ Finalized
//	Committed ──aggregator timeout──▶ Revealed (individual reveals) ──Verified──▶ Verified
//	any non-final ──failure──▶ Failed (escrow refunded per the payment table)
const (
	StatePending   State = 1
	StateAssigned  State = 2
	StateCommitted State = 3
	StateRevealed  State = 4
	StateVerified  State = 5
	StateFinalized State = 6
	StateFailed    State = 7
)

// stateNames are the states' names: String, and the text form of the API
// (apitypes.Job.Status) and the runner.
var stateNames = [...]string{"invalid", "pending", "assigned", "committed", "revealed", "verified", "finalized", "failed"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// MarshalText is the state's name ("assigned", …; String).
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a state's name; "invalid" (the zero state) is refused.
func (s *State) UnmarshalText(b []byte) error {
	for i, n := range stateNames {
		if i > 0 && n == string(b) {
			*s = State(i)
			return nil
		}
	}
	return fmt.Errorf("job: unknown state %q", b)
}

// Terminal reports whether no event can change s.
func (s State) Terminal() bool { return s == StateFinalized || s == StateFailed }

// FailReason says why a job failed; it selects the payment table row.
type FailReason uint8

// Failure reasons.
const (
	FailNone         FailReason = 0
	FailNoCandidates FailReason = 1 // selection impossible (runner-side: full refund)
	FailTimeout      FailReason = 2 // MAX_RETRIES attempts without enough commitments
	FailVerification FailReason = 3 // verification found no accepted result
	FailNoReveal     FailReason = 4 // nobody revealed before the reveal deadline
	FailChallenged   FailReason = 5 // a challenge against the result was upheld
)

// Params are the lifecycle constants (governance-tunable).
type Params struct {
	MaxRetries              uint32 // MAX_RETRIES, default 3
	TimeoutPenalty          uint64 // TIMEOUT_PENALTY, default 5
	SlashThreshold          uint64 // SLASH_THRESHOLD reputation loss for persistent non-responders, default 20
	AggregatorTimeoutBlocks uint64 // after Committed, default 30
	RevealTimeoutBlocks     uint64 // individual reveal window after the aggregator timeout, default 30
	ChallengeWindowBlocks   uint64 // 15 minutes at ~1 s blocks, default 900
}

// DefaultParams returns the defaults above.
func DefaultParams() Params {
	return Params{MaxRetries: 3, TimeoutPenalty: 5, SlashThreshold: 20, AggregatorTimeoutBlocks: 30, RevealTimeoutBlocks: 30, ChallengeWindowBlocks: 900}
}

// Commitment is a runner's commit (§8 step 1).
type Commitment struct {
	_      struct{}      `cbor:",toarray"`
	Runner types.Address `json:"runner"`
	Hash   types.Hash    `json:"hash"`
	Block  uint64        `json:"block"`
}

// Job is the Dispatcher's stored record of one job. Address lists are kept
// sorted ascending (Runners keeps selection order).
type Job struct {
	_             struct{}        `cbor:",toarray"`
	Spec          JobSpec         `json:"spec"`
	State         State           `json:"state"`
	Seed          types.Hash      `json:"seed"`           // original VRF seed (§5)
	CandidateRoot types.Hash      `json:"candidate_root"` // snapshot Merkle root
	Retry         uint32          `json:"retry"`          // 0 = first attempt
	Runners       []types.Address `json:"runners"`        // current attempt, selection order
	Aggregator    types.Address   `json:"aggregator"`
	Deadline      uint64          `json:"deadline"` // last block of the current phase
	Commitments   []Commitment    `json:"commitments"`
	Revealed      []types.Address `json:"revealed"` // individual reveals (Revealed state)
	Excluded      []types.Address `json:"excluded"` // timed-out runners of earlier attempts
	ResultHash    types.Hash      `json:"result_hash"`
	Agreed        []types.Address `json:"agreed"`
	Dissented     []types.Address `json:"dissented"`
	Fail          FailReason      `json:"fail"`
}

// Encode returns the canonical CBOR encoding of j.
func (j *Job) Encode() ([]byte, error) {
	b, err := codec.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("job: %w", err)
	}
	return b, nil
}

// DecodeJob decodes a canonical CBOR job record.
func DecodeJob(data []byte) (*Job, error) {
	var j Job
	if err := codec.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("job: %w", err)
	}
	return &j, nil
}

// New starts a job in Pending for a validated spec whose JobID is set, with
// its VRF seed and candidate snapshot root. The caller runs selection attempt
// 0 and steps Assigned (or NoCandidates).
func New(spec JobSpec, seed, candidateRoot types.Hash) Job {
	return Job{Spec: spec, State: StatePending, Seed: seed, CandidateRoot: candidateRoot}
}

// Event is an input to Step.
type Event interface{ isEvent() }

// Assigned: selection produced runners (§5) for attempt j.Retry.
type Assigned struct {
	At         uint64
	Runners    []types.Address
	Aggregator types.Address
}

// NoCandidates: selection for the current attempt is impossible.
type NoCandidates struct{ At uint64 }

// Committed: runner submitted its commitment (§8 step 1).
type Committed struct {
	At     uint64
	Runner types.Address
	Hash   types.Hash
}

// Tick: block At was reached; timeouts fire.
type Tick struct{ At uint64 }

// Revealed: a committed runner revealed individually (aggregator fallback).
// The Result Verifier has already checked the reveal against the commitment.
type Revealed struct {
	At     uint64
	Runner types.Address
}

// Verified: verification accepted a result. Submitter is the aggregator in
// Committed, or any committed runner after the aggregator timeout.
type Verified struct {
	At         uint64
	Submitter  types.Address
	ResultHash types.Hash
	Agreed     []types.Address
	Dissented  []types.Address
}

// Rejected: verification found no acceptable result (no quorum).
type Rejected struct {
	At        uint64
	Dissented []types.Address
}

// Challenged: a challenge against the verified result was decided. When
// upheld, Culprits are the committee members proven at fault (nil: every
// agreeing runner). The job fails only if a culprit agreed with the
// accepted result; a proven fault of a dissenter slashes it and leaves the
// result standing.
type Challenged struct {
	At       uint64
	Upheld   bool
	Culprits []types.Address
}

func (Assigned) isEvent()     {}
func (NoCandidates) isEvent() {}
func (Committed) isEvent()    {}
func (Tick) isEvent()         {}
func (Revealed) isEvent()     {}
func (Verified) isEvent()     {}
func (Rejected) isEvent()     {}
func (Challenged) isEvent()   {}

// EffectKind is an instruction from Step to its caller.
type EffectKind uint8

// Effects.
const (
	// EffectSelect: run selection attempt Job.Retry (selection.Assign with the
	// job's seed and Excluded) and step Assigned or NoCandidates.
	EffectSelect EffectKind = 1
	// EffectPenalize: reduce the reputation of Runners by Amount.
	EffectPenalize EffectKind = 2
	// EffectVerify: run verification over the individual reveals now and step
	// Verified or Rejected.
	EffectVerify EffectKind = 3
	// EffectCallback: deliver the result (or failure) to the callback actor
	// as a deferred transaction (CIP-1).
	EffectCallback EffectKind = 4
	// EffectSettle: pay out per the Success row (payment.Settle).
	EffectSettle EffectKind = 5
	// EffectRefund: refund the escrow per the failure row for Fail.
	EffectRefund EffectKind = 6
	// EffectSlash: proven dishonesty — slash Runners' stake.
	EffectSlash EffectKind = 7
)

// Effect is one instruction produced by Step.
type Effect struct {
	Kind    EffectKind
	Runners []types.Address
	Amount  uint64
	Fail    FailReason
}

// ErrTransition wraps every rejected event.
var ErrTransition = errors.New("job: invalid transition")

func reject(j *Job, ev Event, why string) error {
	return fmt.Errorf("%w: %T in %s: %s", ErrTransition, ev, j.State, why)
}

// Step applies ev to j and returns the new record and the effects the caller
// must carry out, in order. j is not modified. A rejected event returns an
// error wrapping ErrTransition and no effects.
func Step(j Job, ev Event, p Params) (Job, []Effect, error) {
	n := j.clone()
	if n.State.Terminal() {
		return j, nil, reject(&j, ev, "job is final")
	}
	var fx []Effect
	var err error
	switch e := ev.(type) {
	case Assigned:
		err = n.assigned(e)
	case NoCandidates:
		if n.State != StatePending {
			return j, nil, reject(&j, ev, "not pending")
		}
		fx = n.fail(FailNoCandidates)
	case Committed:
		err = n.committed(e, p)
	case Tick:
		fx = n.tick(e, p)
	case Revealed:
		fx, err = n.revealed(e)
	case Verified:
		fx, err = n.verified(e, p)
	case Rejected:
		if n.State != StateCommitted && n.State != StateRevealed {
			return j, nil, reject(&j, ev, "nothing to verify")
		}
		n.Dissented = sortedCopy(e.Dissented)
		fx = n.fail(FailVerification)
	case Challenged:
		if n.State != StateVerified || e.At > n.Deadline {
			return j, nil, reject(&j, ev, "not within the challenge window")
		}
		if e.Upheld {
			culprits := n.Agreed
			if e.Culprits != nil {
				culprits = sortedCopy(e.Culprits)
			}
			fx = []Effect{{Kind: EffectSlash, Runners: culprits}}
			if slices.ContainsFunc(culprits, func(a types.Address) bool { return contains(n.Agreed, a) }) {
				fx = append(fx, n.fail(FailChallenged)...)
			}
		}
	default:
		return j, nil, reject(&j, ev, "unknown event")
	}
	if err != nil {
		return j, nil, reject(&j, ev, err.Error())
	}
	return n, fx, nil
}

func (n *Job) assigned(e Assigned) error {
	if n.State != StatePending {
		return errors.New("not pending")
	}
	if len(e.Runners) != int(n.Spec.Verification.Runners) {
		return fmt.Errorf("%d runners assigned, job needs %d", len(e.Runners), n.Spec.Verification.Runners)
	}
	if !slices.Contains(e.Runners, e.Aggregator) {
		return errors.New("aggregator is not a selected runner")
	}
	s := sortedCopy(e.Runners)
	for i := range s {
		if (i > 0 && s[i-1] == s[i]) || contains(n.Excluded, s[i]) {
			return errors.New("duplicate or excluded runner")
		}
	}
	n.State = StateAssigned
	n.Runners = slices.Clone(e.Runners)
	n.Aggregator = e.Aggregator
	n.Deadline = e.At + n.Spec.TimeoutBlocks
	n.Commitments = nil
	return nil
}

func (n *Job) committed(e Committed, p Params) error {
	if n.State != StateAssigned {
		return errors.New("not accepting commitments")
	}
	if e.At > n.Deadline {
		return errors.New("commit deadline passed")
	}
	if !slices.Contains(n.Runners, e.Runner) {
		return errors.New("runner not selected")
	}
	i, found := slices.BinarySearchFunc(n.Commitments, e.Runner, func(c Commitment, a types.Address) int { return bytes.Compare(c.Runner[:], a[:]) })
	if found {
		return errors.New("runner already committed")
	}
	n.Commitments = slices.Insert(n.Commitments, i, Commitment{Runner: e.Runner, Hash: e.Hash, Block: e.At})
	if len(n.Commitments) == len(n.Runners) {
		n.State = StateCommitted
		n.Deadline = e.At + p.AggregatorTimeoutBlocks
	}
	return nil
}

func (n *Job) tick(e Tick, p Params) []Effect {
	if e.At <= n.Deadline {
		return nil
	}
	switch n.State {
	case StateAssigned:
		var late []types.Address
		for _, r := range sortedCopy(n.Runners) {
			if !n.hasCommitted(r) {
				late = append(late, r)
			}
		}
		pen := Effect{Kind: EffectPenalize, Runners: late, Amount: p.TimeoutPenalty}
		if len(n.Commitments) >= n.Spec.Verification.Quorum() {
			// Enough runners committed: proceed with them; the late ones
			// are penalised and drop out of this job.
			n.Runners = n.committers()
			if !contains(n.Runners, n.Aggregator) {
				n.Aggregator = types.Address{} // no aggregator: go straight to individual reveals
				n.State = StateRevealed
				n.Deadline = e.At + p.RevealTimeoutBlocks
				return []Effect{pen}
			}
			n.State = StateCommitted
			n.Deadline = e.At + p.AggregatorTimeoutBlocks
			return []Effect{pen}
		}
		n.Excluded = mergeSorted(n.Excluded, late)
		if n.Retry >= p.MaxRetries {
			fx := []Effect{pen, {Kind: EffectPenalize, Runners: late, Amount: p.SlashThreshold}}
			return append(fx, n.fail(FailTimeout)...)
		}
		n.Retry++
		n.State = StatePending
		n.Runners, n.Commitments, n.Aggregator, n.Deadline = nil, nil, types.Address{}, 0
		return []Effect{pen, {Kind: EffectSelect}}
	case StateCommitted:
		// Aggregator timeout: fall back to individual reveals (§8).
		agg := n.Aggregator
		n.State = StateRevealed
		n.Deadline = e.At + p.RevealTimeoutBlocks
		return []Effect{{Kind: EffectPenalize, Runners: []types.Address{agg}, Amount: p.TimeoutPenalty}}
	case StateRevealed:
		if len(n.Revealed) == 0 {
			late := n.committers()
			return append([]Effect{{Kind: EffectPenalize, Runners: late, Amount: p.TimeoutPenalty}}, n.fail(FailNoReveal)...)
		}
		n.Deadline = e.At // stays Revealed until Verified/Rejected arrives
		return []Effect{{Kind: EffectVerify}}
	case StateVerified:
		n.State = StateFinalized
		return []Effect{{Kind: EffectSettle, Runners: n.Agreed}}
	}
	return nil
}

func (n *Job) revealed(e Revealed) ([]Effect, error) {
	if n.State != StateRevealed || e.At > n.Deadline {
		return nil, errors.New("individual reveals not open")
	}
	if !n.hasCommitted(e.Runner) {
		return nil, errors.New("runner has no commitment")
	}
	if contains(n.Revealed, e.Runner) {
		return nil, errors.New("runner already revealed")
	}
	n.Revealed = mergeSorted(n.Revealed, []types.Address{e.Runner})
	if len(n.Revealed) == len(n.Commitments) {
		return []Effect{{Kind: EffectVerify}}, nil
	}
	return nil, nil
}

func (n *Job) verified(e Verified, p Params) ([]Effect, error) {
	switch n.State {
	case StateCommitted:
		if e.Submitter != n.Aggregator || e.At > n.Deadline {
			return nil, errors.New("only the aggregator may submit before its timeout")
		}
	case StateRevealed:
		if !n.hasCommitted(e.Submitter) {
			return nil, errors.New("submitter has no commitment")
		}
	default:
		return nil, errors.New("not awaiting a result")
	}
	if len(e.Agreed) < n.Spec.Verification.Quorum() {
		return nil, fmt.Errorf("%d agreeing runners below quorum %d", len(e.Agreed), n.Spec.Verification.Quorum())
	}
	all := sortedCopy(append(slices.Clone(e.Agreed), e.Dissented...))
	for i, a := range all {
		if i > 0 && all[i-1] == a {
			return nil, fmt.Errorf("%s listed twice", a)
		}
		if !n.hasCommitted(a) {
			return nil, fmt.Errorf("%s has no commitment", a)
		}
		if n.State == StateRevealed && !contains(n.Revealed, a) {
			return nil, fmt.Errorf("%s did not reveal", a)
		}
	}
	n.State = StateVerified
	n.ResultHash = e.ResultHash
	n.Agreed = sortedCopy(e.Agreed)
	n.Dissented = sortedCopy(e.Dissented)
	n.Deadline = e.At + p.ChallengeWindowBlocks
	return []Effect{{Kind: EffectCallback, Runners: n.Agreed}}, nil
}

func (n *Job) fail(r FailReason) []Effect {
	n.State = StateFailed
	n.Fail = r
	return []Effect{{Kind: EffectRefund, Fail: r}, {Kind: EffectCallback, Fail: r}}
}

func (n *Job) hasCommitted(a types.Address) bool {
	_, ok := slices.BinarySearchFunc(n.Commitments, a, func(c Commitment, a types.Address) int { return bytes.Compare(c.Runner[:], a[:]) })
	return ok
}

func (n *Job) committers() []types.Address {
	out := make([]types.Address, len(n.Commitments))
	for i, c := range n.Commitments {
		out[i] = c.Runner
	}
	return out
}

func (j Job) clone() Job {
	n := j
	n.Runners = slices.Clone(j.Runners)
	n.Commitments = slices.Clone(j.Commitments)
	n.Revealed = slices.Clone(j.Revealed)
	n.Excluded = slices.Clone(j.Excluded)
	n.Agreed = slices.Clone(j.Agreed)
	n.Dissented = slices.Clone(j.Dissented)
	return n
}

func cmpAddr(a, b types.Address) int { return bytes.Compare(a[:], b[:]) }

func sortedCopy(s []types.Address) []types.Address {
	c := slices.Clone(s)
	slices.SortFunc(c, cmpAddr)
	return c
}

func contains(sorted []types.Address, a types.Address) bool {
	_, ok := slices.BinarySearchFunc(sorted, a, cmpAddr)
	return ok
}

func mergeSorted(a, b []types.Address) []types.Address {
	out := append(slices.Clone(a), b...)
	slices.SortFunc(out, cmpAddr)
	return slices.Compact(out)
}
