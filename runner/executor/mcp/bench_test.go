package mcp

import (
	"context"
	"os/exec"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/executor/mcp/mcptest"
)

// Tool-call latency through the executor against a direct SDK call of the
// same tool on the same kind of session (server-everything's echo), over
// stdio and streamable HTTP. The difference is input parsing, the domain and
// argument-schema checks and result canonicalisation.

func benchTransport(b *testing.B, http bool) sdk.Transport {
	if http {
		hs, err := mcptest.StartHTTP(context.Background(), 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(hs.Stop)
		return &sdk.StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: true}
	}
	cmd, args, err := mcptest.StdioCommand()
	if err != nil {
		b.Fatal(err)
	}
	return &sdk.CommandTransport{Command: exec.Command(cmd, args...)}
}

func benchDirect(b *testing.B, http bool) {
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, benchTransport(b, http), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "benchmark"}}
	b.ResetTimer()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err)
		}
	}
}

func benchExecutor(b *testing.B, http bool) {
	ctx := context.Background()
	var sc ServerConfig
	if http {
		hs, err := mcptest.StartHTTP(ctx, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(hs.Stop)
		sc = ServerConfig{Name: "e", URL: hs.URL}
	} else {
		cmd, args, err := mcptest.StdioCommand()
		if err != nil {
			b.Fatal(err)
		}
		sc = ServerConfig{Name: "e", Command: cmd, Args: args}
	}
	ex, err := New(ctx, Config{Servers: []ServerConfig{sc}})
	if err != nil {
		b.Fatal(err)
	}
	defer ex.Close()
	req := executor.Request{JobID: types.Hash{1}, Spec: mcpSpec(`{"server":"e","tool":"echo","arguments":{"message":"benchmark"}}`, job.FormatText)}
	b.ResetTimer()
	for b.Loop() {
		if _, err := ex.Execute(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEchoStdioDirect(b *testing.B)   { benchDirect(b, false) }
func BenchmarkEchoStdioExecutor(b *testing.B) { benchExecutor(b, false) }
func BenchmarkEchoHTTPDirect(b *testing.B)    { benchDirect(b, true) }
func BenchmarkEchoHTTPExecutor(b *testing.B)  { benchExecutor(b, true) }

// BenchmarkOverheadRatio alternates a direct SDK call and an executor job in
// every iteration, each on its own session to its own server process, and
// reports the ratio of their total times (robust to load drift).
func BenchmarkOverheadRatio(b *testing.B) {
	for _, http := range []bool{false, true} {
		name := "stdio"
		if http {
			name = "http"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := c.Connect(ctx, benchTransport(b, http), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			var sc ServerConfig
			if http {
				hs, err := mcptest.StartHTTP(ctx, 0)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(hs.Stop)
				sc = ServerConfig{Name: "e", URL: hs.URL}
			} else {
				cmd, args, err := mcptest.StdioCommand()
				if err != nil {
					b.Fatal(err)
				}
				sc = ServerConfig{Name: "e", Command: cmd, Args: args}
			}
			ex, err := New(ctx, Config{Servers: []ServerConfig{sc}})
			if err != nil {
				b.Fatal(err)
			}
			defer ex.Close()
			params := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "benchmark"}}
			req := executor.Request{JobID: types.Hash{1}, Spec: mcpSpec(`{"server":"e","tool":"echo","arguments":{"message":"benchmark"}}`, job.FormatText)}
			var direct, viaExec time.Duration
			for b.Loop() {
				t0 := time.Now()
				if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
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
