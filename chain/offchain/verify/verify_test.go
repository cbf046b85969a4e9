package verify

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

type runner struct {
	addr types.Address
	key  ed25519.PrivateKey
}

func mkRunner(b byte) runner {
	var a types.Address
	a[0], a[19] = b, b
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = b
	return runner{addr: a, key: ed25519.NewKeyFromSeed(seed)}
}

var rs = []runner{mkRunner(1), mkRunner(2), mkRunner(3), mkRunner(4), mkRunner(5)}

func specFor(mode job.VerificationMode, m uint8) *job.JobSpec {
	s := &job.JobSpec{
		JobID:        types.Keccak256([]byte("job")),
		JobType:      job.JobTypeLLM,
		Bounds:       job.ResourceBounds{MaxTokens: 100, MaxWallTimeMs: 1000, MaxMemoryBytes: 1},
		Verification: job.VerificationConfig{Mode: mode, Runners: m},
		MaxPrice:     big.NewInt(1), Tip: big.NewInt(0), TimeoutBlocks: 1,
		Callback: job.CallbackInfo{Actor: rs[0].addr, Handler: "h"}, Submitter: rs[0].addr,
		ResultSchema: job.ResultSchema{MaxReturnBytes: 256, ExpectedExecutionMs: 1, DataFormat: job.FormatJSON},
	}
	return s
}

type result struct {
	r   runner
	out string
	emb []int32
}

// build makes commitments, keys and reveals for the given results.
func build(spec *job.JobSpec, results []result) Input {
	in := Input{Spec: spec, Keys: map[types.Address]ed25519.PublicKey{}}
	for _, x := range results {
		sig := Sign(x.r.key, spec.JobID, x.r.addr, []byte(x.out), x.emb)
		in.Commitments = append(in.Commitments, job.Commitment{Runner: x.r.addr, Hash: Commitment([]byte(x.out), sig)})
		in.Keys[x.r.addr] = x.r.key.Public().(ed25519.PublicKey)
		in.Reveals = append(in.Reveals, Reveal{Runner: x.r.addr, Result: []byte(x.out), Signature: sig, Embedding: x.emb})
	}
	slices.SortFunc(in.Commitments, func(a, b job.Commitment) int { return cmpAddr(a.Runner, b.Runner) })
	return in
}

func addrs(rr ...runner) []types.Address {
	var out []types.Address
	for _, r := range rr {
		out = append(out, r.addr)
	}
	return out
}

func TestCommitmentAndMessagePreimages(t *testing.T) {
	res, sig := []byte("hello"), bytes.Repeat([]byte{7}, 64)
	if Commitment(res, sig) != types.Keccak256(append(slices.Clone(res), sig...)) {
		t.Fatal("commitment preimage")
	}
	jid := types.Hash{1}
	m := SigningMessage(jid, rs[0].addr, res, []int32{1, -1})
	rh, eh := types.Keccak256(res), types.Keccak256([]byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	want := append(append(append(append([]byte("cowboy-result-v1:"), jid[:]...), rs[0].addr[:]...), rh[:]...), eh[:]...)
	if !bytes.Equal(m, want) {
		t.Fatal("signing message preimage")
	}
}

func TestCheckReveal(t *testing.T) {
	spec := specFor(job.ModeNone, 1)
	in := build(spec, []result{{rs[0], `{"a":1}`, nil}, {rs[1], `{"a":1}`, nil}})
	r0, c0, k0 := in.Reveals[0], in.Commitments[0].Hash, in.Keys[rs[0].addr]
	if err := CheckReveal(spec.JobID, &r0, c0, k0); err != nil {
		t.Fatal(err)
	}
	tests := map[string]func(r *Reveal, c *types.Hash, k *ed25519.PublicKey){
		"changed result":         func(r *Reveal, c *types.Hash, k *ed25519.PublicKey) { r.Result = []byte(`{"a":2}`) },
		"wrong commitment":       func(r *Reveal, c *types.Hash, k *ed25519.PublicKey) { *c = types.Hash{} },
		"wrong key":              func(r *Reveal, c *types.Hash, k *ed25519.PublicKey) { *k = in.Keys[rs[1].addr] },
		"no key":                 func(r *Reveal, c *types.Hash, k *ed25519.PublicKey) { *k = nil },
		"short signature":        func(r *Reveal, c *types.Hash, k *ed25519.PublicKey) { r.Signature = r.Signature[:63] },
		"copied from runner 1":   func(r *Reveal, c *types.Hash, k *ed25519.PublicKey) { r.Signature = in.Reveals[1].Signature },
		"embedding not signed":   func(r *Reveal, c *types.Hash, k *ed25519.PublicKey) { r.Embedding = []int32{1} },
		"claims another address": func(r *Reveal, c *types.Hash, k *ed25519.PublicKey) { r.Runner = rs[1].addr },
	}
	for name, mut := range tests {
		t.Run(name, func(t *testing.T) {
			r, c, k := r0, c0, k0
			r.Signature = slices.Clone(r.Signature)
			mut(&r, &c, &k)
			if err := CheckReveal(spec.JobID, &r, c, k); !errors.Is(err, ErrBadReveal) {
				t.Fatalf("want ErrBadReveal, got %v", err)
			}
		})
	}
	// Another job id invalidates the signature.
	if err := CheckReveal(types.Hash{9}, &r0, c0, k0); !errors.Is(err, ErrBadReveal) {
		t.Fatal("cross-job replay accepted")
	}
}

func TestVerifySubmissionErrors(t *testing.T) {
	spec := specFor(job.ModeMajorityVote, 3)
	spec.Verification.VoteField = "/v"
	in := build(spec, []result{{rs[0], `{"v":1}`, nil}, {rs[1], `{"v":1}`, nil}})
	dup := in
	dup.Reveals = append(slices.Clone(in.Reveals), in.Reveals[0])
	if _, err := Verify(dup); !errors.Is(err, ErrBadSubmission) {
		t.Fatalf("duplicate reveal: %v", err)
	}
	nocommit := in
	nocommit.Commitments = in.Commitments[:1]
	if _, err := Verify(nocommit); !errors.Is(err, ErrBadSubmission) {
		t.Fatalf("reveal without commitment: %v", err)
	}
	bad := in
	bad.Reveals = slices.Clone(in.Reveals)
	bad.Reveals[1].Result = []byte(`{"v":2}`)
	if _, err := Verify(bad); !errors.Is(err, ErrBadReveal) {
		t.Fatalf("forged reveal: %v", err)
	}
}

func TestModes(t *testing.T) {
	type tc struct {
		name     string
		spec     func() *job.JobSpec
		results  []result
		drop     int // reveals to withhold from the end (committed, not revealed)
		accepted bool
		rep      runner
		agreed   []runner
		invalid  []runner
		missing  []runner
	}
	majority := func(q uint16) func() *job.JobSpec {
		return func() *job.JobSpec {
			s := specFor(job.ModeMajorityVote, 3)
			s.Verification.VoteField = "/label"
			s.Verification.QuorumBps = q
			return s
		}
	}
	structured := func(checks ...job.Check) func() *job.JobSpec {
		return func() *job.JobSpec {
			s := specFor(job.ModeStructuredMatch, 4)
			s.Verification.Checks = checks
			return s
		}
	}
	semantic := func(ppm uint32) func() *job.JobSpec {
		return func() *job.JobSpec {
			s := specFor(job.ModeSemanticSimilarity, 4)
			s.ResultSchema.DataFormat = job.FormatText
			s.Verification.SimilarityPpm, s.Verification.EmbeddingDim = ppm, 2
			return s
		}
	}
	det := func(q uint16) func() *job.JobSpec {
		return func() *job.JobSpec {
			s := specFor(job.ModeDeterministic, 3)
			s.TEERequired = true
			s.ResultSchema.DataFormat = job.FormatBinary
			s.Verification.QuorumBps = q
			return s
		}
	}
	tests := []tc{
		{name: "none accepts anything in size", spec: func() *job.JobSpec { return specFor(job.ModeNone, 1) },
			results: []result{{rs[0], `not json`, nil}}, accepted: true, rep: rs[0], agreed: []runner{rs[0]}},
		{name: "none enforces size", spec: func() *job.JobSpec { s := specFor(job.ModeNone, 1); s.ResultSchema.MaxReturnBytes = 3; return s },
			results: []result{{rs[0], `1234`, nil}}, invalid: []runner{rs[0]}},
		{name: "bond checks schema", spec: func() *job.JobSpec {
			s := specFor(job.ModeEconomicBond, 1)
			s.ResultSchema.JSONSchema = []byte(`{"type":"object","required":["x"]}`)
			return s
		}, results: []result{{rs[0], `{"y":1}`, nil}}, invalid: []runner{rs[0]}},
		{name: "bond accepts schema match", spec: func() *job.JobSpec {
			s := specFor(job.ModeEconomicBond, 1)
			s.ResultSchema.JSONSchema = []byte(`{"type":"object","required":["x"]}`)
			return s
		}, results: []result{{rs[0], `{"x":1}`, nil}}, accepted: true, rep: rs[0], agreed: []runner{rs[0]}},
		{name: "bond rejects empty", spec: func() *job.JobSpec { return specFor(job.ModeEconomicBond, 1) },
			results: []result{{rs[0], ``, nil}}, invalid: []runner{rs[0]}},
		{name: "majority 2 of 3, numbers compared exactly", spec: majority(0),
			results:  []result{{rs[2], `{"label":1.0,"why":"c"}`, nil}, {rs[0], `{"label":"x"}`, nil}, {rs[1], `{"label":10e-1,"why":"b"}`, nil}},
			accepted: true, rep: rs[1], agreed: []runner{rs[1], rs[2]}},
		{name: "majority tie", spec: majority(0),
			results: []result{{rs[0], `{"label":"a"}`, nil}, {rs[1], `{"label":"b"}`, nil}, {rs[2], `{}`, nil}},
			invalid: []runner{rs[2]}},
		{name: "majority below quorum", spec: majority(10_000),
			results: []result{{rs[0], `{"label":"a"}`, nil}, {rs[1], `{"label":"a"}`, nil}, {rs[2], `{"label":"b"}`, nil}}},
		{name: "majority with a missing reveal", spec: majority(0),
			results: []result{{rs[0], `{"label":"a"}`, nil}, {rs[1], `{"label":"a"}`, nil}, {rs[2], `{"label":"b"}`, nil}}, drop: 1,
			accepted: true, rep: rs[0], agreed: []runner{rs[0], rs[1]}, missing: []runner{rs[2]}},
		{name: "structured tolerance groups", spec: structured(
			job.Check{Kind: job.CheckNumericTolerance, Field: "/p", Tolerance: "0.5"},
			job.Check{Kind: job.CheckFieldMatch, Field: "/cur"}),
			results: []result{{rs[0], `{"p":10,"cur":"USD"}`, nil}, {rs[1], `{"p":10.5,"cur":"USD"}`, nil}, {rs[2], `{"p":10.51,"cur":"USD"}`, nil}, {rs[3], `{"p":10.2,"cur":"EUR"}`, nil}},
			// reference r1 (10.5) matches r0 (0.5 away, inclusive) and r2: group of 3.
			accepted: true, rep: rs[1], agreed: []runner{rs[0], rs[1], rs[2]}},
		{name: "structured range and schema drop results", spec: func() *job.JobSpec {
			s := structured(
				job.Check{Kind: job.CheckJSONSchema, Schema: []byte(`{"type":"object","properties":{"p":{"type":"number"}},"required":["p"]}`)},
				job.Check{Kind: job.CheckNumericRange, Field: "/p", Min: "0", Max: "100"})()
			s.Verification.QuorumBps = 5000 // 2 of 4
			return s
		},
			results:  []result{{rs[0], `{"p":-1}`, nil}, {rs[1], `{"p":"5"}`, nil}, {rs[2], `{"p":100}`, nil}, {rs[3], `{"p":0}`, nil}},
			accepted: true, rep: rs[2], agreed: []runner{rs[2], rs[3]}, invalid: []runner{rs[0], rs[1]}},
		{name: "structured per-field majority", spec: structured(
			job.Check{Kind: job.CheckFieldMajority, Field: "/k"}),
			results:  []result{{rs[0], `{"k":"a"}`, nil}, {rs[1], `{"k":"b"}`, nil}, {rs[2], `{"k":"b"}`, nil}, {rs[3], `{"k":"b"}`, nil}},
			accepted: true, rep: rs[1], agreed: []runner{rs[1], rs[2], rs[3]}, invalid: []runner{rs[0]}},
		{name: "structured per-field majority needs strict majority", spec: structured(
			job.Check{Kind: job.CheckFieldMajority, Field: "/k"}),
			results: []result{{rs[0], `{"k":"a"}`, nil}, {rs[1], `{"k":"a"}`, nil}, {rs[2], `{"k":"b"}`, nil}, {rs[3], `{"k":"b"}`, nil}}},
		{name: "deterministic unanimity", spec: det(0),
			results: []result{{rs[0], "x", nil}, {rs[1], "x", nil}, {rs[2], "x", nil}}, accepted: true, rep: rs[0], agreed: []runner{rs[0], rs[1], rs[2]}},
		{name: "deterministic one differs", spec: det(0),
			results: []result{{rs[0], "x", nil}, {rs[1], "y", nil}, {rs[2], "x", nil}}},
		{name: "deterministic with 2/3 quorum", spec: det(6666),
			results: []result{{rs[0], "x", nil}, {rs[1], "y", nil}, {rs[2], "x", nil}}, accepted: true, rep: rs[0], agreed: []runner{rs[0], rs[2]}},
		{name: "semantic cluster", spec: semantic(950_000),
			results:  []result{{rs[0], "cat", []int32{65536, 0}}, {rs[1], "a cat", []int32{65536, 6553}}, {rs[2], "dog", []int32{0, 65536}}, {rs[3], "kitty", []int32{60000, 3000}}},
			accepted: true, rep: rs[0], agreed: []runner{rs[0], rs[1], rs[3]}},
		{name: "semantic wrong dimension and out of range", spec: semantic(950_000),
			results: []result{{rs[0], "a", []int32{1}}, {rs[1], "b", []int32{1 << 21, 0}}, {rs[2], "c", []int32{0, 0}}, {rs[3], "d", []int32{5, 5}}},
			invalid: []runner{rs[0], rs[1], rs[2]}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec()
			if err := spec.Validate(); err != nil {
				t.Fatalf("test spec invalid: %v", err)
			}
			in := build(spec, tc.results)
			in.Reveals = in.Reveals[:len(in.Reveals)-tc.drop]
			o, err := Verify(in)
			if err != nil {
				t.Fatal(err)
			}
			if o.Accepted != tc.accepted {
				t.Fatalf("accepted = %v, invalid %v", o.Accepted, o.Invalid)
			}
			var inv []types.Address
			for _, x := range o.Invalid {
				inv = append(inv, x.Runner)
			}
			if !slices.Equal(inv, addrs(tc.invalid...)) {
				t.Fatalf("invalid %v, want %v (%v)", inv, addrs(tc.invalid...), o.Invalid)
			}
			if !slices.Equal(o.Missing, addrs(tc.missing...)) {
				t.Fatalf("missing %v", o.Missing)
			}
			// Agreed, Dissented and Missing partition the committed runners.
			all := append(append(slices.Clone(o.Agreed), o.Dissented...), o.Missing...)
			slices.SortFunc(all, cmpAddr)
			var committed []types.Address
			for _, c := range in.Commitments {
				committed = append(committed, c.Runner)
			}
			if !slices.Equal(all, committed) {
				t.Fatalf("partition %v != committed %v", all, committed)
			}
			if !tc.accepted {
				return
			}
			if o.Representative != tc.rep.addr || !slices.Equal(o.Agreed, addrs(tc.agreed...)) {
				t.Fatalf("rep %s agreed %v; want %s %v", o.Representative, o.Agreed, tc.rep.addr, addrs(tc.agreed...))
			}
			if o.ResultHash != types.Keccak256(o.Result) {
				t.Fatal("result hash")
			}
			sub := Submission{Claim: o.Claim(spec.JobID), Reveals: in.Reveals}
			if _, err := CheckSubmission(spec, in.Commitments, in.Keys, &sub); err != nil {
				t.Fatalf("honest submission rejected: %v", err)
			}
			sub.Claim.Agreed = sub.Claim.Agreed[1:]
			if _, err := CheckSubmission(spec, in.Commitments, in.Keys, &sub); !errors.Is(err, ErrBadSubmission) {
				t.Fatalf("altered claim accepted: %v", err)
			}
		})
	}
}

func TestSimilarAtLeastExactBoundary(t *testing.T) {
	a, b := []int32{1, 0}, []int32{1, 1} // cos = 1/√2 = 0.70710678…
	if !SimilarAtLeast(a, b, 707_106) || SimilarAtLeast(a, b, 707_107) {
		t.Fatal("boundary of 1/√2 misjudged")
	}
	if !SimilarAtLeast(a, a, 1_000_000) {
		t.Fatal("identical vectors must reach threshold 1")
	}
	if SimilarAtLeast([]int32{1, 0}, []int32{-1, 0}, 1) || SimilarAtLeast([]int32{1, 0}, []int32{0, 1}, 1) {
		t.Fatal("opposite/orthogonal vectors")
	}
	big := []int32{MaxEmbeddingAbs, -MaxEmbeddingAbs}
	long := slices.Repeat(big, job.MaxEmbeddingDim/2)
	if !SimilarAtLeast(long, long, 1_000_000) {
		t.Fatal("extreme in-range embeddings overflowed")
	}
}

func TestValidateSchemas(t *testing.T) {
	s := specFor(job.ModeStructuredMatch, 2)
	s.Verification.Checks = []job.Check{{Kind: job.CheckJSONSchema, Schema: []byte(`{"type": 5}`)}}
	if err := ValidateSchemas(s); !errors.Is(err, ErrBadSchema) {
		t.Fatalf("bad schema: %v", err)
	}
	s.Verification.Checks[0].Schema = []byte(`{"$ref":"https://example.com/x.json"}`)
	if err := ValidateSchemas(s); !errors.Is(err, ErrBadSchema) {
		t.Fatalf("remote ref must not load: %v", err)
	}
	s.Verification.Checks[0].Schema = []byte(`{"type":"object"}`)
	s.ResultSchema.JSONSchema = []byte(`{"type":"object","properties":{"n":{"multipleOf":0.1}}}`)
	if err := ValidateSchemas(s); err != nil {
		t.Fatal(err)
	}
	// multipleOf is decided exactly (0.3 is a multiple of 0.1 as a rational).
	cs, _ := compileSchema(s.ResultSchema.JSONSchema)
	doc, _ := parseJSON([]byte(`{"n":0.3}`))
	if err := cs.Validate(doc); err != nil {
		t.Fatalf("exact multipleOf: %v", err)
	}
}

func TestCanonicalAndLookup(t *testing.T) {
	d1, _ := parseJSON([]byte(`{"b":[1,{"x":"y"}],"a":2.50}`))
	d2, _ := parseJSON([]byte(`{"a":2.5,"b":[1.0,{"x":"y"}]}`))
	if canonical(d1) != canonical(d2) {
		t.Fatalf("%s != %s", canonical(d1), canonical(d2))
	}
	if v, ok := lookup(d1, "/b/1/x"); !ok || v != "y" {
		t.Fatal("pointer lookup")
	}
	for _, p := range []string{"/b/01", "/b/2", "/c", "/a/x"} {
		if _, ok := lookup(d1, p); ok {
			t.Fatalf("%s resolved", p)
		}
	}
	d3, _ := parseJSON([]byte(`{"a/b":{"~":1}}`))
	if v, ok := lookup(d3, "/a~1b/~0"); !ok || canonical(v) != "#1" {
		t.Fatal("escaped pointer")
	}
	if _, err := parseJSON([]byte(`{} {}`)); err == nil || !strings.Contains(err.Error(), "trailing") {
		t.Fatal("trailing document accepted")
	}
}

func FuzzDecodeSubmission(f *testing.F) {
	spec := specFor(job.ModeNone, 1)
	in := build(spec, []result{{rs[0], "x", []int32{1, -2}}})
	sub := Submission{Claim: VerifiedResult{JobID: spec.JobID, Agreed: addrs(rs[0])}, Reveals: in.Reveals}
	enc, _ := sub.Encode()
	f.Add(enc)
	renc, _ := in.Reveals[0].Encode()
	f.Add(renc)
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := DecodeSubmission(data); err == nil {
			again, err := s.Encode()
			if err != nil || !bytes.Equal(again, data) {
				t.Fatalf("submission round trip %x -> %x", data, again)
			}
		}
		if r, err := DecodeReveal(data); err == nil {
			again, err := r.Encode()
			if err != nil || !bytes.Equal(again, data) {
				t.Fatalf("reveal round trip %x -> %x", data, again)
			}
		}
	})
}

func TestJSONBounds(t *testing.T) {
	for _, bad := range []string{`{"p":1e999999}`, `{"p":1E-401}`, `[` + strings.Repeat("1", 101) + `]`, strings.Repeat("[", 66) + strings.Repeat("]", 66)} {
		if _, err := parseJSON([]byte(bad)); err == nil {
			t.Errorf("%.40s… accepted", bad)
		}
	}
	for _, good := range []string{`{"p":1e400}`, `{"p":-1.5E+300}`, strings.Repeat("[", 64) + strings.Repeat("]", 64)} {
		if _, err := parseJSON([]byte(good)); err != nil {
			t.Errorf("%.40s… rejected: %v", good, err)
		}
	}
	// A result with an oversized exponent dissents instead of costing seconds.
	spec := specFor(job.ModeEconomicBond, 1)
	in := build(spec, []result{{rs[0], `{"p":1e999999}`, nil}})
	o, err := Verify(in)
	if err != nil || o.Accepted || len(o.Invalid) != 1 {
		t.Fatalf("outcome %+v err %v", o, err)
	}
}

func TestDeterministicNeedsTEE(t *testing.T) {
	spec := specFor(job.ModeDeterministic, 2)
	spec.ResultSchema.DataFormat = job.FormatBinary
	in := build(spec, []result{{rs[0], "x", nil}, {rs[1], "x", nil}})
	if _, err := Verify(in); !errors.Is(err, ErrBadSubmission) {
		t.Fatalf("deterministic without TEE: %v", err)
	}
	spec.TEERequired = true
	if o, err := Verify(in); err != nil || !o.Accepted {
		t.Fatalf("with TEE: %+v %v", o, err)
	}
}
