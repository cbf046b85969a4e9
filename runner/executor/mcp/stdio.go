package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// stdioTransport is sdk.CommandTransport with the server's stdout checked,
// one JSON-RPC message (line) at a time, for text the SDK's JSON decoding
// would repair to U+FFFD (executor.TextChecker). Bad messages are counted
// in bad and passed on unchanged: the executor fails the call during which
// the count moved, and the session stays usable. Shutdown is the SDK's:
// close stdin, wait for the exit, then SIGTERM, then SIGKILL.
type stdioTransport struct {
	cmd       *exec.Cmd
	bad       *atomic.Int64
	terminate time.Duration
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	// The connection is closed by closing stdin, not stdout.
	in := &sdk.IOTransport{Reader: io.NopCloser(&lineChecked{r: stdout, bad: t.bad}),
		Writer: &procStdin{cmd: t.cmd, w: stdin, terminate: t.terminate}}
	return in.Connect(ctx)
}

// lineChecked counts the lines of r that are not faithful UTF-8 text.
type lineChecked struct {
	r     io.Reader
	bad   *atomic.Int64
	check executor.TextChecker
	fault bool // the current line is bad
}

func (l *lineChecked) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for b := p[:n]; len(b) > 0; {
		i := bytes.IndexByte(b, '\n')
		seg := b
		if i >= 0 {
			seg = b[:i]
		}
		if _, cerr := l.check.Write(seg); cerr != nil {
			l.fault = true
		}
		if i < 0 {
			break
		}
		if l.check.Close() != nil || l.fault {
			l.bad.Add(1)
		}
		l.check, l.fault = executor.TextChecker{}, false
		b = b[i+1:]
	}
	return n, err
}

// procStdin is the server's stdin; closing it ends the server as
// sdk.CommandTransport does.
type procStdin struct {
	cmd       *exec.Cmd
	w         io.WriteCloser
	terminate time.Duration
}

func (p *procStdin) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p *procStdin) Close() error {
	if err := p.w.Close(); err != nil {
		return fmt.Errorf("closing stdin: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-exited:
			return err, true
		case <-time.After(p.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if p.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := p.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return fmt.Errorf("unresponsive server process")
}
