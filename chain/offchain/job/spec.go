// Package job defines the CIP-2 job specification (seed 004 §1–§2), its
// validation rules, its canonical CBOR encoding and job id derivation, the
// runner rate card and resource usage types shared by selection (price
// filter) and payment, and the job lifecycle of §6 as a pure state machine.
//
// Every type that is hashed or stored encodes itself as canonical CBOR through
// chain/codec (structs are CBOR arrays in field order). Decoders accept only
// canonical input, so decode-then-encode is the identity on accepted bytes.
package job

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/fxamacker/cbor/v2"
)

// Protocol limits that JobSpec validation enforces.
const (
	// MaxInlineResultBytes is the on-chain return data limit (spec 002 §5.4):
	// 64 KiB. max_return_bytes may not exceed it.
	MaxInlineResultBytes = 64 * 1024
	// MaxInputBytes bounds the job input carried in the spec.
	MaxInputBytes = 64 * 1024
	// MaxSchemaBytes bounds a JSON Schema carried in the spec.
	MaxSchemaBytes = 16 * 1024
	// MaxRunners bounds the committee size M.
	MaxRunners = 32
	// MaxPoolIDBytes bounds required_runner_pool.
	MaxPoolIDBytes = 64
	// MaxDomains bounds required_domains; MaxDomainBytes bounds each entry.
	MaxDomains     = 64
	MaxDomainBytes = 253
	// MaxHandlerBytes bounds the callback handler name.
	MaxHandlerBytes = 64
	// MaxFieldPathBytes bounds a field path in verification parameters.
	MaxFieldPathBytes = 256
	// MaxChecks bounds the StructuredMatch pipeline length.
	MaxChecks = 32
	// MaxEmbeddingDim bounds SemanticSimilarity embedding dimension.
	MaxEmbeddingDim = 4096
	// BpsDenominator is the basis-point denominator (100% = 10,000 bps).
	BpsDenominator = 10_000
	// PpmDenominator is the parts-per-million denominator.
	PpmDenominator = 1_000_000
)

// maxU256 is 2^256-1; amounts (U256 in the spec) must not exceed it.
func maxU256() *big.Int {
	return new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
}

// ErrInvalidSpec wraps every JobSpec validation failure; the message names the
// rule. Callers test with errors.Is.
var ErrInvalidSpec = errors.New("invalid job spec")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidSpec, fmt.Sprintf(format, args...))
}

// JobType is the kind of work (§2): Llm, Http, Mcp or Custom.
type JobType uint8

// Job types. Zero is invalid so that a missing field never validates.
const (
	JobTypeLLM    JobType = 1
	JobTypeHTTP   JobType = 2
	JobTypeMCP    JobType = 3
	JobTypeCustom JobType = 4
)

// Valid reports whether t is a defined job type.
func (t JobType) Valid() bool { return t >= JobTypeLLM && t <= JobTypeCustom }

func (t JobType) String() string {
	switch t {
	case JobTypeLLM:
		return "llm"
	case JobTypeHTTP:
		return "http"
	case JobTypeMCP:
		return "mcp"
	case JobTypeCustom:
		return "custom"
	}
	return fmt.Sprintf("jobtype(%d)", uint8(t))
}

// ResourceBounds are the resource limits of one execution (spec 002 "Runner
// Resource Accounting": max tokens, max wall time, max memory; max price is
// JobSpec.MaxPrice).
type ResourceBounds struct {
	_              struct{} `cbor:",toarray"`
	MaxTokens      uint64   `json:"max_tokens"`
	MaxWallTimeMs  uint64   `json:"max_wall_time_ms"`
	MaxMemoryBytes uint64   `json:"max_memory_bytes"`
}

// Usage is what a runner reports having consumed; it has the same dimensions
// as ResourceBounds.
type Usage struct {
	_           struct{} `cbor:",toarray"`
	Tokens      uint64   `json:"tokens"`
	WallTimeMs  uint64   `json:"wall_time_ms"`
	MemoryBytes uint64   `json:"memory_bytes"`
}

// AsUsage is the usage of a job that consumes exactly its bounds; the price
// filter (§4 step 5) prices it.
func (b ResourceBounds) AsUsage() Usage {
	return Usage{Tokens: b.MaxTokens, WallTimeMs: b.MaxWallTimeMs, MemoryBytes: b.MaxMemoryBytes}
}

// Within reports whether u stays within b.
func (u Usage) Within(b ResourceBounds) bool {
	return u.Tokens <= b.MaxTokens && u.WallTimeMs <= b.MaxWallTimeMs && u.MemoryBytes <= b.MaxMemoryBytes
}

// MiB is the memory pricing unit of RateCard.PerMemoryMiB.
const MiB = 1 << 20

// RateCard is a runner's published prices in CBY base units (wei). All fields
// are non-negative integers; nil means zero.
type RateCard struct {
	_            struct{} `cbor:",toarray"`
	Base         *big.Int `json:"base"`           // per job
	PerToken     *big.Int `json:"per_token"`      // per token
	PerWallMs    *big.Int `json:"per_wall_ms"`    // per millisecond of wall time
	PerMemoryMiB *big.Int `json:"per_memory_mib"` // per started MiB of peak memory
}

// Cost is usage × rates, exactly:
//
//	Base + Tokens·PerToken + WallTimeMs·PerWallMs + ceil(MemoryBytes / 2^20)·PerMemoryMiB
//
// It is the single implementation used by the price filter and by payment.
func (r RateCard) Cost(u Usage) *big.Int {
	c := new(big.Int)
	add := func(rate *big.Int, qty uint64) {
		if rate == nil || qty == 0 {
			return
		}
		c.Add(c, new(big.Int).Mul(rate, new(big.Int).SetUint64(qty)))
	}
	if r.Base != nil {
		c.Add(c, r.Base)
	}
	add(r.PerToken, u.Tokens)
	add(r.PerWallMs, u.WallTimeMs)
	mib := u.MemoryBytes / MiB
	if u.MemoryBytes%MiB != 0 {
		mib++
	}
	add(r.PerMemoryMiB, mib)
	return c
}

// Validate checks that every rate is non-negative and at most 2^256-1.
func (r RateCard) Validate() error {
	for name, v := range map[string]*big.Int{"base": r.Base, "per_token": r.PerToken, "per_wall_ms": r.PerWallMs, "per_memory_mib": r.PerMemoryMiB} {
		if v != nil && (v.Sign() < 0 || v.Cmp(maxU256()) > 0) {
			return fmt.Errorf("rate card: %s out of range", name)
		}
	}
	return nil
}

// DataFormatKind is the expected data structure of a result (§1).
type DataFormatKind uint8

// Data formats.
const (
	FormatBinary DataFormatKind = 1 // opaque bytes
	FormatText   DataFormatKind = 2 // UTF-8 text
	FormatJSON   DataFormatKind = 3 // JSON; Schema optionally constrains it
)

// ResultSchema is the mandatory result schema of §1.
type ResultSchema struct {
	_                   struct{}       `cbor:",toarray"`
	MaxReturnBytes      uint32         `json:"max_return_bytes"`
	ExpectedExecutionMs uint64         `json:"expected_execution_ms"`
	DataFormat          DataFormatKind `json:"data_format"`
	// JSONSchema is a JSON Schema document (draft 2020-12 unless it says
	// otherwise) the result must satisfy; only with FormatJSON. Empty: none.
	JSONSchema []byte `json:"json_schema,omitempty"`
}

// VerificationMode is the trust model of §9.
type VerificationMode uint8

// Verification modes.
const (
	ModeNone               VerificationMode = 1
	ModeEconomicBond       VerificationMode = 2
	ModeMajorityVote       VerificationMode = 3
	ModeStructuredMatch    VerificationMode = 4
	ModeDeterministic      VerificationMode = 5
	ModeSemanticSimilarity VerificationMode = 6
)

func (m VerificationMode) String() string {
	switch m {
	case ModeNone:
		return "none"
	case ModeEconomicBond:
		return "economic_bond"
	case ModeMajorityVote:
		return "majority_vote"
	case ModeStructuredMatch:
		return "structured_match"
	case ModeDeterministic:
		return "deterministic"
	case ModeSemanticSimilarity:
		return "semantic_similarity"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// CheckKind is one step of a StructuredMatch pipeline.
type CheckKind uint8

// StructuredMatch checks.
const (
	// CheckJSONSchema: each result must satisfy Schema (per result).
	CheckJSONSchema CheckKind = 1
	// CheckFieldMatch: the value at Field must be equal (canonical JSON)
	// across the agreeing group.
	CheckFieldMatch CheckKind = 2
	// CheckNumericTolerance: the number at Field must be within Tolerance
	// (absolute, exact decimal) of the group reference.
	CheckNumericTolerance CheckKind = 3
	// CheckNumericRange: the number at Field must lie in [Min, Max] (per
	// result; exact decimals, either bound may be empty).
	CheckNumericRange CheckKind = 4
	// CheckFieldMajority: a strict majority of the valid results must agree
	// on the value at Field; runners in the minority dissent.
	CheckFieldMajority CheckKind = 5
)

// Check is one StructuredMatch step. Numbers are exact decimal strings
// ("0.01", "-3", "1e-3" is not accepted); they are compared as rationals.
type Check struct {
	_         struct{}  `cbor:",toarray"`
	Kind      CheckKind `json:"kind"`
	Field     string    `json:"field,omitempty"`     // JSON Pointer (RFC 6901), e.g. "/label"
	Schema    []byte    `json:"schema,omitempty"`    // CheckJSONSchema
	Tolerance string    `json:"tolerance,omitempty"` // CheckNumericTolerance
	Min       string    `json:"min,omitempty"`       // CheckNumericRange
	Max       string    `json:"max,omitempty"`       // CheckNumericRange
}

// VerificationConfig selects the mode and its parameters (§9).
type VerificationConfig struct {
	_    struct{}         `cbor:",toarray"`
	Mode VerificationMode `json:"mode"`
	// Runners is the committee size M.
	Runners uint8 `json:"runners"`
	// QuorumBps: the agreeing group must hold at least ceil(M·QuorumBps/10^4)
	// runners. 0 selects the mode default (see Quorum).
	QuorumBps uint16 `json:"quorum_bps"`
	// VoteField is the JSON Pointer voted on in MajorityVote.
	VoteField string `json:"vote_field,omitempty"`
	// Checks is the StructuredMatch pipeline.
	Checks []Check `json:"checks,omitempty"`
	// SimilarityPpm is the SemanticSimilarity cosine threshold in parts per
	// million (1..10^6).
	SimilarityPpm uint32 `json:"similarity_ppm,omitempty"`
	// EmbeddingDim is the embedding dimension reveals must carry.
	EmbeddingDim uint16 `json:"embedding_dim,omitempty"`
}

// MinRunners is the minimum committee size of each mode (§9 table).
func (m VerificationMode) MinRunners() int {
	switch m {
	case ModeNone, ModeEconomicBond:
		return 1
	case ModeStructuredMatch, ModeDeterministic:
		return 2
	case ModeMajorityVote, ModeSemanticSimilarity:
		return 3
	}
	return 0
}

// Quorum is the number of agreeing runners a mode needs out of the committee:
// ceil(M·QuorumBps/10^4) when QuorumBps > 0, otherwise the default — 1 for
// None/EconomicBond, M (unanimity, "byte-identical match across all results")
// for Deterministic, and a strict majority floor(M/2)+1 for the others.
func (v VerificationConfig) Quorum() int {
	m := int(v.Runners)
	if v.QuorumBps > 0 {
		q := (m*int(v.QuorumBps) + BpsDenominator - 1) / BpsDenominator
		if q < 1 {
			q = 1
		}
		return q
	}
	switch v.Mode {
	case ModeNone, ModeEconomicBond:
		return 1
	case ModeDeterministic:
		return m
	}
	return m/2 + 1
}

// CallbackInfo names the actor and handler that receive the result (§2).
type CallbackInfo struct {
	_       struct{}      `cbor:",toarray"`
	Actor   types.Address `json:"actor"`
	Handler string        `json:"handler"`
}

// JobSpec is the job specification of seed 004 §2 plus the result schema of
// §1, the TEE flag, the HTTP domain requirement (spec 002 "External Data") and
// the pinned toolchain digest (spec 002 §5.4).
type JobSpec struct {
	_                  struct{}           `cbor:",toarray"`
	JobID              types.Hash         `json:"job_id"`
	JobType            JobType            `json:"job_type"`
	Bounds             ResourceBounds     `json:"bounds"`
	Verification       VerificationConfig `json:"verification"`
	MaxPrice           *big.Int           `json:"max_price"`
	Tip                *big.Int           `json:"tip"`
	TimeoutBlocks      uint64             `json:"timeout_blocks"`
	Callback           CallbackInfo       `json:"callback"`
	Submitter          types.Address      `json:"submitter"`
	SubmittedAt        uint64             `json:"submitted_at"`
	RequiredRunnerPool []byte             `json:"required_runner_pool,omitempty"` // nil = None
	ResultSchema       ResultSchema       `json:"result_schema"`
	TEERequired        bool               `json:"tee_required"`
	RequiredDomains    []string           `json:"required_domains,omitempty"` // sorted, unique
	ToolchainDigest    types.Hash         `json:"toolchain_digest"`
	Input              []byte             `json:"input,omitempty"`
	// ModelID names a Model Registry model (spec 002 §5.1) an LLM job
	// must run on: only runners declaring it are selected. Optional
	// trailing element: encoded only when non-zero, so specs without it
	// keep their 16-element form (and their job ids).
	ModelID types.Hash `json:"model_id,omitzero"`
	// Volumes are the CBFS volumes the job reads (inputs) and writes
	// (outputs), see volumes.go. Optional trailing element: encoded only
	// when non-empty, so specs without volumes keep their bytes and ids.
	Volumes []VolumeRef `json:"volumes,omitempty"`
}

// jobSpecV1 is JobSpec without the optional model id; jobSpecV2 with it.
type jobSpecV1 struct {
	_                  struct{} `cbor:",toarray"`
	JobID              types.Hash
	JobType            JobType
	Bounds             ResourceBounds
	Verification       VerificationConfig
	MaxPrice           *big.Int
	Tip                *big.Int
	TimeoutBlocks      uint64
	Callback           CallbackInfo
	Submitter          types.Address
	SubmittedAt        uint64
	RequiredRunnerPool []byte
	ResultSchema       ResultSchema
	TEERequired        bool
	RequiredDomains    []string
	ToolchainDigest    types.Hash
	Input              []byte
}

type jobSpecV2 struct {
	_                  struct{} `cbor:",toarray"`
	JobID              types.Hash
	JobType            JobType
	Bounds             ResourceBounds
	Verification       VerificationConfig
	MaxPrice           *big.Int
	Tip                *big.Int
	TimeoutBlocks      uint64
	Callback           CallbackInfo
	Submitter          types.Address
	SubmittedAt        uint64
	RequiredRunnerPool []byte
	ResultSchema       ResultSchema
	TEERequired        bool
	RequiredDomains    []string
	ToolchainDigest    types.Hash
	Input              []byte
	ModelID            types.Hash
}

type jobSpecV3 struct {
	_                  struct{} `cbor:",toarray"`
	JobID              types.Hash
	JobType            JobType
	Bounds             ResourceBounds
	Verification       VerificationConfig
	MaxPrice           *big.Int
	Tip                *big.Int
	TimeoutBlocks      uint64
	Callback           CallbackInfo
	Submitter          types.Address
	SubmittedAt        uint64
	RequiredRunnerPool []byte
	ResultSchema       ResultSchema
	TEERequired        bool
	RequiredDomains    []string
	ToolchainDigest    types.Hash
	Input              []byte
	ModelID            types.Hash
	Volumes            []VolumeRef
}

// MarshalCBOR writes the 16-element form without a model id or volumes, the
// 17-element form with a model id and no volumes, and the 18-element form
// (model id zero or not) with volumes.
func (s JobSpec) MarshalCBOR() ([]byte, error) {
	v1 := jobSpecV1{JobID: s.JobID, JobType: s.JobType, Bounds: s.Bounds, Verification: s.Verification, MaxPrice: s.MaxPrice,
		Tip: s.Tip, TimeoutBlocks: s.TimeoutBlocks, Callback: s.Callback, Submitter: s.Submitter, SubmittedAt: s.SubmittedAt,
		RequiredRunnerPool: s.RequiredRunnerPool, ResultSchema: s.ResultSchema, TEERequired: s.TEERequired,
		RequiredDomains: s.RequiredDomains, ToolchainDigest: s.ToolchainDigest, Input: s.Input}
	if len(s.Volumes) > 0 {
		return codec.Marshal(jobSpecV3{JobID: v1.JobID, JobType: v1.JobType, Bounds: v1.Bounds, Verification: v1.Verification,
			MaxPrice: v1.MaxPrice, Tip: v1.Tip, TimeoutBlocks: v1.TimeoutBlocks, Callback: v1.Callback, Submitter: v1.Submitter,
			SubmittedAt: v1.SubmittedAt, RequiredRunnerPool: v1.RequiredRunnerPool, ResultSchema: v1.ResultSchema,
			TEERequired: v1.TEERequired, RequiredDomains: v1.RequiredDomains, ToolchainDigest: v1.ToolchainDigest, Input: v1.Input,
			ModelID: s.ModelID, Volumes: s.Volumes})
	}
	if s.ModelID == (types.Hash{}) {
		return codec.Marshal(v1)
	}
	return codec.Marshal(jobSpecV2{JobID: v1.JobID, JobType: v1.JobType, Bounds: v1.Bounds, Verification: v1.Verification,
		MaxPrice: v1.MaxPrice, Tip: v1.Tip, TimeoutBlocks: v1.TimeoutBlocks, Callback: v1.Callback, Submitter: v1.Submitter,
		SubmittedAt: v1.SubmittedAt, RequiredRunnerPool: v1.RequiredRunnerPool, ResultSchema: v1.ResultSchema,
		TEERequired: v1.TEERequired, RequiredDomains: v1.RequiredDomains, ToolchainDigest: v1.ToolchainDigest, Input: v1.Input,
		ModelID: s.ModelID})
}

// UnmarshalCBOR accepts both forms; an explicit zero model id is not
// canonical (the encoder omits it) and is refused.
func (s *JobSpec) UnmarshalCBOR(b []byte) error {
	var head []cbor.RawMessage
	if err := codec.Unmarshal(b, &head); err != nil {
		return err
	}
	var v jobSpecV3
	switch len(head) {
	case 16:
		var v1 jobSpecV1
		if err := codec.Unmarshal(b, &v1); err != nil {
			return err
		}
		v = jobSpecV3{JobID: v1.JobID, JobType: v1.JobType, Bounds: v1.Bounds, Verification: v1.Verification,
			MaxPrice: v1.MaxPrice, Tip: v1.Tip, TimeoutBlocks: v1.TimeoutBlocks, Callback: v1.Callback, Submitter: v1.Submitter,
			SubmittedAt: v1.SubmittedAt, RequiredRunnerPool: v1.RequiredRunnerPool, ResultSchema: v1.ResultSchema,
			TEERequired: v1.TEERequired, RequiredDomains: v1.RequiredDomains, ToolchainDigest: v1.ToolchainDigest, Input: v1.Input}
	case 17:
		var v2 jobSpecV2
		if err := codec.Unmarshal(b, &v2); err != nil {
			return err
		}
		if v2.ModelID == (types.Hash{}) {
			return fmt.Errorf("%w: job spec: a zero model_id must be omitted", codec.ErrNonCanonical)
		}
		v = jobSpecV3{JobID: v2.JobID, JobType: v2.JobType, Bounds: v2.Bounds, Verification: v2.Verification,
			MaxPrice: v2.MaxPrice, Tip: v2.Tip, TimeoutBlocks: v2.TimeoutBlocks, Callback: v2.Callback, Submitter: v2.Submitter,
			SubmittedAt: v2.SubmittedAt, RequiredRunnerPool: v2.RequiredRunnerPool, ResultSchema: v2.ResultSchema,
			TEERequired: v2.TEERequired, RequiredDomains: v2.RequiredDomains, ToolchainDigest: v2.ToolchainDigest, Input: v2.Input,
			ModelID: v2.ModelID}
	case 18:
		if err := codec.Unmarshal(b, &v); err != nil {
			return err
		}
		if len(v.Volumes) == 0 {
			return fmt.Errorf("%w: job spec: empty volumes must be omitted", codec.ErrNonCanonical)
		}
	default:
		return fmt.Errorf("job spec: %d elements, want 16, 17 or 18", len(head))
	}
	*s = JobSpec{JobID: v.JobID, JobType: v.JobType, Bounds: v.Bounds, Verification: v.Verification, MaxPrice: v.MaxPrice,
		Tip: v.Tip, TimeoutBlocks: v.TimeoutBlocks, Callback: v.Callback, Submitter: v.Submitter, SubmittedAt: v.SubmittedAt,
		RequiredRunnerPool: v.RequiredRunnerPool, ResultSchema: v.ResultSchema, TEERequired: v.TEERequired,
		RequiredDomains: v.RequiredDomains, ToolchainDigest: v.ToolchainDigest, Input: v.Input, ModelID: v.ModelID,
		Volumes: v.Volumes}
	return nil
}

// Escrow is the amount the dispatcher holds for the job: max_price + tip.
func (s *JobSpec) Escrow() *big.Int {
	e := new(big.Int)
	if s.MaxPrice != nil {
		e.Add(e, s.MaxPrice)
	}
	if s.Tip != nil {
		e.Add(e, s.Tip)
	}
	return e
}

// Encode returns the canonical CBOR encoding of s.
func (s *JobSpec) Encode() ([]byte, error) {
	b, err := codec.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("job spec: %w", err)
	}
	return b, nil
}

// DecodeJobSpec decodes canonical CBOR; it does not validate (call Validate).
func DecodeJobSpec(data []byte) (*JobSpec, error) {
	var s JobSpec
	if err := codec.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("job spec: %w", err)
	}
	return &s, nil
}

// JobIDDomain is the domain separator of job id derivation.
const JobIDDomain = "cowboy-job-id-v1:"

// DeriveID computes the job id:
//
//	job_id = Keccak256("cowboy-job-id-v1:" || CBOR(spec with job_id = 0^32) || nonce_le8)
//
// nonce is a dispatcher-maintained per-submitter counter, so two identical
// specs submitted by the same actor in the same block still get distinct ids.
// The spec's own JobID is ignored (treated as zero).
func (s *JobSpec) DeriveID(nonce uint64) (types.Hash, error) {
	c := *s
	c.JobID = types.Hash{}
	enc, err := c.Encode()
	if err != nil {
		return types.Hash{}, err
	}
	return types.Keccak256([]byte(JobIDDomain), enc, le8(nonce)), nil
}

func le8(v uint64) []byte {
	var b [8]byte
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
	return b[:]
}
