package pvm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Invocation is one handler call.
type Invocation struct {
	Actor, Caller, Origin [20]byte
	Value                 *big.Int
	// Handler is the method to call. Ignored when Init is set.
	Handler string
	// Payload is canonical CBOR: an array is passed as positional
	// arguments, a map with string keys as keyword arguments, null/empty as
	// no arguments, anything else as one positional argument.
	Payload []byte
	// Code is the actor source; Libraries maps pinned library import names
	// to their sources, already resolved by the chain.
	Code      []byte
	Libraries map[string][]byte
	// CyclesLimit and CellsLimit bound the call.
	CyclesLimit, CellsLimit uint64
	Depth                   int
	// ReadOnly rejects storage writes, events, sends and transfers.
	ReadOnly bool
	// Init constructs the actor: __init__ runs with the payload arguments.
	Init bool
	// Deploying marks the init handler run at deploy time: it may call a
	// handler that is not marked @public (seed 000 §4's `init`).
	Deploying bool
}

// Outcome is the deterministic result of a call.
type Outcome struct {
	Return     []byte // canonical CBOR of the handler's return value (nil on failure)
	CyclesUsed uint64
	CellsUsed  uint64
	Err        *ExecError // nil on success
}

// Engine runs calls on a pool of warm CPython zygotes. It is safe for
// concurrent use.
type Engine struct {
	cfg     Config
	spec    *zygoteSpec
	codec   *codec
	dir     string
	scratch string
	ownDir  bool
	zygotes []*zygote
	next    atomic.Uint64
	wg      sync.WaitGroup
	mu      sync.RWMutex // held for reading by calls, for writing by Close
	closed  bool
}

// New starts an engine: it resolves and checks the interpreter, writes the
// embedded Python sources to a private directory, starts the zygotes and
// runs one validation call through each to prove they work.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	cfg = cfg.withDefaults()
	py, err := resolvePython(ctx, cfg.Python)
	if err != nil {
		return nil, err
	}
	cfg.Python = py
	c, err := newCodec()
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, codec: c}
	if cfg.WorkDir == "" {
		e.dir, err = os.MkdirTemp("", "cowboy-pvm-")
		if err != nil {
			return nil, fmt.Errorf("pvm: work dir: %w", err)
		}
		e.ownDir = true
	} else {
		e.dir = cfg.WorkDir
	}
	if err := os.Chmod(e.dir, 0o700); err != nil {
		return nil, fmt.Errorf("pvm: work dir: %w", err)
	}
	src := filepath.Join(e.dir, "src")
	e.scratch = filepath.Join(e.dir, "scratch")
	if err := os.MkdirAll(e.scratch, 0o700); err != nil {
		return nil, fmt.Errorf("pvm: scratch dir: %w", err)
	}
	if err := writePython(src); err != nil {
		e.cleanupDir()
		return nil, fmt.Errorf("pvm: write python sources: %w", err)
	}
	e.spec = &zygoteSpec{python: py, srcDir: src, sandbox: !cfg.NoSandbox, log: cfg.Logger, wg: &e.wg}
	for i := 0; i < cfg.PoolSize; i++ {
		z, err := startZygote(i, e.spec)
		if err != nil {
			_ = e.Close()
			return nil, err
		}
		e.zygotes = append(e.zygotes, z)
	}
	// Warm up every zygote (imports finish, fork path works).
	for range e.zygotes {
		if _, err := e.Validate(ctx, []byte("x = 1\n")); err != nil {
			_ = e.Close()
			hint := ""
			if !cfg.NoSandbox {
				hint = " (the OS sandbox needs root and namespaces; Config.NoSandbox disables it)"
			}
			return nil, fmt.Errorf("pvm: warm-up call%s: %w", hint, err)
		}
	}
	return e, nil
}

func (e *Engine) cleanupDir() {
	if e.ownDir {
		_ = os.RemoveAll(e.dir)
	}
}

// Close stops all zygotes and removes the work directory. It is safe to
// call more than once; later calls return ErrClosed.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	e.closed = true
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, z := range e.zygotes {
		if err := z.stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	e.wg.Wait()
	e.cleanupDir()
	return errors.Join(errs...)
}

// Validate runs the AST validator (the same rules apply to actors and
// libraries). It returns the sorted import names that are neither
// whitelisted stdlib nor cowboy_sdk/pvm_host, i.e. candidate account
// libraries. A rule violation is returned as *ValidationError.
func (e *Engine) Validate(ctx context.Context, source []byte) ([]string, error) {
	msg := &callMsg{Op: "validate", Code: source, Limits: e.cfg.Limits.workerLimits(), Costs: e.cfg.Costs.workerCosts()}
	done, err := e.run(ctx, msg, nil, nil)
	if err != nil {
		return nil, err
	}
	if !done.OK {
		if done.Kind != string(ValidationFailed) {
			return nil, fmt.Errorf("pvm: validate: unexpected failure %s: %s: %w", done.Kind, done.Msg, ErrProtocol)
		}
		return nil, &ValidationError{Line: done.Line, Col: done.Col, Rule: done.Rule, Message: done.Msg}
	}
	if done.Imports == nil {
		done.Imports = []string{}
	}
	return done.Imports, nil
}

// Execute runs one handler call in a fresh child process. The error is
// non-nil only for infrastructure failures; actor failures are in
// Outcome.Err.
func (e *Engine) Execute(ctx context.Context, inv *Invocation, host Host) (*Outcome, error) {
	if inv == nil || host == nil {
		return nil, errors.New("pvm: Execute needs an invocation and a host")
	}
	value := inv.Value
	if value == nil {
		value = new(big.Int)
	}
	msg := &callMsg{
		Op: "execute", Code: inv.Code, Libs: inv.Libraries, Handler: inv.Handler, Payload: inv.Payload,
		Actor: inv.Actor[:], Caller: inv.Caller[:], Origin: inv.Origin[:], Value: value,
		CyclesLimit: inv.CyclesLimit, Depth: inv.Depth, ReadOnly: inv.ReadOnly, Init: inv.Init, Deploying: inv.Deploying,
		Limits: e.cfg.Limits.workerLimits(), Costs: e.cfg.Costs.workerCosts(),
	}
	m := &meter{costs: e.cfg.Costs, cellsLimit: inv.CellsLimit, readOnly: inv.ReadOnly}
	done, err := e.run(ctx, msg, host, m)
	if err != nil {
		return nil, err
	}
	out := &Outcome{CyclesUsed: done.Cycles}
	if out.CyclesUsed > inv.CyclesLimit {
		out.CyclesUsed = inv.CyclesLimit
	}
	cells := m.cells + done.Tmp*e.cfg.Costs.TmpCellsPerByte
	if done.OK {
		cells += uint64(len(done.Ret)) * e.cfg.Costs.ReturnCellsPerByte
	}
	out.CellsUsed = cells
	switch {
	case !done.OK:
		out.Err = &ExecError{Kind: ErrorKind(done.Kind), Message: done.Msg}
	case cells > inv.CellsLimit:
		out.Err = &ExecError{Kind: OutOfCells, Message: "out of cells"}
	default:
		out.Return = done.Ret
	}
	if out.Err != nil && out.Err.Kind == OutOfCells && out.CellsUsed > inv.CellsLimit {
		out.CellsUsed = inv.CellsLimit
	}
	return out, nil
}

// run performs one call: fresh child from a zygote, protocol loop, cleanup.
func (e *Engine) run(ctx context.Context, msg *callMsg, host Host, m *meter) (*childMsg, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	scratch, err := os.MkdirTemp(e.scratch, "call-")
	if err != nil {
		return nil, fmt.Errorf("pvm: scratch dir: %w", err)
	}
	// conn is set below; cleanup waits (off the call path) for the child to
	// exit, which closes its end of the socket, then removes the scratch dir.
	var conn *os.File
	defer func() {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			if conn != nil {
				_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				_, _ = io.Copy(io.Discard, conn)
				conn.Close()
			}
			_ = os.RemoveAll(scratch)
		}()
	}()
	if err := os.Chmod(scratch, 0o755); err != nil {
		return nil, fmt.Errorf("pvm: scratch dir: %w", err)
	}
	if err := os.Mkdir(filepath.Join(scratch, "tmp"), 0o700); err != nil {
		return nil, fmt.Errorf("pvm: scratch tmp: %w", err)
	}

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("pvm: call socketpair: %w", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, fmt.Errorf("pvm: call socket: %w", err)
	}
	conn = os.NewFile(uintptr(fds[0]), "pvm-call")

	l := e.cfg.Limits
	req, err := e.codec.enc.Marshal(map[string]any{
		"dir": scratch, "sandbox": !e.cfg.NoSandbox,
		"rl": map[string]uint64{
			"as": l.AddressSpaceBytes, "cpu": l.CPUSeconds, "fsize": l.TmpBytes + 4096,
			"nofile": 16, "core": 0,
		},
	})
	if err != nil {
		unix.Close(fds[1])
		return nil, fmt.Errorf("pvm: encode spawn request: %w", err)
	}
	z := e.zygotes[int(e.next.Add(1)%uint64(len(e.zygotes)))]
	err = z.spawn(e.spec, req, fds[1])
	unix.Close(fds[1])
	if err != nil {
		return nil, err
	}

	// Safety net: a wall-clock deadline (not deterministic => infrastructure error).
	ctx, cancel := context.WithTimeout(ctx, l.WallClock)
	defer cancel()
	var pid atomic.Int64
	var killed atomic.Bool
	stop := context.AfterFunc(ctx, func() {
		killed.Store(true)
		if p := pid.Load(); p > 0 {
			_ = syscall.Kill(int(p), syscall.SIGKILL)
		}
		_ = conn.SetDeadline(time.Unix(1, 0))
	})
	defer stop()

	fail := func(what string, err error) (*childMsg, error) {
		if p := pid.Load(); p > 0 {
			_ = syscall.Kill(int(p), syscall.SIGKILL)
		}
		if killed.Load() {
			if ctx.Err() == context.DeadlineExceeded {
				return nil, fmt.Errorf("pvm: %s: %w", what, ErrWallClock)
			}
			return nil, fmt.Errorf("pvm: %s: %w", what, ctx.Err())
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
			return nil, fmt.Errorf("pvm: %s: %v: %w", what, err, ErrWorkerCrashed)
		}
		return nil, fmt.Errorf("pvm: %s: %w", what, err)
	}

	tSpawn := time.Now()
	var hello childMsg
	if err := e.codec.readFrame(conn, &hello); err != nil {
		return fail("read hello", err)
	}
	if hello.T != "hello" || hello.Pid <= 0 {
		return fail("read hello", ErrProtocol)
	}
	pid.Store(int64(hello.Pid))
	if killed.Load() {
		_ = syscall.Kill(hello.Pid, syscall.SIGKILL)
	}
	tHello := time.Now()
	if err := e.codec.writeFrame(conn, msg); err != nil {
		return fail("send call", err)
	}
	hostCalls := 0
	for {
		var cm childMsg
		if err := e.codec.readFrame(conn, &cm); err != nil {
			return fail("read frame", err)
		}
		switch cm.T {
		case "done":
			e.cfg.Logger.Debug("pvm call", "op", msg.Op, "pid", hello.Pid, "hello", tHello.Sub(tSpawn),
				"serve", time.Since(tHello), "host_calls", hostCalls, "cycles", cm.Cycles, "ok", cm.OK)
			return &cm, nil
		case "crash":
			e.cfg.Logger.Error("pvm worker crashed", "trace", cm.Msg)
			return fail("worker", fmt.Errorf("%s: %w", firstLine(cm.Msg), ErrWorkerCrashed))
		case "host":
			if host == nil || m == nil {
				return fail("host call during validation", ErrProtocol)
			}
			hostCalls++
			rep, err := m.dispatch(host, &cm.HostRequest)
			if err != nil {
				return fail("host call "+cm.Op, err)
			}
			if err := e.codec.writeFrame(conn, rep); err != nil {
				return fail("send host reply", err)
			}
		default:
			return fail("unexpected frame "+cm.T, ErrProtocol)
		}
	}
}

// firstLine returns the last non-empty line of a traceback (the exception).
func firstLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
