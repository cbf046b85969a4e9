package llm

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/executor/llm/standin"
)

// fixture is a stand-in server and an executor pointed at it.
type fixture struct {
	srv  *standin.Server
	http *httptest.Server
	exec *Executor
}

func newFixture(t *testing.T, opts standin.Options, mod func(*ModelConfig)) *fixture {
	t.Helper()
	opts.Models = []string{"standin-chat", "standin-embed"}
	srv := standin.New(opts)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Release(); hs.Close() })
	mc := ModelConfig{Name: "chat", BaseURL: hs.URL + "/v1", UpstreamModel: "standin-chat", EmbeddingsModel: "standin-embed"}
	if mod != nil {
		mod(&mc)
	}
	ex, err := New(Config{Models: []ModelConfig{mc}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.Close() })
	return &fixture{srv: srv, http: hs, exec: ex}
}

func spec(input string, format job.DataFormatKind, maxTokens uint64) *job.JobSpec {
	return &job.JobSpec{
		JobType:      job.JobTypeLLM,
		Bounds:       job.ResourceBounds{MaxTokens: maxTokens, MaxWallTimeMs: 5000, MaxMemoryBytes: 1 << 20},
		Verification: job.VerificationConfig{Mode: job.ModeMajorityVote, Runners: 3},
		MaxPrice:     big.NewInt(1), Tip: big.NewInt(0), TimeoutBlocks: 10,
		ResultSchema: job.ResultSchema{MaxReturnBytes: 4096, ExpectedExecutionMs: 1000, DataFormat: format},
		Input:        []byte(input),
	}
}

func run(t *testing.T, f *fixture, s *job.JobSpec) (executor.Result, error) {
	t.Helper()
	reg := executor.NewRegistry(f.exec)
	return reg.Execute(context.Background(), executor.Request{JobID: types.Hash{1, 2, 3}, Spec: s})
}

func TestChatText(t *testing.T) {
	f := newFixture(t, standin.Options{}, nil)
	res, err := run(t, f, spec(`{"model":"chat","prompt":"What is 2 + 3?"}`, job.FormatText, 200))
	if err != nil {
		t.Fatal(err)
	}
	want := standin.TextPrefix + "The answer is 5."
	if string(res.Output) != want {
		t.Fatalf("output %q, want %q", res.Output, want)
	}
	// Prompt: 3 + (4 + 5 words); completion: words of the answer.
	if wantTok := uint64(3 + 4 + 5 + len(strings.Fields(want))); res.Usage.Tokens != wantTok {
		t.Fatalf("tokens %d, want %d", res.Usage.Tokens, wantTok)
	}
	if res.Usage.WallTimeMs == 0 || res.Usage.MemoryBytes == 0 || res.Embedding != nil {
		t.Fatalf("usage %+v embedding %v", res.Usage, res.Embedding)
	}
	// The request carried the derived seed, greedy temperature and the budget.
	var sent struct {
		Seed        *int64   `json:"seed"`
		Temperature *float64 `json:"temperature"`
		MaxTokens   int      `json:"max_tokens"`
		Messages    []Message
	}
	if err := json.Unmarshal(f.srv.LastChatRequest(), &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Seed == nil || *sent.Seed != int64(defaultSeed(types.Hash{1, 2, 3})) {
		t.Fatalf("seed %v", sent.Seed)
	}
	if sent.Temperature == nil || *sent.Temperature <= 0 || *sent.Temperature > 1e-30 {
		t.Fatalf("temperature %v, want the smallest positive float", sent.Temperature)
	}
	if sent.MaxTokens <= 0 || sent.MaxTokens >= 200 {
		t.Fatalf("max_tokens %d, want the bound minus the prompt estimate", sent.MaxTokens)
	}
}

func TestStreamingMatchesNonStreaming(t *testing.T) {
	f := newFixture(t, standin.Options{}, nil)
	in := `{"model":"chat","system":"be brief","prompt":"Tell me the sentiment of: I love this great phone","seed":7,"temperature":0.5%s}`
	plain, err := run(t, f, spec(strings.ReplaceAll(in, "%s", ""), job.FormatText, 300))
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := run(t, f, spec(strings.ReplaceAll(in, "%s", `,"stream":true`), job.FormatText, 300))
	if err != nil {
		t.Fatal(err)
	}
	if string(plain.Output) != string(streamed.Output) || plain.Usage.Tokens != streamed.Usage.Tokens {
		t.Fatalf("plain %q/%d, streamed %q/%d", plain.Output, plain.Usage.Tokens, streamed.Output, streamed.Usage.Tokens)
	}
	if !strings.Contains(string(plain.Output), "positive") {
		t.Fatalf("output %q", plain.Output)
	}
	var sent map[string]any
	_ = json.Unmarshal(f.srv.LastChatRequest(), &sent)
	if sent["stream"] != true || sent["stream_options"].(map[string]any)["include_usage"] != true || sent["seed"].(float64) != 7 {
		t.Fatalf("stream request %v", sent)
	}
}

func TestJSONSchemaOutput(t *testing.T) {
	f := newFixture(t, standin.Options{}, nil)
	s := spec(`{"model":"chat","prompt":"Give the sentiment of: terrible awful service"}`, job.FormatJSON, 500)
	s.ResultSchema.JSONSchema = []byte(`{"type":"object","properties":{"sentiment":{"enum":["positive","negative","neutral"]},"confidence":{"type":"number","minimum":0,"maximum":1}},"required":["sentiment","confidence"],"additionalProperties":false}`)
	for _, stream := range []bool{false, true} {
		if stream {
			s.Input = []byte(`{"model":"chat","prompt":"Give the sentiment of: terrible awful service","stream":true}`)
		}
		res, err := run(t, f, s)
		if err != nil {
			t.Fatal(err)
		}
		// The stand-in answers pretty-printed JSON; the result is canonical.
		if want := `{"confidence":0,"sentiment":"negative"}`; string(res.Output) != want {
			t.Fatalf("stream=%v output %s, want %s", stream, res.Output, want)
		}
		var sent map[string]any
		_ = json.Unmarshal(f.srv.LastChatRequest(), &sent)
		rf := sent["response_format"].(map[string]any)
		if rf["type"] != "json_schema" || rf["json_schema"].(map[string]any)["schema"] == nil {
			t.Fatalf("response_format %v", rf)
		}
		if err := verify.ValidateSchemas(s); err != nil {
			t.Fatal(err)
		}
	}
	// A budget too small for the JSON answer: the truncated output is not
	// JSON, and the error says why.
	s.Input = []byte(`{"model":"chat","prompt":"Give the sentiment of: terrible awful service"}`)
	s.Bounds.MaxTokens = 16
	if _, err := run(t, f, s); !errors.Is(err, executor.ErrUpstream) || !strings.Contains(err.Error(), "token budget") {
		t.Fatalf("truncated JSON: %v", err)
	}
	// JSON without a schema asks for json_object.
	res, err := run(t, f, spec(`{"model":"chat","prompt":"answer in json: hello"}`, job.FormatJSON, 500))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(res.Output), `{"answer":`) || !json.Valid(res.Output) {
		t.Fatalf("output %s", res.Output)
	}
}

func TestEmbeddingsForSemanticSimilarity(t *testing.T) {
	f := newFixture(t, standin.Options{}, nil)
	mk := func(prompt string) *job.JobSpec {
		s := spec(`{"model":"chat","prompt":"`+prompt+`"}`, job.FormatText, 500)
		s.Verification = job.VerificationConfig{Mode: job.ModeSemanticSimilarity, Runners: 3, SimilarityPpm: 800_000, EmbeddingDim: 48}
		return s
	}
	a, err := run(t, f, mk("summarise the weather in Paris today"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := run(t, f, mk("summarise the weather in Paris today please"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := run(t, f, mk("What is 12 * 12?"))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Embedding) != 48 || a.Usage.Tokens <= uint64(len(strings.Fields(string(a.Output)))) {
		t.Fatalf("embedding %d dims, usage %+v", len(a.Embedding), a.Usage)
	}
	if !verify.SimilarAtLeast(a.Embedding, b.Embedding, 800_000) {
		t.Fatal("near-identical answers are not similar")
	}
	if verify.SimilarAtLeast(a.Embedding, c.Embedding, 800_000) {
		t.Fatal("unrelated answers are similar")
	}
	// The reveal the runner would make passes the verifier's content rules.
	s := mk("summarise the weather in Paris today")
	s.JobID = types.Hash{9}
	in := verify.Input{Spec: s, Keys: map[types.Address]ed25519.PublicKey{}}
	for i, r := range []executor.Result{a, b, c} {
		runner := types.Address{byte(i + 1)}
		key := ed25519.NewKeyFromSeed(make([]byte, 32))
		sig := verify.Sign(key, s.JobID, runner, r.Output, r.Embedding)
		in.Keys[runner] = key.Public().(ed25519.PublicKey)
		in.Commitments = append(in.Commitments, job.Commitment{Runner: runner, Hash: verify.Commitment(r.Output, sig)})
		in.Reveals = append(in.Reveals, verify.Reveal{Runner: runner, Result: r.Output, Signature: sig, Embedding: r.Embedding})
	}
	out, err := verify.Verify(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Agreed) != 2 {
		t.Fatalf("agreed %v dissented %v", out.Agreed, out.Dissented)
	}
	// embed names a model without embeddings → refused; embed outside semantic mode → bad input.
	f2 := newFixture(t, standin.Options{}, func(m *ModelConfig) { m.EmbeddingsModel = "" })
	if _, err := run(t, f2, mk("x")); !errors.Is(err, executor.ErrRefused) {
		t.Fatalf("no embeddings model: %v", err)
	}
	if _, err := run(t, f, spec(`{"model":"chat","prompt":"x","embed":{}}`, job.FormatText, 100)); !errors.Is(err, executor.ErrBadInput) {
		t.Fatalf("embed in majority vote: %v", err)
	}
}

func TestQuantize(t *testing.T) {
	q, err := Quantize([]float32{3, 4, 0})
	if err != nil {
		t.Fatal(err)
	}
	if q[0] != 39322 || q[1] != 52429 || q[2] != 0 { // 0.6·2^16 = 39321.6, 0.8·2^16 = 52428.8
		t.Fatalf("quantised %v", q)
	}
	for _, bad := range [][]float32{{0, 0}, {1, float32(nanF())}} {
		if _, err := Quantize(bad); err == nil {
			t.Fatalf("Quantize(%v) accepted", bad)
		}
	}
}

func nanF() float64 { z := 0.0; return z / z }

func TestTokenBounds(t *testing.T) {
	f := newFixture(t, standin.Options{}, nil)
	// A tight bound truncates the completion within it.
	res, err := run(t, f, spec(`{"model":"chat","prompt":"hi"}`, job.FormatText, 14))
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.Tokens > 14 {
		t.Fatalf("tokens %d > bound", res.Usage.Tokens)
	}
	// input max_tokens above the bound is the job's error.
	if _, err := run(t, f, spec(`{"model":"chat","prompt":"hi","max_tokens":20}`, job.FormatText, 14)); !errors.Is(err, executor.ErrBadInput) {
		t.Fatalf("max_tokens > bound: %v", err)
	}
	// A prompt larger than the bound: the server's usage exceeds it.
	long := strings.Repeat("word ", 50)
	if _, err := run(t, f, spec(`{"model":"chat","prompt":"`+long+`"}`, job.FormatText, 20)); !errors.Is(err, executor.ErrBoundExceeded) {
		t.Fatalf("long prompt: %v", err)
	}
	// A server that ignores max_tokens is refused (non-streaming) or cut off (streaming).
	f.srv.SetFault(standin.FaultOverrun)
	if _, err := run(t, f, spec(`{"model":"chat","prompt":"hi"}`, job.FormatText, 100)); !errors.Is(err, executor.ErrBoundExceeded) {
		t.Fatalf("overrun: %v", err)
	}
	before := f.srv.Requests()
	start := time.Now()
	_, err = run(t, f, spec(`{"model":"chat","prompt":"hi","stream":true}`, job.FormatText, 100))
	if !errors.Is(err, executor.ErrBoundExceeded) || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("streamed overrun: %v", err)
	}
	if f.srv.Requests() != before+1 || time.Since(start) > 2*time.Second {
		t.Fatal("stream not cut off promptly")
	}
}

func TestByteBounds(t *testing.T) {
	f := newFixture(t, standin.Options{}, nil)
	s := spec(`{"model":"chat","prompt":"hello there"}`, job.FormatText, 200)
	s.Bounds.MaxMemoryBytes = 100 // the response JSON alone is larger
	if _, err := run(t, f, s); !errors.Is(err, executor.ErrBoundExceeded) {
		t.Fatalf("memory bound: %v", err)
	}
	s = spec(`{"model":"chat","prompt":"hello there"}`, job.FormatText, 200)
	s.ResultSchema.MaxReturnBytes = 10
	if _, err := run(t, f, s); !errors.Is(err, executor.ErrBoundExceeded) {
		t.Fatalf("return bound: %v", err)
	}
	s.Input = []byte(`{"model":"chat","prompt":"hello there","stream":true}`)
	s.ResultSchema.MaxReturnBytes = 4
	s.Bounds.MaxMemoryBytes = 30
	if _, err := run(t, f, s); !errors.Is(err, executor.ErrBoundExceeded) {
		t.Fatalf("streamed bound: %v", err)
	}
}

func TestHangingServerBoundedByWallTime(t *testing.T) {
	f := newFixture(t, standin.Options{}, nil)
	f.srv.SetFault(standin.FaultHang)
	for _, stream := range []string{"false", "true"} {
		s := spec(`{"model":"chat","prompt":"hi","stream":`+stream+`}`, job.FormatText, 100)
		s.Bounds.MaxWallTimeMs = 300
		start := time.Now()
		_, err := run(t, f, s)
		if !errors.Is(err, executor.ErrBoundExceeded) {
			t.Fatalf("stream=%s: %v", stream, err)
		}
		if d := time.Since(start); d < 300*time.Millisecond || d > 2*time.Second {
			t.Fatalf("stream=%s returned after %v", stream, d)
		}
	}
}

func TestUpstreamFaults(t *testing.T) {
	f := newFixture(t, standin.Options{}, nil)
	cases := []struct {
		fault  standin.Fault
		stream bool
	}{
		{standin.FaultGarbage, false}, {standin.FaultGarbage, true},
		{standin.FaultServerError, false}, {standin.FaultServerError, true},
		{standin.FaultNoUsage, false}, {standin.FaultNoUsage, true},
	}
	for _, c := range cases {
		f.srv.SetFault(c.fault)
		in := `{"model":"chat","prompt":"hi"}`
		if c.stream {
			in = `{"model":"chat","prompt":"hi","stream":true}`
		}
		_, err := run(t, f, spec(in, job.FormatText, 100))
		if !errors.Is(err, executor.ErrUpstream) {
			t.Fatalf("fault %d stream=%v: %v", c.fault, c.stream, err)
		}
	}
	// A schema whose instance is a bare string yields a canonical JSON string.
	f.srv.SetFault(standin.FaultNone)
	s := spec(`{"model":"chat","prompt":"hi"}`, job.FormatJSON, 100)
	s.ResultSchema.JSONSchema = []byte(`{"type":"string"}`)
	if res, err := run(t, f, s); err != nil || string(res.Output) != `"local stand-in"` {
		t.Fatalf("string schema: %s %v", res.Output, err)
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t, standin.Options{}, nil)
	for _, in := range []string{
		``, `[]`, `{"model":"chat"}`, `{"model":"chat","prompt":"a","messages":[{"role":"user","content":"b"}]}`,
		`{"model":"nope","prompt":"a"}`, `{"model":"chat","prompt":"a","temprature":1}`,
		`{"model":"chat","prompt":"a","temperature":3}`, `{"model":"chat","messages":[{"role":"tool","content":"b"}]}`,
		`{"model":"chat","prompt":"a"} {}`,
	} {
		if _, err := run(t, f, spec(in, job.FormatText, 100)); !errors.Is(err, executor.ErrBadInput) {
			t.Errorf("%q: %v", in, err)
		}
	}
	// A model unknown to the server is an upstream failure with its message.
	f2 := newFixture(t, standin.Options{}, func(m *ModelConfig) { m.UpstreamModel = "gpt-9" })
	_, err := run(t, f2, spec(`{"model":"chat","prompt":"a"}`, job.FormatText, 100))
	if !errors.Is(err, executor.ErrUpstream) || !strings.Contains(err.Error(), "gpt-9") {
		t.Fatalf("unknown upstream model: %v", err)
	}
}

func TestAPIKeyAndConfig(t *testing.T) {
	t.Setenv("COWBOY_TEST_LLM_KEY", "sekrit")
	f := newFixture(t, standin.Options{APIKey: "sekrit"}, func(m *ModelConfig) { m.APIKeyEnv = "COWBOY_TEST_LLM_KEY" })
	if _, err := run(t, f, spec(`{"model":"chat","prompt":"a","messages":null}`, job.FormatText, 100)); err != nil {
		t.Fatal(err)
	}
	f2 := newFixture(t, standin.Options{APIKey: "sekrit"}, nil)
	if _, err := run(t, f2, spec(`{"model":"chat","prompt":"a"}`, job.FormatText, 100)); !errors.Is(err, executor.ErrUpstream) {
		t.Fatalf("missing key: %v", err)
	}
	for _, c := range []Config{
		{},
		{Models: []ModelConfig{{Name: "a", BaseURL: "ftp://x"}}},
		{Models: []ModelConfig{{Name: "a", BaseURL: "http://x/v1"}, {Name: "a", BaseURL: "http://y/v1"}}},
		{Models: []ModelConfig{{Name: "a", BaseURL: "http://x/v1", APIKeyEnv: "COWBOY_TEST_UNSET_VAR"}}},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
}

func TestStripFence(t *testing.T) {
	for in, want := range map[string]string{
		"```json\n{\"a\":1}\n```": "{\"a\":1}\n",
		"```\n[1]```":             "[1]",
		"{\"a\":1}":               "{\"a\":1}",
	} {
		if got := stripFence(in); got != want {
			t.Errorf("stripFence(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProbeAndConcurrency(t *testing.T) {
	f := newFixture(t, standin.Options{}, nil)
	if p := f.exec.Probe(context.Background()); len(p) != 0 {
		t.Fatalf("probe: %v", p)
	}
	f2 := newFixture(t, standin.Options{}, func(m *ModelConfig) { m.EmbeddingsModel = "nope" })
	if p := f2.exec.Probe(context.Background()); p["chat"] == nil || !strings.Contains(p["chat"].Error(), "nope") {
		t.Fatalf("probe: %v", p)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := fmt.Sprintf(`{"model":"chat","prompt":"What is %d + 1?","stream":%v}`, i, i%2 == 0)
			res, err := run(t, f, spec(in, job.FormatText, 200))
			if err == nil && !strings.HasSuffix(string(res.Output), fmt.Sprintf("The answer is %d.", i+1)) {
				err = fmt.Errorf("job %d: %q", i, res.Output)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestRetriesBusyServer(t *testing.T) {
	f := newFixture(t, standin.Options{}, nil)
	f.srv.SetFault(standin.FaultFlaky)
	for _, stream := range []string{"false", "true"} {
		before := f.srv.Requests()
		res, err := run(t, f, spec(`{"model":"chat","prompt":"What is 1 + 1?","stream":`+stream+`}`, job.FormatText, 100))
		if err != nil || !strings.HasSuffix(string(res.Output), "The answer is 2.") {
			t.Fatalf("stream=%s: %q %v", stream, res.Output, err)
		}
		if n := f.srv.Requests() - before; n != 2 {
			t.Fatalf("stream=%s: %d requests, want 2 (one 503, one retry)", stream, n)
		}
	}
	// No retry when the deadline leaves no room for the backoff.
	s := spec(`{"model":"chat","prompt":"hi"}`, job.FormatText, 100)
	s.Bounds.MaxWallTimeMs = 100
	before := f.srv.Requests()
	if _, err := run(t, f, s); !errors.Is(err, executor.ErrUpstream) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("short deadline: %v", err)
	}
	if n := f.srv.Requests() - before; n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	// A server that is down is retried, then reported.
	hs := httptest.NewServer(nil)
	url := hs.URL
	hs.Close()
	ex, err := New(Config{Models: []ModelConfig{{Name: "chat", BaseURL: url + "/v1"}}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = executor.NewRegistry(ex).Execute(context.Background(), executor.Request{Spec: spec(`{"model":"chat","prompt":"hi"}`, job.FormatText, 100)})
	if !errors.Is(err, executor.ErrUpstream) || time.Since(start) < 750*time.Millisecond {
		t.Fatalf("down server: %v after %v", err, time.Since(start))
	}
}

func TestFixedSampling(t *testing.T) {
	f := newFixture(t, standin.Options{}, func(m *ModelConfig) { m.FixedSampling = true; m.MaxCompletionTokensField = true })
	if _, err := run(t, f, spec(`{"model":"chat","prompt":"hi"}`, job.FormatText, 100)); err != nil {
		t.Fatal(err)
	}
	var sent map[string]any
	_ = json.Unmarshal(f.srv.LastChatRequest(), &sent)
	for _, k := range []string{"temperature", "top_p", "seed", "max_tokens"} {
		if _, ok := sent[k]; ok {
			t.Fatalf("%s sent: %v", k, sent)
		}
	}
	if sent["max_completion_tokens"] == nil {
		t.Fatalf("no max_completion_tokens: %v", sent)
	}
	if _, err := run(t, f, spec(`{"model":"chat","prompt":"hi","temperature":0.7}`, job.FormatText, 100)); !errors.Is(err, executor.ErrRefused) {
		t.Fatalf("temperature on a fixed model: %v", err)
	}
}
