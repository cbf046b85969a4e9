// Package verify implements CIP-2 result checking (seed 004 §8–§9, spec 002
// "LLM Result Verification"): commitments, Ed25519 result signatures over a
// domain-separated message, reveal checking, result size limits and the six
// verification modes. Every mode returns the accepted result and which
// runners agreed, dissented or never revealed — the inputs of payment and
// reputation/slashing.
//
// All arithmetic is exact: JSON numbers are compared as rationals (math/big),
// and cosine similarity is decided with integer arithmetic on fixed-point
// embeddings (see SemanticSimilarity). No float decides an outcome.
package verify

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// SignatureDomain prefixes every result signing message.
const SignatureDomain = "cowboy-result-v1:"

// Errors. A reveal that fails ErrBadReveal makes the whole submission invalid
// (the aggregator forwarded something its runner never committed to); a
// result that merely fails a content rule makes only its runner dissent.
var (
	ErrBadReveal     = errors.New("verify: reveal does not match its commitment or signature")
	ErrBadSubmission = errors.New("verify: malformed submission")
	ErrNoResult      = errors.New("verify: no result reached the quorum")
	ErrBadSchema     = errors.New("verify: invalid JSON Schema in the job spec")
)

// Commitment is the value a runner commits on-chain (§8 step 1):
//
//	Keccak256(result_bytes || runner_sig)
//
// runner_sig is always 64 bytes, so the concatenation is unambiguous; the
// signature binds job id, runner and embedding (see SigningMessage).
func Commitment(result, sig []byte) types.Hash {
	return types.Keccak256(result, sig)
}

// EmbeddingBytes is the canonical byte form of an embedding: each element as
// a 4-byte big-endian two's-complement int32, in order.
func EmbeddingBytes(e []int32) []byte {
	b := make([]byte, 4*len(e))
	for i, v := range e {
		binary.BigEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

// SigningMessage is what a runner signs with Ed25519 (pure Ed25519, no
// pre-hash beyond what is shown):
//
//	"cowboy-result-v1:" || job_id(32) || runner(20) || Keccak256(result)(32) || Keccak256(EmbeddingBytes(embedding))(32)
//
// The job id and runner address stop replay across jobs and copying of
// another runner's signature; the embedding hash binds SemanticSimilarity
// embeddings (empty embedding: Keccak256 of the empty string).
func SigningMessage(jobID types.Hash, runner types.Address, result []byte, embedding []int32) []byte {
	rh := types.Keccak256(result)
	eh := types.Keccak256(EmbeddingBytes(embedding))
	m := make([]byte, 0, len(SignatureDomain)+32+20+32+32)
	m = append(m, SignatureDomain...)
	m = append(m, jobID[:]...)
	m = append(m, runner[:]...)
	m = append(m, rh[:]...)
	return append(m, eh[:]...)
}

// Sign is the runner daemon's side: it signs SigningMessage with key. The
// reveal carries no usage report; settlement then prices the job's bounds.
func Sign(key ed25519.PrivateKey, jobID types.Hash, runner types.Address, result []byte, embedding []int32) []byte {
	return ed25519.Sign(key, SigningMessage(jobID, runner, result, embedding))
}

// ReportDomain prefixes the signing message of a reveal with a usage report.
const ReportDomain = "cowboy-result-v2:"

// Faults a runner may report instead of a result (spec 002 "Payment and
// Failure Handling"); they select the payment row when the job produces no
// accepted result and a quorum of the committee reports the same fault.
const (
	FaultNone          uint8 = 0
	FaultImpossibleJob uint8 = 3 // bounds too tight: paid pro rata by progress
	FaultActorFault    uint8 = 4 // malformed input: minimum fee
	FaultExternalFault uint8 = 5 // API down, model unavailable: pro rata by progress
)

// Report is a runner's usage report, signed with its result (spec 002
// "Runner Resource Accounting"): actual_payment = min(usage × rates,
// max_price). Fault and ProgressBps describe a run that could not complete.
type Report struct {
	_           struct{}  `cbor:",toarray"`
	Usage       job.Usage `json:"usage"`
	Fault       uint8     `json:"fault,omitempty"`
	ProgressBps uint16    `json:"progress_bps,omitempty"`
}

// Valid reports whether the fault code and progress are in range.
func (r *Report) Valid() bool {
	switch r.Fault {
	case FaultNone:
		return r.ProgressBps == 0
	case FaultImpossibleJob, FaultActorFault, FaultExternalFault:
		return r.ProgressBps <= 10_000
	}
	return false
}

// SigningMessageReport is the signing message of a reveal with a report:
//
//	"cowboy-result-v2:" || job_id(32) || runner(20) || Keccak256(result)(32) || Keccak256(EmbeddingBytes(embedding))(32)
//	  || le8(tokens) || le8(wall_time_ms) || le8(memory_bytes) || fault(1) || le2(progress_bps)
//
// The distinct domain keeps it apart from the report-less v1 message.
func SigningMessageReport(jobID types.Hash, runner types.Address, result []byte, embedding []int32, rep *Report) []byte {
	rh := types.Keccak256(result)
	eh := types.Keccak256(EmbeddingBytes(embedding))
	m := make([]byte, 0, len(ReportDomain)+32+20+32+32+27)
	m = append(m, ReportDomain...)
	m = append(m, jobID[:]...)
	m = append(m, runner[:]...)
	m = append(m, rh[:]...)
	m = append(m, eh[:]...)
	m = binary.LittleEndian.AppendUint64(m, rep.Usage.Tokens)
	m = binary.LittleEndian.AppendUint64(m, rep.Usage.WallTimeMs)
	m = binary.LittleEndian.AppendUint64(m, rep.Usage.MemoryBytes)
	m = append(m, rep.Fault)
	return binary.LittleEndian.AppendUint16(m, rep.ProgressBps)
}

// SignReport signs a result together with the runner's usage report; put
// the same report in Reveal.Report.
func SignReport(key ed25519.PrivateKey, jobID types.Hash, runner types.Address, result []byte, embedding []int32, rep *Report) []byte {
	return ed25519.Sign(key, SigningMessageReport(jobID, runner, result, embedding, rep))
}

// SigningMessageFor is the message r's signature must cover: v2 with its
// report, v1 without.
func SigningMessageFor(jobID types.Hash, r *Reveal) []byte {
	if r.Report != nil {
		return SigningMessageReport(jobID, r.Runner, r.Result, r.Embedding, r.Report)
	}
	return SigningMessage(jobID, r.Runner, r.Result, r.Embedding)
}

// Reveal is one runner's revealed result (§8 step 3).
type Reveal struct {
	_         struct{}      `cbor:",toarray"`
	Runner    types.Address `json:"runner"`
	Result    []byte        `json:"result"`
	Signature []byte        `json:"signature"`
	Embedding []int32       `json:"embedding,omitempty"` // SemanticSimilarity only
	Report    *Report       `json:"report,omitempty"`    // usage report (null: none; bounds are priced)
}

// VerifiedResult is the aggregator's claim (§8 step 3); the Result Verifier
// recomputes it from the reveals and accepts the submission only if equal.
type VerifiedResult struct {
	_          struct{}        `cbor:",toarray"`
	JobID      types.Hash      `json:"job_id"`
	ResultHash types.Hash      `json:"result_hash"` // Keccak256(accepted result bytes)
	Agreed     []types.Address `json:"agreed"`      // sorted
	Dissented  []types.Address `json:"dissented"`   // sorted
}

// Submission is submit_verified_result(job_id, VerifiedResult, reveals[]).
type Submission struct {
	_       struct{}       `cbor:",toarray"`
	Claim   VerifiedResult `json:"claim"`
	Reveals []Reveal       `json:"reveals"` // sorted by runner
}

// Encode returns the canonical CBOR encoding of s.
func (s *Submission) Encode() ([]byte, error) {
	b, err := codec.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("verify: submission: %w", err)
	}
	return b, nil
}

// DecodeSubmission decodes canonical CBOR.
func DecodeSubmission(data []byte) (*Submission, error) {
	var s Submission
	if err := codec.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("verify: submission: %w", err)
	}
	return &s, nil
}

// Encode returns the canonical CBOR encoding of r (individual reveals).
func (r *Reveal) Encode() ([]byte, error) {
	b, err := codec.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("verify: reveal: %w", err)
	}
	return b, nil
}

// DecodeReveal decodes canonical CBOR.
func DecodeReveal(data []byte) (*Reveal, error) {
	var r Reveal
	if err := codec.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("verify: reveal: %w", err)
	}
	return &r, nil
}

// CheckReveal checks a reveal against its runner's commitment and public key:
// Commitment(result, sig) == commitment and sig is a valid Ed25519 signature
// by key over SigningMessage. Content rules are not checked here.
func CheckReveal(jobID types.Hash, r *Reveal, commitment types.Hash, key ed25519.PublicKey) error {
	if len(r.Signature) != ed25519.SignatureSize {
		return fmt.Errorf("%w: runner %s: signature is %d bytes", ErrBadReveal, r.Runner, len(r.Signature))
	}
	if Commitment(r.Result, r.Signature) != commitment {
		return fmt.Errorf("%w: runner %s: commitment mismatch", ErrBadReveal, r.Runner)
	}
	if r.Report != nil && !r.Report.Valid() {
		return fmt.Errorf("%w: runner %s: invalid usage report", ErrBadReveal, r.Runner)
	}
	if len(key) != ed25519.PublicKeySize || !ed25519.Verify(key, SigningMessageFor(jobID, r), r.Signature) {
		return fmt.Errorf("%w: runner %s: bad signature", ErrBadReveal, r.Runner)
	}
	return nil
}

// MaxResultBytes is the result size limit of a job: min(64 KiB, max_return_bytes).
func MaxResultBytes(spec *job.JobSpec) int {
	return min(job.MaxInlineResultBytes, int(spec.ResultSchema.MaxReturnBytes))
}

func sortReveals(rs []Reveal) ([]Reveal, error) {
	out := slices.Clone(rs)
	slices.SortFunc(out, func(a, b Reveal) int { return bytes.Compare(a.Runner[:], b.Runner[:]) })
	for i := 1; i < len(out); i++ {
		if out[i-1].Runner == out[i].Runner {
			return nil, fmt.Errorf("%w: two reveals from %s", ErrBadSubmission, out[i].Runner)
		}
	}
	return out, nil
}
