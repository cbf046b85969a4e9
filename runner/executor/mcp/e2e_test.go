// Tests against the real @modelcontextprotocol/server-everything (node
// processes over stdio and streamable HTTP; `make deps` installs it). Every
// process started here is stopped by the test's cleanup.

package mcp

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/executor/mcp/mcptest"
)

// everything starts an executor with server-everything over stdio ("stdio")
// and, if withHTTP, over streamable HTTP ("http").
func everything(t *testing.T, withHTTP bool, mod func(*ServerConfig)) (*Executor, *mcptest.HTTPServer) {
	t.Helper()
	cmd, args, err := mcptest.StdioCommand()
	if err != nil {
		t.Fatal(err)
	}
	servers := []ServerConfig{{Name: "stdio", Command: cmd, Args: args}}
	var hs *mcptest.HTTPServer
	if withHTTP {
		hs, err = mcptest.StartHTTP(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(hs.Stop)
		servers = append(servers, ServerConfig{Name: "http", URL: hs.URL})
	}
	for i := range servers {
		if mod != nil {
			mod(&servers[i])
		}
	}
	ex, err := New(context.Background(), Config{Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.Close() })
	return ex, hs
}

func mcpSpec(input string, format job.DataFormatKind) *job.JobSpec {
	return &job.JobSpec{
		JobType:      job.JobTypeMCP,
		Bounds:       job.ResourceBounds{MaxWallTimeMs: 10_000, MaxMemoryBytes: 1 << 20},
		Verification: job.VerificationConfig{Mode: job.ModeMajorityVote, Runners: 3},
		MaxPrice:     big.NewInt(1), Tip: big.NewInt(0), TimeoutBlocks: 10,
		ResultSchema: job.ResultSchema{MaxReturnBytes: 4096, ExpectedExecutionMs: 1000, DataFormat: format},
		Input:        []byte(input),
	}
}

func runJob(ex *Executor, s *job.JobSpec) (executor.Result, error) {
	return executor.NewRegistry(ex).Execute(context.Background(), executor.Request{JobID: types.Hash{7}, Spec: s})
}

// TestToolsOverStdioAndHTTP calls server-everything's tools over both
// transports, then checks the wall-time bound and Close on the same
// executor (each server start costs a second of node start-up).
func TestToolsOverStdioAndHTTP(t *testing.T) {
	ex, _ := everything(t, true, nil)
	tools, err := ex.Tools(context.Background(), "stdio")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server-everything tools: %s", strings.Join(tools, ", "))
	for _, want := range []string{"echo", "get-sum", "get-structured-content", "trigger-long-running-operation"} {
		if !strings.Contains(","+strings.Join(tools, ",")+",", ","+want+",") {
			t.Fatalf("tool %s missing from %v", want, tools)
		}
	}
	for _, srv := range []string{"stdio", "http"} {
		cases := []struct {
			input  string
			format job.DataFormatKind
			want   string
		}{
			{`{"server":"` + srv + `","tool":"echo","arguments":{"message":"hello cowboy"}}`, job.FormatText, "Echo: hello cowboy"},
			{`{"server":"` + srv + `","tool":"get-sum","arguments":{"a":2,"b":40}}`, job.FormatText, "The sum of 2 and 40 is 42."},
			// structuredContent becomes canonical JSON whatever the format.
			{`{"server":"` + srv + `","tool":"get-structured-content","arguments":{"location":"Chicago"}}`, job.FormatJSON,
				`{"conditions":"Light rain / drizzle","humidity":82,"temperature":36}`},
			{`{"server":"` + srv + `","tool":"get-structured-content","arguments":{"location":"New York"}}`, job.FormatText,
				`{"conditions":"Cloudy","humidity":82,"temperature":33}`},
		}
		for _, c := range cases {
			res, err := runJob(ex, mcpSpec(c.input, c.format))
			if err != nil {
				t.Fatalf("%s: %v", c.input, err)
			}
			if string(res.Output) != c.want {
				t.Fatalf("%s: output %q, want %q", c.input, res.Output, c.want)
			}
			if res.Usage.WallTimeMs == 0 || res.Usage.MemoryBytes == 0 || res.Usage.Tokens != 0 {
				t.Fatalf("usage %+v", res.Usage)
			}
		}
		// A non-text block yields the canonical JSON of the content list.
		img := mcpSpec(`{"server":"`+srv+`","tool":"get-tiny-image"}`, job.FormatBinary)
		img.ResultSchema.MaxReturnBytes = 16 << 10
		res, err := runJob(ex, img)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(res.Output), `[{"text":`) || !strings.Contains(string(res.Output), `"mimeType":"image/png","type":"image"`) {
			t.Fatalf("image result %.200s", res.Output)
		}
	}
	// Concurrent jobs share each session.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		srv := []string{"stdio", "http"}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := fmt.Sprintf("job %d", i)
			res, err := runJob(ex, mcpSpec(`{"server":"`+srv+`","tool":"echo","arguments":{"message":"`+msg+`"}}`, job.FormatText))
			if err == nil && string(res.Output) != "Echo: "+msg {
				err = fmt.Errorf("%s: output %q", srv, res.Output)
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
	// A tool running past the wall-time bound is cancelled; the session survives.
	for _, srv := range []string{"stdio", "http"} {
		s := mcpSpec(`{"server":"`+srv+`","tool":"trigger-long-running-operation","arguments":{"duration":10,"steps":5}}`, job.FormatText)
		s.Bounds.MaxWallTimeMs = 400
		start := time.Now()
		_, err := runJob(ex, s)
		if !errors.Is(err, executor.ErrBoundExceeded) {
			t.Fatalf("%s: %v", srv, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("%s: returned after %v", srv, d)
		}
		// The session is still usable.
		res, err := runJob(ex, mcpSpec(`{"server":"`+srv+`","tool":"echo","arguments":{"message":"still here"}}`, job.FormatText))
		if err != nil || string(res.Output) != "Echo: still here" {
			t.Fatalf("%s after timeout: %q %v", srv, res.Output, err)
		}
	}
	// Close stops the stdio server and is idempotent.
	pid := ex.servers["stdio"].sess.cmd.Process.Pid
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ex.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("server process %d still running after Close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := runJob(ex, mcpSpec(`{"server":"stdio","tool":"echo","arguments":{"message":"x"}}`, job.FormatText)); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestErrors(t *testing.T) {
	ex, _ := everything(t, false, func(s *ServerConfig) { s.Domains = []string{"*.example.com"} })
	cases := []struct {
		input string
		want  error
	}{
		{`{"server":"stdio","tool":"no-such-tool"}`, executor.ErrBadInput},
		{`{"server":"nope","tool":"echo"}`, executor.ErrBadInput},
		{`{"server":"stdio","tool":"echo","arguments":[1]}`, executor.ErrBadInput},
		{`{"server":"stdio","tool":"echo","args":{}}`, executor.ErrBadInput},
		{`{"server":"stdio"}`, executor.ErrBadInput},
		{`not json`, executor.ErrBadInput},
	}
	for _, c := range cases {
		if _, err := runJob(ex, mcpSpec(c.input, job.FormatText)); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.input, err, c.want)
		}
	}
	// Arguments that break the tool's input schema are refused before the call.
	_, err := runJob(ex, mcpSpec(`{"server":"stdio","tool":"get-sum","arguments":{"a":"two","b":3}}`, job.FormatText))
	if !errors.Is(err, executor.ErrBadInput) || !strings.Contains(err.Error(), "input schema") {
		t.Fatalf("bad arguments: %v", err)
	}
	// A tool that fails reports isError.
	_, err = runJob(ex, mcpSpec(`{"server":"stdio","tool":"gzip-file-as-resource","arguments":{"name":"x.gz","data":"ftp://example.com/x"}}`, job.FormatText))
	if !errors.Is(err, ErrToolFailed) || !errors.Is(err, executor.ErrUpstream) || !strings.Contains(err.Error(), "Unsupported URL protocol") {
		t.Fatalf("tool error: %v", err)
	}
	t.Logf("tool error: %v", err)
	// Text that is not JSON fails a JSON job.
	if _, err := runJob(ex, mcpSpec(`{"server":"stdio","tool":"echo","arguments":{"message":"x"}}`, job.FormatJSON)); !errors.Is(err, executor.ErrUpstream) {
		t.Fatalf("non-JSON text for a JSON job: %v", err)
	}
	// Result larger than max_return_bytes, and than max_memory_bytes.
	s := mcpSpec(`{"server":"stdio","tool":"echo","arguments":{"message":"a long enough message"}}`, job.FormatText)
	s.ResultSchema.MaxReturnBytes = 8
	if _, err := runJob(ex, s); !errors.Is(err, executor.ErrBoundExceeded) {
		t.Fatalf("return bound: %v", err)
	}
	s = mcpSpec(`{"server":"stdio","tool":"echo","arguments":{"message":"x"}}`, job.FormatText)
	s.Bounds.MaxMemoryBytes = 10
	if _, err := runJob(ex, s); !errors.Is(err, executor.ErrBoundExceeded) {
		t.Fatalf("memory bound: %v", err)
	}
	if d := ex.Domains(); len(d) != 1 || d[0] != "*.example.com" {
		t.Fatalf("domains %v", d)
	}
	// required_domains must be covered by the server's domains.
	s = mcpSpec(`{"server":"stdio","tool":"echo","arguments":{"message":"x"}}`, job.FormatText)
	s.RequiredDomains = []string{"api.example.com"}
	if _, err := runJob(ex, s); err != nil {
		t.Fatalf("covered domain: %v", err)
	}
	s.RequiredDomains = []string{"api.example.com", "evil.org"}
	if _, err := runJob(ex, s); !errors.Is(err, executor.ErrRefused) {
		t.Fatalf("uncovered domain: %v", err)
	}
	// Tool allowlist: checked before any session is needed, so a server
	// that was never started will do.
	ex2 := &Executor{servers: map[string]*server{"s": {cfg: ServerConfig{Name: "s", Command: "unused", Tools: []string{"echo"}}}}, names: []string{"s"}}
	if _, err := runJob(ex2, mcpSpec(`{"server":"s","tool":"get-sum","arguments":{"a":1,"b":2}}`, job.FormatText)); !errors.Is(err, executor.ErrRefused) {
		t.Fatalf("tool allowlist: %v", err)
	}
}

func TestServerKilledBetweenJobs(t *testing.T) {
	ex, hs := everything(t, true, nil)
	echo := func(srv string) (executor.Result, error) {
		return runJob(ex, mcpSpec(`{"server":"`+srv+`","tool":"echo","arguments":{"message":"again"}}`, job.FormatText))
	}
	// stdio: kill the child; the next job starts a new one.
	s := ex.servers["stdio"]
	s.mu.Lock()
	old := s.sess
	s.mu.Unlock()
	pid := old.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-old.done:
	case <-time.After(5 * time.Second):
		t.Fatal("session did not notice the server's death")
	}
	if res, err := echo("stdio"); err != nil || string(res.Output) != "Echo: again" {
		t.Fatalf("stdio after kill: %q %v", res.Output, err)
	}
	if s.sess == old || s.sess.cmd.Process.Pid == pid {
		t.Fatal("no new stdio session")
	}
	// The new session outlives the job whose context opened it.
	reopened := s.sess
	if res, err := echo("stdio"); err != nil || string(res.Output) != "Echo: again" || s.sess != reopened {
		t.Fatalf("stdio second job: %q %v", res.Output, err)
	}
	// HTTP: kill the server and start a new one on the same port; the stale
	// session is replaced and the (read-only) call retried.
	hs.Kill()
	if _, err := echo("http"); !errors.Is(err, executor.ErrUpstream) {
		t.Fatalf("http while down: %v", err)
	}
	hs2, err := mcptest.StartHTTP(context.Background(), hs.Port)
	if err != nil {
		t.Fatal(err)
	}
	defer hs2.Stop()
	if res, err := echo("http"); err != nil || string(res.Output) != "Echo: again" {
		t.Fatalf("http after restart: %q %v", res.Output, err)
	}
	// Killed while a session is open (no job in between to notice).
	hs2.Kill()
	hs3, err := mcptest.StartHTTP(context.Background(), hs.Port)
	if err != nil {
		t.Fatal(err)
	}
	defer hs3.Stop()
	if res, err := echo("http"); err != nil || string(res.Output) != "Echo: again" {
		t.Fatalf("http after silent restart: %q %v", res.Output, err)
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{
		{},
		{Servers: []ServerConfig{{Name: "a"}}},
		{Servers: []ServerConfig{{Name: "a", Command: "x", URL: "http://h/mcp"}}},
		{Servers: []ServerConfig{{Name: "a", URL: "ftp://h"}}},
		{Servers: []ServerConfig{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}}},
		{Servers: []ServerConfig{{Name: "a", URL: "http://h/mcp", Args: []string{"x"}}}},
		{Servers: []ServerConfig{{Name: "a", URL: "http://h/mcp", Headers: map[string]string{"Authorization": "env:COWBOY_TEST_UNSET"}}}},
		{Servers: []ServerConfig{{Name: "a", Command: "x", OAuth: &OAuthConfig{ClientID: "c", ClientSecret: "s"}}}},
		{Servers: []ServerConfig{{Name: "a", URL: "http://h/mcp", OAuth: &OAuthConfig{ClientID: "c"}}}},
		{Servers: []ServerConfig{{Name: "a", URL: "http://h/mcp", OAuth: &OAuthConfig{ClientID: "c", ClientSecret: "env:COWBOY_TEST_UNSET"}}}},
	} {
		if _, err := New(context.Background(), c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
	// A command that is not an MCP server fails New with its stderr.
	_, err := New(context.Background(), Config{Servers: []ServerConfig{{Name: "bad", Command: "sh", Args: []string{"-c", "echo broken >&2; exit 3"}, ConnectTimeoutMs: 3000}}})
	if !errors.Is(err, executor.ErrUpstream) || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("bad command: %v", err)
	}
}
