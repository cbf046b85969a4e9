package verify

import (
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
)

// CheckResult must say exactly what Verify says about one result: invalid
// with the same reason, or valid.
func TestCheckResultAgreesWithVerify(t *testing.T) {
	schema := []byte(`{"type":"object","required":["a"]}`)
	outs := []string{``, `{"a":1}`, `{"b":1}`, `{"a":`, `not json`, string(make([]byte, 300))}
	for _, mode := range []job.VerificationMode{job.ModeNone, job.ModeEconomicBond} {
		for _, out := range outs {
			spec := specFor(mode, 1)
			spec.ResultSchema.JSONSchema = schema
			o, err := Verify(build(spec, []result{{rs[0], out, nil}}))
			if err != nil {
				t.Fatal(err)
			}
			got := CheckResult(spec, []byte(out), nil)
			if (len(o.Invalid) > 0) != (got != nil) {
				t.Fatalf("%s %.20q: Verify invalid=%v, CheckResult %v", mode, out, o.Invalid, got)
			}
			if got != nil && (!errors.Is(got, ErrInvalidResult) || got.Error() != ErrInvalidResult.Error()+": "+o.Invalid[0].Reason) {
				t.Fatalf("%s %.20q: %v vs %q", mode, out, got, o.Invalid[0].Reason)
			}
		}
	}
}

func TestCheckFormatAppliesInModeNone(t *testing.T) {
	spec := specFor(job.ModeNone, 1)
	spec.ResultSchema.JSONSchema = []byte(`{"type":"object","required":["a"]}`)
	if err := CheckResult(spec, []byte(`{"b":1}`), nil); err != nil {
		t.Fatalf("mode none: the chain does not check the schema: %v", err)
	}
	if err := CheckFormat(spec, []byte(`{"b":1}`)); !errors.Is(err, ErrInvalidResult) {
		t.Fatalf("CheckFormat: %v", err)
	}
	if err := CheckFormat(spec, []byte(`{"a":1}`)); err != nil {
		t.Fatalf("CheckFormat ok: %v", err)
	}
	spec.ResultSchema.JSONSchema = []byte(`{"type": 5}`)
	if err := CheckFormat(spec, []byte(`{"a":1}`)); !errors.Is(err, ErrBadSchema) {
		t.Fatalf("broken schema: %v", err)
	}
}
