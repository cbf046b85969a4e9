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

func benchServer(b *testing.B) *httptest.Server {
	srv := standin.New(standin.Options{Models: []string{"standin-chat"}})
	hs := httptest.NewServer(srv)
	b.Cleanup(hs.Close)
	return hs
}

func benchExecutor(b *testing.B, stream bool, format job.DataFormatKind) {
	hs := benchServer(b)
	ex, err := New(Config{Models: []ModelConfig{{Name: "chat", BaseURL: hs.URL + "/v1", UpstreamModel: "standin-chat"}}})
	if err != nil {
		b.Fatal(err)
	}
	in := `{"model":"chat","prompt":"` + benchPrompt + `"}`
	if stream {
		in = `{"model":"chat","prompt":"` + benchPrompt + `","stream":true}`
	}
	s := spec(in, format, 500)
	if format == job.FormatJSON {
		s.ResultSchema.JSONSchema = []byte(`{"type":"object","properties":{"sentiment":{"enum":["positive","negative","neutral"]},"score":{"type":"integer"}},"required":["sentiment","score"]}`)
	}
	req := executor.Request{JobID: types.Hash{1}, Spec: s}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := ex.Execute(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func benchDirect(b *testing.B, stream bool) {
	hs := benchServer(b)
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = hs.URL + "/v1"
	c := openai.NewClientWithConfig(cfg)
	seed := 1
	req := openai.ChatCompletionRequest{
		Model:       "standin-chat",
		Messages:    []openai.ChatCompletionMessage{{Role: "user", Content: benchPrompt}},
		MaxTokens:   400,
		Temperature: 1e-45,
		Seed:        &seed,
	}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if !stream {
			resp, err := c.CreateChatCompletion(ctx, req)
			if err != nil || len(resp.Choices) == 0 {
				b.Fatal(err)
			}
			continue
		}
		r := req
		r.Stream = true
		r.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
		st, err := c.CreateChatCompletionStream(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := st.Recv(); err != nil {
				break
			}
		}
		st.Close()
	}
}

func BenchmarkChatDirect(b *testing.B)         { benchDirect(b, false) }
func BenchmarkChatExecutor(b *testing.B)       { benchExecutor(b, false, job.FormatText) }
func BenchmarkChatExecutorJSON(b *testing.B)   { benchExecutor(b, false, job.FormatJSON) }
func BenchmarkStreamDirect(b *testing.B)       { benchDirect(b, true) }
func BenchmarkStreamExecutor(b *testing.B)     { benchExecutor(b, true, job.FormatText) }
func BenchmarkStreamExecutorJSON(b *testing.B) { benchExecutor(b, true, job.FormatJSON) }

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
			hs := benchServer(b)
			ex, err := New(Config{Models: []ModelConfig{{Name: "chat", BaseURL: hs.URL + "/v1", UpstreamModel: "standin-chat"}}})
			if err != nil {
				b.Fatal(err)
			}
			in := `{"model":"chat","prompt":"` + benchPrompt + `","max_tokens":400}`
			if stream {
				in = `{"model":"chat","prompt":"` + benchPrompt + `","max_tokens":400,"stream":true}`
			}
			req := executor.Request{JobID: types.Hash{1}, Spec: spec(in, job.FormatText, 500)}
			cfg := openai.DefaultConfig("")
			cfg.BaseURL = hs.URL + "/v1"
			c := openai.NewClientWithConfig(cfg)
			seed := 1
			creq := openai.ChatCompletionRequest{
				Model: "standin-chat", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: benchPrompt}},
				MaxTokens: 400, Temperature: 1e-45, Seed: &seed, Stream: stream,
			}
			if stream {
				creq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
			}
			ctx := context.Background()
			var direct, viaExec time.Duration
			for b.Loop() {
				t0 := time.Now()
				if stream {
					st, err := c.CreateChatCompletionStream(ctx, creq)
					if err != nil {
						b.Fatal(err)
					}
					for {
						if _, err := st.Recv(); err != nil {
							break
						}
					}
					st.Close()
				} else if _, err := c.CreateChatCompletion(ctx, creq); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := ex.Execute(ctx, req); err != nil {
					b.Fatal(err)
				}
				direct += t1.Sub(t0)
				viaExec += time.Since(t1)
			}
			b.ReportMetric(float64(direct.Microseconds())/float64(b.N), "direct-µs/op")
			b.ReportMetric(float64(viaExec.Microseconds())/float64(b.N), "executor-µs/op")
			b.ReportMetric(float64(viaExec)/float64(direct), "executor/direct")
		})
	}
}
