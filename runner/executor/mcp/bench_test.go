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

// benchServer starts (HTTP) or describes (stdio) a server-everything.
func benchServer(b *testing.B, http bool) ServerConfig {
	if http {
		hs, err := mcptest.StartHTTP(context.Background(), 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(hs.Stop)
		return ServerConfig{Name: "e", URL: hs.URL}
	}
	cmd, args, err := mcptest.StdioCommand()
	if err != nil {
		b.Fatal(err)
	}
	return ServerConfig{Name: "e", Command: cmd, Args: args}
}

// directSession opens a plain SDK session to its own server.
func directSession(b *testing.B, http bool) *sdk.ClientSession {
	sc := benchServer(b, http)
	var t sdk.Transport = &sdk.StreamableClientTransport{Endpoint: sc.URL, DisableStandaloneSSE: true}
	if !http {
		t = &sdk.CommandTransport{Command: exec.Command(sc.Command, sc.Args...)}
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), t, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// benchExecutor opens an executor on its own server.
func benchExecutor(b *testing.B, http bool) *Executor {
	ex, err := New(context.Background(), Config{Servers: []ServerConfig{benchServer(b, http)}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ex.Close() })
	return ex
}

var (
	echoParams = &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "benchmark"}}
	echoJob    = executor.Request{JobID: types.Hash{1}, Spec: mcpSpec(`{"server":"e","tool":"echo","arguments":{"message":"benchmark"}}`, job.FormatText)}
)

func callDirect(b *testing.B, cs *sdk.ClientSession) {
	if res, err := cs.CallTool(context.Background(), echoParams); err != nil || res.IsError {
		b.Fatal(err)
	}
}

func callExecutor(b *testing.B, ex *Executor) {
	if _, err := ex.Execute(context.Background(), echoJob); err != nil {
		b.Fatal(err)
	}
}

func benchEchoDirect(b *testing.B, http bool) {
	cs := directSession(b, http)
	for b.Loop() {
		callDirect(b, cs)
	}
}

func benchEchoExecutor(b *testing.B, http bool) {
	ex := benchExecutor(b, http)
	for b.Loop() {
		callExecutor(b, ex)
	}
}

func BenchmarkEchoStdioDirect(b *testing.B)   { benchEchoDirect(b, false) }
func BenchmarkEchoStdioExecutor(b *testing.B) { benchEchoExecutor(b, false) }
func BenchmarkEchoHTTPDirect(b *testing.B)    { benchEchoDirect(b, true) }
func BenchmarkEchoHTTPExecutor(b *testing.B)  { benchEchoExecutor(b, true) }

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
			cs := directSession(b, http)
			ex := benchExecutor(b, http)
			var direct, viaExec time.Duration
			for b.Loop() {
				t0 := time.Now()
				callDirect(b, cs)
				t1 := time.Now()
				callExecutor(b, ex)
				direct += t1.Sub(t0)
				viaExec += time.Since(t1)
			}
			b.ReportMetric(float64(direct.Microseconds())/float64(b.N), "direct-µs/op")
			b.ReportMetric(float64(viaExec.Microseconds())/float64(b.N), "executor-µs/op")
			b.ReportMetric(float64(viaExec)/float64(direct), "executor/direct")
		})
	}
}
