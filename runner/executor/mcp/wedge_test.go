package mcp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/runner/executor"
)

func testServer(t *testing.T) *Executor {
	t.Helper()
	ex, err := New(context.Background(), Config{Servers: []ServerConfig{testServerConfig("t")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.Close() })
	return ex
}

func (e *Executor) pid(t *testing.T, name string) int {
	t.Helper()
	s := e.servers[name]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil || s.sess.cmd == nil || s.sess.cmd.Process == nil {
		return 0
	}
	return s.sess.cmd.Process.Pid
}

// TestWedgedServerRestarted (issue 19, defect 2): a stdio server that stops
// reading is cut at the job's wall time; the runner then pings it, gets no
// answer within health_timeout_ms and restarts it, so the next job runs.
// Before the fix the wedged session was kept and every later call timed
// out (an impossible job, paid 0) until the runner restarted. A server that
// is merely slow answers the ping and keeps its session.
func TestWedgedServerRestarted(t *testing.T) {
	ex := testServer(t)
	call := func(input string, wallMs uint64) (executor.Result, error) {
		s := mcpSpec(input, job.FormatText)
		s.Bounds.MaxWallTimeMs = wallMs
		return runJob(ex, s)
	}
	if res, err := call(`{"server":"t","tool":"echo","arguments":{"message":"a"}}`, 5000); err != nil || string(res.Output) != "Echo: a" {
		t.Fatalf("echo: %q %v", res.Output, err)
	}
	// Slow but healthy: cut, session kept.
	pid := ex.pid(t, "t")
	if _, err := call(`{"server":"t","tool":"sleep","arguments":{"ms":1500}}`, 300); !errors.Is(err, executor.ErrBoundExceeded) {
		t.Fatalf("sleep past the wall time: %v", err)
	}
	if res, err := call(`{"server":"t","tool":"echo","arguments":{"message":"b"}}`, 5000); err != nil || string(res.Output) != "Echo: b" {
		t.Fatalf("echo after a slow call: %q %v", res.Output, err)
	}
	if got := ex.pid(t, "t"); got != pid {
		t.Fatalf("a healthy server was restarted (pid %d -> %d)", pid, got)
	}
	// Wedged: cut, pinged, restarted; the next jobs run.
	if _, err := call(`{"server":"t","tool":"wedge"}`, 300); !errors.Is(err, executor.ErrBoundExceeded) {
		t.Fatalf("wedge: %v", err)
	}
	for i := range 3 {
		start := time.Now()
		res, err := call(`{"server":"t","tool":"echo","arguments":{"message":"c"}}`, 3000)
		if err != nil || string(res.Output) != "Echo: c" {
			t.Fatalf("echo %d after the wedge: %q %v (after %v)", i, res.Output, err, time.Since(start))
		}
	}
	if got := ex.pid(t, "t"); got == pid || got == 0 {
		t.Fatalf("the wedged server was not restarted (pid %d -> %d)", pid, got)
	}
}

// TestElicitationDeclined (issue 19, defect 4): a stdio server that asks
// for user input during a call gets an immediate error (the runner never
// advertises the capability and has no user), and the job fails as the
// job's fault with ErrElicitation instead of committing whatever the
// server made of the refusal, or waiting for the wall time.
func TestElicitationDeclined(t *testing.T) {
	ex := testServer(t)
	s := mcpSpec(`{"server":"t","tool":"elicit"}`, job.FormatText)
	s.Bounds.MaxWallTimeMs = 5000
	start := time.Now()
	res, err := runJob(ex, s)
	if !errors.Is(err, ErrElicitation) || !errors.Is(err, executor.ErrBadInput) {
		t.Fatalf("want ErrElicitation (bad input), got %q %v", res.Output, err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("declining took %v", time.Since(start))
	}
	// The session is fine afterwards.
	if res, err := runJob(ex, mcpSpec(`{"server":"t","tool":"echo","arguments":{"message":"d"}}`, job.FormatText)); err != nil || string(res.Output) != "Echo: d" {
		t.Fatalf("echo after the elicitation: %q %v", res.Output, err)
	}
}
