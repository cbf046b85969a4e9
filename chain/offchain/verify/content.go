package verify

import (
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrInvalidResult wraps the content rule a single result breaks (size, data
// format, result_schema, embedding shape), as CheckResult and CheckFormat
// report it.
var ErrInvalidResult = errors.New("verify: result breaks a content rule")

// ParseJSON decodes one JSON document exactly as the Result Verifier reads
// results: numbers kept as json.Number text, trailing data refused, nesting
// and number text bounded (MaxJSONDepth, MaxJSONNumberBytes,
// MaxJSONExponent). Runners use it so that what they accept is what the
// chain accepts.
func ParseJSON(b []byte) (any, error) { return parseJSON(b) }

// CheckResult applies to one result the per-result rules Verify applies to
// every reveal, mode by mode (in None only the size limit), so a runner can
// decline to commit a result the chain would count as invalid. A broken
// result_schema in the spec returns ErrBadSchema.
func CheckResult(spec *job.JobSpec, result []byte, embedding []int32) error {
	return checkContent(spec, &Reveal{Result: result, Embedding: embedding})
}

// CheckFormat applies the size, non-empty, data format and result_schema
// rules in every mode, None included: the result a job's schema promises,
// whether or not the chain will look.
func CheckFormat(spec *job.JobSpec, result []byte) error {
	s := *spec
	// EconomicBond runs exactly the per-result rules Verify has, minus the
	// embedding shape, which a format check does not concern.
	s.Verification.Mode = job.ModeEconomicBond
	return checkContent(&s, &Reveal{Result: result})
}

func checkContent(spec *job.JobSpec, r *Reveal) error {
	var resultSchema *jsonschema.Schema
	if spec.Verification.Mode != job.ModeNone && spec.ResultSchema.DataFormat == job.FormatJSON && len(spec.ResultSchema.JSONSchema) > 0 {
		var err error
		if resultSchema, err = compileSchema(spec.ResultSchema.JSONSchema); err != nil {
			return fmt.Errorf("%w: result_schema: %w", ErrBadSchema, err)
		}
	}
	if reason := contentError(spec, resultSchema, r); reason != "" {
		return fmt.Errorf("%w: %s", ErrInvalidResult, reason)
	}
	return nil
}
