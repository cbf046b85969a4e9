package job

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Validate enforces every JobSpec rule; the first violation is returned,
// wrapping ErrInvalidSpec.
func (s *JobSpec) Validate() error {
	if !s.JobType.Valid() {
		return invalid("job_type %d is not Llm, Http, Mcp or Custom", s.JobType)
	}
	// §3 step 1: bounds ≠ 0.
	if s.Bounds.MaxWallTimeMs == 0 {
		return invalid("bounds.max_wall_time_ms must be > 0")
	}
	if s.Bounds.MaxMemoryBytes == 0 {
		return invalid("bounds.max_memory_bytes must be > 0")
	}
	if s.JobType == JobTypeLLM && s.Bounds.MaxTokens == 0 {
		return invalid("bounds.max_tokens must be > 0 for llm jobs")
	}
	// §3 step 1: max_price > 0.
	if s.MaxPrice == nil || s.MaxPrice.Sign() <= 0 {
		return invalid("max_price must be > 0")
	}
	if s.MaxPrice.Cmp(maxU256()) > 0 {
		return invalid("max_price exceeds 2^256-1")
	}
	if s.Tip == nil || s.Tip.Sign() < 0 {
		return invalid("tip must be present and >= 0")
	}
	if s.Tip.Cmp(maxU256()) > 0 || s.Escrow().Cmp(maxU256()) > 0 {
		return invalid("max_price + tip exceeds 2^256-1")
	}
	// §3 step 1: timeout > 0.
	if s.TimeoutBlocks == 0 {
		return invalid("timeout_blocks must be > 0")
	}
	if s.Callback.Handler == "" || len(s.Callback.Handler) > MaxHandlerBytes {
		return invalid("callback.handler must be 1..%d bytes", MaxHandlerBytes)
	}
	if s.Callback.Actor.IsZero() {
		return invalid("callback.actor must be set")
	}
	if s.Submitter.IsZero() {
		return invalid("submitter must be set")
	}
	if s.RequiredRunnerPool != nil && (len(s.RequiredRunnerPool) == 0 || len(s.RequiredRunnerPool) > MaxPoolIDBytes) {
		return invalid("required_runner_pool must be 1..%d bytes when present", MaxPoolIDBytes)
	}
	if err := s.validateSchema(); err != nil {
		return err
	}
	if err := s.validateDomains(); err != nil {
		return err
	}
	if len(s.Input) > MaxInputBytes {
		return invalid("input is %d bytes, limit %d", len(s.Input), MaxInputBytes)
	}
	if s.ModelID != (types.Hash{}) && s.JobType != JobTypeLLM {
		return invalid("model_id only applies to llm jobs")
	}
	if err := s.validateVolumes(); err != nil {
		return err
	}
	return s.validateVerification()
}

func (s *JobSpec) validateSchema() error {
	r := s.ResultSchema
	if r.MaxReturnBytes == 0 || r.MaxReturnBytes > MaxInlineResultBytes {
		return invalid("result_schema.max_return_bytes must be 1..%d", MaxInlineResultBytes)
	}
	if r.ExpectedExecutionMs == 0 {
		return invalid("result_schema.expected_execution_ms must be > 0")
	}
	if r.ExpectedExecutionMs > s.Bounds.MaxWallTimeMs {
		return invalid("result_schema.expected_execution_ms exceeds bounds.max_wall_time_ms")
	}
	switch r.DataFormat {
	case FormatBinary, FormatText:
		if len(r.JSONSchema) != 0 {
			return invalid("result_schema.json_schema is only allowed with the json data format")
		}
	case FormatJSON:
		if len(r.JSONSchema) > MaxSchemaBytes {
			return invalid("result_schema.json_schema is %d bytes, limit %d", len(r.JSONSchema), MaxSchemaBytes)
		}
	default:
		return invalid("result_schema.data_format %d is not binary, text or json", r.DataFormat)
	}
	return nil
}

func (s *JobSpec) validateDomains() error {
	if len(s.RequiredDomains) > MaxDomains {
		return invalid("required_domains has %d entries, limit %d", len(s.RequiredDomains), MaxDomains)
	}
	if len(s.RequiredDomains) > 0 && s.JobType != JobTypeHTTP && s.JobType != JobTypeMCP {
		return invalid("required_domains only apply to http and mcp jobs")
	}
	for i, d := range s.RequiredDomains {
		if d == "" || len(d) > MaxDomainBytes {
			return invalid("required_domains[%d] must be 1..%d bytes", i, MaxDomainBytes)
		}
		if i > 0 && s.RequiredDomains[i-1] >= d {
			return invalid("required_domains must be sorted and unique")
		}
	}
	return nil
}

func (s *JobSpec) validateVerification() error {
	v := s.Verification
	m := int(v.Runners)
	if v.Mode.MinRunners() == 0 {
		return invalid("verification.mode %d is unknown", v.Mode)
	}
	if m < v.Mode.MinRunners() || m > MaxRunners {
		return invalid("verification.runners %d out of range %d..%d for %s", m, v.Mode.MinRunners(), MaxRunners, v.Mode)
	}
	if (v.Mode == ModeNone || v.Mode == ModeEconomicBond) && m != 1 {
		return invalid("%s uses exactly 1 runner", v.Mode)
	}
	if v.QuorumBps > BpsDenominator {
		return invalid("verification.quorum_bps must be <= 10000")
	}
	if v.Mode != ModeMajorityVote && v.VoteField != "" {
		return invalid("verification.vote_field only applies to majority_vote")
	}
	if v.Mode != ModeStructuredMatch && len(v.Checks) != 0 {
		return invalid("verification.checks only apply to structured_match")
	}
	if v.Mode != ModeSemanticSimilarity && (v.SimilarityPpm != 0 || v.EmbeddingDim != 0) {
		return invalid("verification.similarity_ppm/embedding_dim only apply to semantic_similarity")
	}
	switch v.Mode {
	case ModeMajorityVote:
		if err := validPointer(v.VoteField); err != nil {
			return invalid("verification.vote_field: %v", err)
		}
		if s.ResultSchema.DataFormat != FormatJSON {
			return invalid("majority_vote requires the json data format")
		}
	case ModeStructuredMatch:
		if s.ResultSchema.DataFormat != FormatJSON {
			return invalid("structured_match requires the json data format")
		}
		if len(v.Checks) == 0 || len(v.Checks) > MaxChecks {
			return invalid("structured_match needs 1..%d checks", MaxChecks)
		}
		for i, c := range v.Checks {
			if err := c.validate(); err != nil {
				return invalid("verification.checks[%d]: %v", i, err)
			}
		}
	case ModeDeterministic:
		if !s.TEERequired {
			return invalid("deterministic mode requires tee_required")
		}
	case ModeSemanticSimilarity:
		if v.SimilarityPpm == 0 || v.SimilarityPpm > PpmDenominator {
			return invalid("verification.similarity_ppm must be 1..1000000")
		}
		if v.EmbeddingDim == 0 || int(v.EmbeddingDim) > MaxEmbeddingDim {
			return invalid("verification.embedding_dim must be 1..%d", MaxEmbeddingDim)
		}
	}
	if v.Quorum() > m {
		return invalid("quorum %d exceeds runners %d", v.Quorum(), m)
	}
	return nil
}

func (c Check) validate() error {
	needField := c.Kind != CheckJSONSchema
	if needField {
		if err := validPointer(c.Field); err != nil {
			return fmt.Errorf("field: %w", err)
		}
	} else if c.Field != "" {
		return errors.New("field not allowed for json_schema")
	}
	if (c.Kind == CheckJSONSchema) != (len(c.Schema) > 0) {
		return errors.New("schema is required for, and only for, json_schema")
	}
	if len(c.Schema) > MaxSchemaBytes {
		return fmt.Errorf("schema exceeds %d bytes", MaxSchemaBytes)
	}
	if (c.Kind == CheckNumericTolerance) != (c.Tolerance != "") {
		return errors.New("tolerance is required for, and only for, numeric_tolerance")
	}
	if c.Kind == CheckNumericTolerance {
		t, err := ParseDecimal(c.Tolerance)
		if err != nil || t.Sign() < 0 {
			return errors.New("tolerance must be a non-negative decimal")
		}
	}
	if c.Kind != CheckNumericRange && (c.Min != "" || c.Max != "") {
		return errors.New("min/max only apply to numeric_range")
	}
	if c.Kind == CheckNumericRange {
		if c.Min == "" && c.Max == "" {
			return errors.New("numeric_range needs min or max")
		}
		var lo, hi *big.Rat
		var err error
		if c.Min != "" {
			if lo, err = ParseDecimal(c.Min); err != nil {
				return fmt.Errorf("min: %w", err)
			}
		}
		if c.Max != "" {
			if hi, err = ParseDecimal(c.Max); err != nil {
				return fmt.Errorf("max: %w", err)
			}
		}
		if lo != nil && hi != nil && lo.Cmp(hi) > 0 {
			return errors.New("min exceeds max")
		}
	}
	switch c.Kind {
	case CheckJSONSchema, CheckFieldMatch, CheckNumericTolerance, CheckNumericRange, CheckFieldMajority:
		return nil
	}
	return fmt.Errorf("unknown check kind %d", c.Kind)
}

// validPointer accepts a non-empty RFC 6901 JSON Pointer ("/a/b", "~0", "~1").
func validPointer(p string) error {
	if p == "" || p[0] != '/' || len(p) > MaxFieldPathBytes {
		return fmt.Errorf("%q is not a JSON Pointer of 2..%d bytes starting with '/'", p, MaxFieldPathBytes)
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return fmt.Errorf("%q has a bad escape", p)
		}
	}
	return nil
}

// ParseDecimal parses an exact decimal "-?digits(.digits)?" into a rational.
// Exponents, hex, "+", "Inf" and "NaN" are rejected: every accepted string has
// exactly one value and no float is ever involved.
func ParseDecimal(s string) (*big.Rat, error) {
	if len(s) == 0 || len(s) > 100 {
		return nil, fmt.Errorf("decimal %q: empty or longer than 100 bytes", s)
	}
	i := 0
	if s[0] == '-' {
		i = 1
	}
	digits, dot := 0, false
	for j := i; j < len(s); j++ {
		switch {
		case s[j] >= '0' && s[j] <= '9':
			digits++
		case s[j] == '.' && !dot && digits > 0 && j+1 < len(s):
			dot = true
		default:
			return nil, fmt.Errorf("decimal %q: not -?digits(.digits)?", s)
		}
	}
	if digits == 0 {
		return nil, fmt.Errorf("decimal %q: no digits", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("decimal %q: unparsable", s)
	}
	return r, nil
}
