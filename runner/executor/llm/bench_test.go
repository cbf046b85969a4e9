package llm

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/executor/llm/standin"
	openai "github.com/sashabaranov/go-openai"
)

// The executor's overhead per job is measured against a direct go-openai
// call of the same request to the same in-process stand-in: the difference
// is input parsing, request building, byte limiting, usage checks and
// canonicalisation.

const benchPrompt = "Tell me the sentiment of: I love this great phone, the battery is excellent"

// bench is a stand-in with a direct client and an executor on it.
type bench struct {
	client *openai.Client
	req    openai.ChatCompletionRequest
	ex     *Executor
	job    executor.Request
}

func newBench(b *testing.B, stream bool, format job.DataFormatKind) *bench {
	hs := httptest.NewServer(standin.New(standin.Options{Models: []string{"standin-chat"}}))
	b.Cleanup(hs.Close)
	ex, err := New(Config{Models: []ModelConfig{{Name: "chat", BaseURL: hs.URL + "/v1", UpstreamModel: "standin-chat"}}})
	if err != nil {
		b.Fatal(err)
	}
	in := `{"model":"chat","prompt":"` + benchPrompt + `","max_tokens":400}`
	if stream {
		in = `{"model":"chat","prompt":"` + benchPrompt + `","max_tokens":400,"stream":true}`
	}
	s := spec(in, format, 500)
	if format == job.FormatJSON {
		s.ResultSchema.JSONSchema = []byte(`{"type":"object","properties":{"sentiment":{"enum":["positive","negative","neutral"]},"score":{"type":"integer"}},"required":["sentiment","score"]}`)
	}
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = hs.URL + "/v1"
	seed := 1
	req := openai.ChatCompletionRequest{
		Model: "standin-chat", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: benchPrompt}},
		MaxTokens: 400, Temperature: 1e-45, Seed: &seed, Stream: stream,
	}
	if stream {
		req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	return &bench{client: openai.NewClientWithConfig(cfg), req: req, ex: ex, job: executor.Request{JobID: types.Hash{1}, Spec: s}}
}

// direct makes the request with go-openai alone, draining a stream.
func (x *bench) direct(b *testing.B) {
	ctx := context.Background()
	if !x.req.Stream {
		if resp, err := x.client.CreateChatCompletion(ctx, x.req); err != nil || len(resp.Choices) == 0 {
			b.Fatal(err)
		}
		return
	}
	st, err := x.client.CreateChatCompletionStream(ctx, x.req)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for {
		if _, err := st.Recv(); err != nil {
			return
		}
	}
}

func (x *bench) executor(b *testing.B) {
	if _, err := x.ex.Execute(context.Background(), x.job); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkChatDirect(b *testing.B) {
	x := newBench(b, false, job.FormatText)
	for b.Loop() {
		x.direct(b)
	}
}

func BenchmarkChatExecutor(b *testing.B) {
	x := newBench(b, false, job.FormatText)
	for b.Loop() {
		x.executor(b)
	}
}

func BenchmarkChatExecutorJSON(b *testing.B) {
	x := newBench(b, false, job.FormatJSON)
	for b.Loop() {
		x.executor(b)
	}
}

func BenchmarkStreamDirect(b *testing.B) {
	x := newBench(b, true, job.FormatText)
	for b.Loop() {
		x.direct(b)
	}
}

func BenchmarkStreamExecutor(b *testing.B) {
	x := newBench(b, true, job.FormatText)
	for b.Loop() {
		x.executor(b)
	}
}

// BenchmarkOverheadRatio alternates a direct go-openai call and an executor
// job on the same stand-in in every iteration and reports the ratio of
// their total times, which stays meaningful on a loaded machine where
// separate benchmarks drift.
func BenchmarkOverheadRatio(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name := "chat"
		if stream {
			name = "stream"
		}
		b.Run(name, func(b *testing.B) {
			x := newBench(b, stream, job.FormatText)
			var direct, viaExec time.Duration
			for b.Loop() {
				t0 := time.Now()
				x.direct(b)
				t1 := time.Now()
				x.executor(b)
				direct += t1.Sub(t0)
				viaExec += time.Since(t1)
			}
			b.ReportMetric(float64(direct.Microseconds())/float64(b.N), "direct-µs/op")
			b.ReportMetric(float64(viaExec.Microseconds())/float64(b.N), "executor-µs/op")
			b.ReportMetric(float64(viaExec)/float64(direct), "executor/direct")
		})
	}
}
