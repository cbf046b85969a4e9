package entitlement

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
)

func manifest(t *testing.T, reqs ...string) Manifest {
	t.Helper()
	var m Manifest
	for _, r := range reqs {
		e, err := ParseRequirement(r)
		if err != nil {
			t.Fatal(err)
		}
		m = append(m, e)
	}
	m, err := m.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestManifestParseEncode(t *testing.T) {
	m := manifest(t, "timers+inheritable", "http:API.example.com,*.coingecko.com,set:price_feeds", "jobs:llm,http")
	var got []string
	for _, r := range m {
		got = append(got, r.String())
	}
	want := "jobs:http,llm http:*.coingecko.com,api.example.com,set:price_feeds timers+inheritable"
	if strings.Join(got, " ") != want {
		t.Fatalf("normalized %q, want %q", strings.Join(got, " "), want)
	}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeManifest(b)
	if err != nil || len(back) != 3 || back[2].String() != "timers+inheritable" {
		t.Fatalf("decode: %v %v", back, err)
	}
	for _, bad := range []string{"net", "timers:x", "jobs", "jobs:gpu", "http", "http:bad host", "http:*.", "http:set:"} {
		if _, err := ParseRequirement(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := (Manifest{m[2], m[2]}).Encode(); err == nil || !strings.Contains(err.Error(), "declared twice") {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := (Manifest{}).Encode(); err == nil {
		t.Fatal("empty manifest encoded")
	}
	var many []string
	for i := 0; i <= MaxRequirementArg; i++ {
		many = append(many, strings.Repeat("a", 200)+string(rune('a'+i%26))+strings.Repeat("b", i/26))
	}
	if _, err := ParseRequirement("http:" + strings.Join(many, ",")); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("too many params: %v", err)
	}
}

func TestManifestJSON(t *testing.T) {
	m, err := ParseManifestJSON([]byte(`{"requires":[{"entitlement":"http","params":["api.example.com"],"inheritable":true},{"entitlement":"jobs","params":["http"]}]}`))
	if err != nil || len(m) != 2 || m[0].Name() != NameJobs || !m[1].Inheritable {
		t.Fatalf("%v %v", m, err)
	}
	out, _ := json.Marshal(m)
	if !strings.Contains(string(out), `"entitlement":"http","params":["api.example.com"],"inheritable":true,"action":"custom:http"`) {
		t.Fatalf("json %s", out)
	}
	for _, bad := range []string{`{"requires":[]}`, `{"requires":[{"entitlement":"disk"}]}`, `{"requires":[{"entitlement":"timers","extra":1}]}`, `{"req":[]}`} {
		if _, err := ParseManifestJSON([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestManifestGates(t *testing.T) {
	var none Manifest
	if err := none.CheckTimers("set_timer"); err == nil || !strings.Contains(err.Error(), `set_timer: missing entitlement "timers"`) {
		t.Fatalf("no manifest: %v", err)
	}
	if err := none.CheckJob("submit_job", job.JobTypeHTTP, nil); err == nil || !strings.Contains(err.Error(), `"jobs:http"`) {
		t.Fatalf("no manifest job: %v", err)
	}
	m := manifest(t, "jobs:http,mcp", "http:*.example.com,set:price_feeds")
	cases := []struct {
		t       job.JobType
		domains []string
		missing string
	}{
		{job.JobTypeHTTP, []string{"api.example.com", "set:price_feeds"}, ""},
		{job.JobTypeMCP, []string{"a.b.example.com"}, ""},
		{job.JobTypeHTTP, []string{"example.com"}, "http:example.com"},
		{job.JobTypeHTTP, []string{"api.example.com", "evil.org"}, "http:evil.org"},
		{job.JobTypeLLM, nil, "jobs:llm"},
	}
	for _, c := range cases {
		err := m.CheckJob("submit_job", c.t, c.domains)
		if c.missing == "" && err != nil || c.missing != "" && (err == nil || err.(*MissingError).Entitlement != c.missing) {
			t.Errorf("%s %v: %v, want missing %q", c.t, c.domains, err, c.missing)
		}
	}
	if err := m.CheckTimers("set_interval"); err == nil {
		t.Fatal("timers not declared but allowed")
	}
}

func TestInherit(t *testing.T) {
	parent := manifest(t, "timers+inheritable", "jobs:http,llm+inheritable", "http:*.example.com")
	got, err := Inherit(parent, nil)
	if err != nil || len(got) != 2 || got[0].String() != "jobs:http,llm+inheritable" || got[1].String() != "timers+inheritable" {
		t.Fatalf("default inheritance %v %v", got, err)
	}
	got, err = Inherit(parent, manifest(t, "jobs:llm"))
	if err != nil || len(got) != 1 || got[0].String() != "jobs:llm" {
		t.Fatalf("narrowed %v %v", got, err)
	}
	if _, err := Inherit(parent, manifest(t, "http:api.example.com")); err == nil || !strings.Contains(err.Error(), "not inheritable") {
		t.Fatalf("non-inheritable http passed on: %v", err)
	}
	if _, err := Inherit(parent, manifest(t, "jobs:mcp")); err == nil || !strings.Contains(err.Error(), "not covered") {
		t.Fatalf("wider job types passed on: %v", err)
	}
	if got, err := Inherit(manifest(t, "timers"), nil); err != nil || got != nil {
		t.Fatalf("nothing inheritable: %v %v", got, err)
	}
	web := manifest(t, "http:*.example.com+inheritable")
	if got, err := Inherit(web, manifest(t, "http:api.example.com")); err != nil || got[0].String() != "http:api.example.com" {
		t.Fatalf("narrower domain: %v %v", got, err)
	}
	if _, err := Inherit(web, manifest(t, "http:*.com")); err == nil {
		t.Fatal("wider wildcard inherited")
	}
	if _, err := Inherit(nil, manifest(t, "timers")); err == nil {
		t.Fatal("child of a manifest-less parent got timers")
	}
}

func benchManifest(b *testing.B, domains int) ([]byte, []string) {
	var ds []string
	for i := 0; i < domains; i++ {
		ds = append(ds, "api"+string(rune('a'+i%26))+strings.Repeat("x", i/26)+".example.com")
	}
	m, err := Manifest{
		{Action: JobsAction(), Params: []string{"http", "llm"}},
		{Action: HTTPAction(), Params: ds},
		{Action: TimersAction()},
	}.Normalize()
	if err != nil {
		b.Fatal(err)
	}
	enc, err := m.Encode()
	if err != nil {
		b.Fatal(err)
	}
	return enc, m[1].Params
}

func benchGate(b *testing.B, domains, required int) {
	enc, ds := benchManifest(b, domains)
	req := ds[len(ds)-required:] // the last entries: the longest scan
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := DecodeManifest(enc)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.CheckJob("submit_job", job.JobTypeHTTP, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkManifestGate is the submit_job syscall gate as the chain runs it
// (decode the stored manifest, check type and domains): a typical manifest
// of 8 domains with a job requiring 2, and the worst case of 64 and 64.
func BenchmarkManifestGate(b *testing.B) {
	b.Run("8domains_2required", func(b *testing.B) { benchGate(b, 8, 2) })
	b.Run("64domains_64required", func(b *testing.B) { benchGate(b, 64, 64) })
}

// BenchmarkJobSpecDecodeBaseline decodes a typical JobSpec, work submit_job
// does anyway: the baseline for the gate's cost.
func BenchmarkJobSpecDecodeBaseline(b *testing.B) {
	s := &job.JobSpec{JobType: job.JobTypeHTTP, Input: []byte("https://api.example.com/price"), MaxPrice: big.NewInt(1e17), Tip: new(big.Int),
		TimeoutBlocks: 20, Bounds: job.ResourceBounds{MaxWallTimeMs: 5000, MaxMemoryBytes: 1 << 20},
		Verification:    job.VerificationConfig{Mode: job.ModeMajorityVote, Runners: 3, VoteField: "/price"},
		ResultSchema:    job.ResultSchema{MaxReturnBytes: 1024, ExpectedExecutionMs: 1000, DataFormat: job.FormatJSON},
		Callback:        job.CallbackInfo{Handler: "on_result"},
		RequiredDomains: []string{"api.example.com"}}
	enc, err := s.Encode()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := job.DecodeJobSpec(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzManifestRoundTrip: stored manifests decode only from canonical bytes
// and never panic.
func FuzzManifestRoundTrip(f *testing.F) {
	for _, reqs := range [][]string{{"timers"}, {"jobs:http,llm", "http:*.example.com,set:feeds+inheritable", "timers"}} {
		var m Manifest
		for _, r := range reqs {
			e, _ := ParseRequirement(r)
			m = append(m, e)
		}
		m, _ = m.Normalize()
		b, _ := m.Encode()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeManifest(data)
		if err != nil {
			return
		}
		out, err := m.Encode()
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if string(out) != string(data) {
			t.Fatalf("round trip changed bytes: %x -> %x", data, out)
		}
	})
}

func TestManifestParamsNeverNull(t *testing.T) {
	b, err := Manifest{{Action: TimersAction()}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeManifest(b); err != nil {
		t.Fatalf("nil params did not encode as an array: %x %v", b, err)
	}
	null := append(append([]byte{0x81, 0x83}, codecAction(t, TimersAction())...), 0xf6, 0xf4)
	if _, err := DecodeManifest(null); err == nil || !strings.Contains(err.Error(), "not null") {
		t.Fatalf("null params accepted: %v", err)
	}
}

func codecAction(t *testing.T, a Action) []byte {
	t.Helper()
	b, err := a.MarshalCBOR()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
