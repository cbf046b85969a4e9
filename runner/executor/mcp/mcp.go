// Package mcp is the runner's executor for MCP jobs (job.JobTypeMCP): it
// calls a tool on one of the operator's MCP servers through the official Go
// MCP SDK, over stdio (a child process) or streamable HTTP, and turns the
// tool result into the job result.
//
// Job input (JobSpec.Input) is a JSON object:
//
//	{"server": "everything", "tool": "echo", "arguments": {"message": "hi"}}
//
// The result bytes are chosen so committee members calling the same tool
// agree byte for byte:
//
//   - structuredContent, when the tool returns it: its canonical JSON
//     (package jsoncanon);
//   - otherwise, for the JSON data format: the text content, parsed and
//     canonicalised (an error if it is not JSON);
//   - otherwise, if every content block is text: the texts joined by "\n";
//   - otherwise: the canonical JSON of the content array, each block in its
//     MCP wire form without "_meta".
//
// A result with isError set fails the job (ErrToolFailed, an upstream
// failure) with the tool's message. Sessions are opened in New and reopened
// on the next job after a server exits or the connection breaks; Close ends
// every session and kills the stdio servers' process groups.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cowboy-foundation/cowboy/chain/codec/jsoncanon"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/internal/version"
	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// ErrToolFailed marks a tool result with isError set; it is wrapped together
// with executor.ErrUpstream.
var ErrToolFailed = errors.New("mcp tool reported an error")

// ErrElicitation marks a tool call during which the server asked for user
// input (elicitation/create, or a URL-elicitation-required error). A runner
// has no user: the request is declined at once and the job fails as the
// job's fault (wrapped with executor.ErrBadInput) instead of hanging until
// its wall time.
var ErrElicitation = errors.New("the tool asked for user input (elicitation), which a runner cannot give")

// ErrClosed is returned by Execute after Close.
var ErrClosed = errors.New("mcp executor closed")

// Executor runs MCP jobs. It is safe for concurrent use.
type Executor struct {
	servers map[string]*server
	names   []string
	log     *slog.Logger

	mu     sync.Mutex
	closed bool
}

var _ executor.Executor = (*Executor)(nil)

// New checks cfg and opens a session to every server (each within its
// connect timeout and ctx), so a misconfigured server fails the runner's
// start rather than its first job. On error every session opened so far is
// closed.
func New(ctx context.Context, cfg Config) (*Executor, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	e := &Executor{servers: map[string]*server{}, log: log}
	for _, sc := range cfg.Servers {
		s := &server{cfg: sc, log: log.With("mcp_server", sc.Name)}
		if sc.URL != "" {
			c := *hc
			next := c.Transport
			if next == nil {
				next = http.DefaultTransport
			}
			c.Transport = &textCheckTransport{next: &headerTransport{next: next, headers: sc.header()}, bad: &s.badText}
			s.http = &c
			if o := sc.OAuth; o != nil {
				// One handler per server: its token outlives sessions.
				h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
					Credentials: &oauthex.ClientCredentials{ClientID: o.ClientID, Issuer: o.Issuer,
						ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: o.secret()}},
					HTTPClient: s.http,
				})
				if err != nil {
					return nil, fmt.Errorf("mcp: server %q: oauth: %w", sc.Name, err)
				}
				s.oauth = h
			}
		}
		s.client = sdk.NewClient(&sdk.Implementation{Name: "cowboy-runner", Version: version.Version}, &sdk.ClientOptions{Logger: nil})
		s.client.AddReceivingMiddleware(s.declineElicitation)
		e.servers[sc.Name] = s
		e.names = append(e.names, sc.Name)
	}
	for _, name := range e.names {
		s := e.servers[name]
		cctx, cancel := context.WithTimeout(ctx, s.cfg.connectTimeout())
		_, err := s.session(cctx)
		cancel()
		if err != nil {
			_ = e.Close()
			return nil, fmt.Errorf("mcp: %w", err)
		}
	}
	return e, nil
}

// Type is job.JobTypeMCP.
func (e *Executor) Type() job.JobType { return job.JobTypeMCP }

// Servers lists the configured server names in configuration order.
func (e *Executor) Servers() []string { return slices.Clone(e.names) }

// Domains is the sorted union of the servers' domains: what the runner can
// advertise for MCP jobs in its registration.
func (e *Executor) Domains() []string {
	var out []string
	for _, name := range e.names {
		out = append(out, e.servers[name].cfg.Domains...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Tools lists the tools server offers (from its session, reconnecting if
// needed), sorted by name.
func (e *Executor) Tools(ctx context.Context, server string) ([]string, error) {
	s, ok := e.servers[server]
	if !ok {
		return nil, fmt.Errorf("mcp: no server %q", server)
	}
	sess, err := s.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	return sess.toolNames(), nil
}

// Close ends every session and stops the stdio servers. Safe to call more
// than once.
func (e *Executor) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	// In parallel: a stdio server gets two seconds to exit after its stdin
	// closes before it is signalled, and many do not exit on their own.
	var wg sync.WaitGroup
	for _, name := range e.names {
		wg.Go(e.servers[name].close)
	}
	wg.Wait()
	return nil
}

// Input is the job input of an MCP job.
type Input struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ParseInput decodes and checks an MCP job input.
func ParseInput(raw []byte) (*Input, error) {
	if len(raw) == 0 {
		return nil, errors.New("input is empty; want {\"server\", \"tool\", \"arguments\"}")
	}
	var in Input
	if err := jsoncanon.DecodeStrict(raw, &in); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	if in.Server == "" || in.Tool == "" {
		return nil, errors.New("input: server and tool are required")
	}
	args := bytes.TrimSpace(in.Arguments)
	if len(args) == 0 || string(args) == "null" {
		in.Arguments = json.RawMessage("{}")
	} else if args[0] != '{' {
		return nil, errors.New("input: arguments must be a JSON object")
	}
	return &in, nil
}

// Execute calls the job's tool.
func (e *Executor) Execute(ctx context.Context, req executor.Request) (executor.Result, error) {
	spec := req.Spec
	if spec == nil {
		return executor.Result{}, fmt.Errorf("mcp: %w: no job spec", executor.ErrBadInput)
	}
	if spec.JobType != job.JobTypeMCP {
		return executor.Result{}, fmt.Errorf("mcp: %w: job type %s", executor.ErrBadInput, spec.JobType)
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return executor.Result{}, fmt.Errorf("mcp: %w", ErrClosed)
	}
	in, err := ParseInput(spec.Input)
	if err != nil {
		return executor.Result{}, fmt.Errorf("mcp: %w: %w", executor.ErrBadInput, err)
	}
	s, ok := e.servers[in.Server]
	if !ok {
		return executor.Result{}, fmt.Errorf("mcp: %w: server %q is not configured here (servers: %s)", executor.ErrBadInput, in.Server, strings.Join(e.names, ", "))
	}
	if len(s.cfg.Tools) > 0 && !slices.Contains(s.cfg.Tools, in.Tool) {
		return executor.Result{}, fmt.Errorf("mcp: %w: tool %q of server %q is not allowed by this runner", executor.ErrRefused, in.Tool, in.Server)
	}
	if !entitlement.Satisfies(spec.RequiredDomains, s.cfg.Domains) {
		return executor.Result{}, fmt.Errorf("mcp: %w: server %q may not reach required_domains %v (allowed: %v)", executor.ErrRefused, in.Server, spec.RequiredDomains, s.cfg.Domains)
	}
	start := time.Now()
	res, raw, err := s.call(ctx, in)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, executor.ErrBadInput) {
			return executor.Result{}, fmt.Errorf("mcp: %w: wall time %d ms: %w", executor.ErrBoundExceeded, spec.Bounds.MaxWallTimeMs, err)
		}
		return executor.Result{}, fmt.Errorf("mcp: %w", err)
	}
	if lim := spec.Bounds.MaxMemoryBytes; lim > 0 && uint64(len(raw)) > lim {
		return executor.Result{}, fmt.Errorf("mcp: %w: tool result is %d bytes, bounds.max_memory_bytes %d", executor.ErrBoundExceeded, len(raw), lim)
	}
	if res.IsError {
		return executor.Result{}, fmt.Errorf("mcp: %w: %w: %s.%s: %s", executor.ErrUpstream, ErrToolFailed, in.Server, in.Tool, clip(textOf(res.Content), 512))
	}
	out, err := resultBytes(spec.ResultSchema.DataFormat, res)
	if err != nil {
		return executor.Result{}, fmt.Errorf("mcp: %s.%s: %w", in.Server, in.Tool, err)
	}
	if lim := verify.MaxResultBytes(spec); len(out) > lim {
		return executor.Result{}, fmt.Errorf("mcp: %w: result is %d bytes, max_return_bytes %d", executor.ErrBoundExceeded, len(out), lim)
	}
	ms := uint64(time.Since(start).Milliseconds())
	if ms == 0 {
		ms = 1
	}
	e.log.Debug("mcp job done", "job", req.JobID, "server", in.Server, "tool", in.Tool, "bytes", len(out), "ms", ms)
	return executor.Result{Output: out, Usage: job.Usage{WallTimeMs: ms, MemoryBytes: uint64(len(raw))}}, nil
}

// resultBytes is the committed form of a tool result (see the package doc).
func resultBytes(format job.DataFormatKind, res *sdk.CallToolResult) ([]byte, error) {
	if res.StructuredContent != nil {
		out, err := jsoncanon.Marshal(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("%w: structuredContent: %w", executor.ErrUpstream, err)
		}
		return out, nil
	}
	allText := true
	var texts []string
	for _, c := range res.Content {
		t, ok := c.(*sdk.TextContent)
		if !ok {
			allText = false
			break
		}
		texts = append(texts, t.Text)
	}
	if format == job.FormatJSON {
		if !allText {
			return nil, fmt.Errorf("%w: tool returned non-text content for a JSON job", executor.ErrUpstream)
		}
		out, err := jsoncanon.Canonicalize([]byte(strings.Join(texts, "\n")))
		if err != nil {
			return nil, fmt.Errorf("%w: tool text is not JSON: %w", executor.ErrUpstream, err)
		}
		return out, nil
	}
	if allText {
		return []byte(strings.Join(texts, "\n")), nil
	}
	blocks := make([]any, 0, len(res.Content))
	for _, c := range res.Content {
		b, err := c.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("%w: content: %w", executor.ErrUpstream, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%w: content: %w", executor.ErrUpstream, err)
		}
		delete(m, "_meta")
		blocks = append(blocks, m)
	}
	out, err := jsoncanon.Marshal(blocks)
	if err != nil {
		return nil, fmt.Errorf("%w: content: %w", executor.ErrUpstream, err)
	}
	return out, nil
}

func textOf(cs []sdk.Content) string {
	var parts []string
	for _, c := range cs {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		return "(no text)"
	}
	return strings.Join(parts, "\n")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// --- sessions ---

// server is one configured server and its current session.
type server struct {
	cfg    ServerConfig
	client *sdk.Client
	http   *http.Client
	oauth  auth.OAuthHandler // nil: no OAuth (url servers with [oauth] only)
	log    *slog.Logger

	// elicited counts the elicitation requests declined on this server's
	// sessions; a call that sees it move fails with ErrElicitation.
	elicited atomic.Int64
	// badText counts HTTP response bodies and stdio messages that were not
	// faithful UTF-8 (textCheckTransport, stdioTransport); a call that
	// sees it move fails with
	// executor.ErrNotUTF8 instead of committing what the SDK's JSON
	// decoding repaired.
	badText atomic.Int64

	mu      sync.Mutex // guards sess, closed
	sess    *session
	closed  bool
	retired sync.WaitGroup // sessions shutting down in the background
}

// session is one live connection. done closes when the SDK session ends
// (server exit, broken pipe, Close).
type session struct {
	cs     *sdk.ClientSession
	cmd    *exec.Cmd
	stderr *tail
	done   chan struct{}

	// checked is non-nil while a health check runs after a cut call and
	// closes when it ends; guarded by the server's mu. Jobs wait for it
	// rather than queue a call behind a server that stopped reading.
	checked chan struct{}

	mu      sync.Mutex
	tools   map[string]*sdk.Tool
	schemas map[string]*jsonschema.Schema // compiled input schemas; nil entry: not checkable
}

func (s *session) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

func (s *session) tool(name string) *sdk.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools[name]
}

func (s *session) toolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.tools))
	for n := range s.tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// refreshTools reloads the tool list.
func (s *session) refreshTools(ctx context.Context) error {
	tools := map[string]*sdk.Tool{}
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		tools[t.Name] = t
	}
	s.mu.Lock()
	s.tools = tools
	s.schemas = map[string]*jsonschema.Schema{}
	s.mu.Unlock()
	return nil
}

// checkArguments validates args against the tool's declared inputSchema
// before calling it, so a job with wrong arguments fails as the job's fault
// without running anything. A schema the validator cannot compile (remote
// references, unknown drafts) is left to the server to enforce.
func (s *session) checkArguments(tool *sdk.Tool, args json.RawMessage) error {
	s.mu.Lock()
	sch, seen := s.schemas[tool.Name]
	s.mu.Unlock()
	if !seen {
		sch = compileInputSchema(tool)
		s.mu.Lock()
		s.schemas[tool.Name] = sch
		s.mu.Unlock()
	}
	if sch == nil {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	if err := sch.Validate(doc); err != nil {
		return fmt.Errorf("arguments do not match the tool's input schema: %s", clip(strings.Join(strings.Fields(err.Error()), " "), 512))
	}
	return nil
}

func compileInputSchema(tool *sdk.Tool) *jsonschema.Schema {
	if tool.InputSchema == nil {
		return nil
	}
	raw, err := json.Marshal(tool.InputSchema)
	if err != nil {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no file or network references
	const url = "cowboy:///mcp-input-schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil
	}
	return sch
}

// session returns the live session, opening a new one if there is none or
// the last one ended.
func (s *server) session(ctx context.Context) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	for s.sess != nil && s.sess.checked != nil {
		ch := s.sess.checked
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			s.mu.Lock()
			return nil, fmt.Errorf("%w: server %q: waiting for its health check: %w", executor.ErrUpstream, s.cfg.Name, ctx.Err())
		}
		s.mu.Lock()
		if s.closed {
			return nil, ErrClosed
		}
	}
	if s.sess != nil {
		if s.sess.alive() {
			return s.sess, nil
		}
		s.log.Warn("mcp session ended; reconnecting", "stderr", s.sess.stderr.String())
		s.retire(s.sess)
		s.sess = nil
	}
	sess, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	s.sess = sess
	return sess, nil
}

// drop ends sess if it is still the current session, so the next job
// reconnects.
func (s *server) drop(sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == sess {
		s.sess = nil
		s.retire(sess)
	}
}

// retire shuts sess down in the background, so a job does not wait for a
// broken server to exit; close waits for every retired session.
func (s *server) retire(sess *session) {
	s.retired.Go(sess.shutdown)
}

func (s *server) connect(ctx context.Context) (*session, error) {
	sess := &session{done: make(chan struct{}), stderr: &tail{max: 4096}}
	var t sdk.Transport
	if s.cfg.URL != "" {
		t = &sdk.StreamableClientTransport{
			Endpoint:     s.cfg.URL,
			HTTPClient:   s.http,
			OAuthHandler: s.oauth,
			MaxRetries:   1,
			// The standalone GET stream stays on: servers send requests
			// not tied to a POST (elicitation/create from a tool handler)
			// there, and a request the client never sees is one it never
			// declines, so the call would wait for its wall time.
		}
	} else {
		// Not CommandContext: the server outlives the job that started it.
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Env = s.cfg.commandEnv()
		cmd.Dir = s.cfg.Dir
		cmd.Stderr = sess.stderr
		isolate(cmd)
		sess.cmd = cmd
		t = &stdioTransport{cmd: cmd, bad: &s.badText, terminate: 2 * time.Second}
	}
	cs, err := s.client.Connect(ctx, t, nil)
	if err != nil {
		if sess.cmd != nil {
			killGroup(sess.cmd)
			_ = sess.cmd.Wait()
		}
		return nil, fmt.Errorf("%w: connect to server %q: %w%s", executor.ErrUpstream, s.cfg.Name, err, sess.stderr.suffix())
	}
	sess.cs = cs
	go func() {
		_ = cs.Wait()
		close(sess.done)
	}()
	if err := sess.refreshTools(ctx); err != nil {
		sess.shutdown()
		return nil, fmt.Errorf("%w: server %q: %w%s", executor.ErrUpstream, s.cfg.Name, err, sess.stderr.suffix())
	}
	s.log.Info("mcp session open", "tools", len(sess.tools), "transport", map[bool]string{true: "http", false: "stdio"}[s.cfg.URL != ""])
	return sess, nil
}

// shutdown closes the session and reaps the server process.
func (s *session) shutdown() {
	if s.cs != nil {
		_ = s.cs.Close()
	}
	if s.cmd != nil {
		killGroup(s.cmd)
	}
}

func (s *server) close() {
	s.mu.Lock()
	s.closed = true
	sess := s.sess
	s.sess = nil
	s.mu.Unlock()
	if sess != nil {
		sess.shutdown()
	}
	s.retired.Wait()
}

// call runs one tool call and returns the result and its wire size. A call
// that fails because the session broke is retried once on a new session
// only for tools the operator's server marks read-only or idempotent, since
// the first attempt may have run.
func (s *server) call(ctx context.Context, in *Input) (*sdk.CallToolResult, []byte, error) {
	for attempt := 0; ; attempt++ {
		sess, err := s.session(ctx)
		if err != nil {
			return nil, nil, err
		}
		tool := sess.tool(in.Tool)
		if tool == nil {
			// The list may have changed since the session opened.
			if err := sess.refreshTools(ctx); err != nil {
				s.drop(sess)
				return nil, nil, fmt.Errorf("%w: server %q: %w", executor.ErrUpstream, in.Server, err)
			}
			if tool = sess.tool(in.Tool); tool == nil {
				return nil, nil, fmt.Errorf("%w: server %q has no tool %q (tools: %s)", executor.ErrBadInput, in.Server, in.Tool, strings.Join(sess.toolNames(), ", "))
			}
		}
		if err := sess.checkArguments(tool, in.Arguments); err != nil {
			return nil, nil, fmt.Errorf("%w: %s.%s: %w", executor.ErrBadInput, in.Server, in.Tool, err)
		}
		elicited, badText := s.elicited.Load(), s.badText.Load()
		res, err := sess.cs.CallTool(ctx, &sdk.CallToolParams{Name: in.Tool, Arguments: in.Arguments})
		if s.badText.Load() != badText {
			return nil, nil, fmt.Errorf("%w: %w: %s.%s: the server's response", executor.ErrUpstream, executor.ErrNotUTF8, in.Server, in.Tool)
		}
		var rpcErr *jsonrpcError
		if s.elicited.Load() != elicited || (errors.As(err, &rpcErr) && rpcErr.Code == sdk.CodeURLElicitationRequired) {
			// Whatever the server made of the refusal (an error, a
			// result saying "declined"), the job cannot be done here.
			// Counting per server, a concurrent call's elicitation may
			// be attributed to this one; both jobs needed one or the
			// other, and neither could be served by a runner.
			return nil, nil, fmt.Errorf("%w: %w: %s.%s", executor.ErrBadInput, ErrElicitation, in.Server, in.Tool)
		}
		if err == nil {
			raw, merr := json.Marshal(res)
			if merr != nil {
				return nil, nil, fmt.Errorf("%w: encode tool result: %w", executor.ErrUpstream, merr)
			}
			return res, raw, nil
		}
		if ctx.Err() != nil {
			// The call was cut at the job's bound. The server may have
			// stopped reading (wedged), and every later call would then
			// time out too: check it before the next job uses it.
			s.checkHealth(sess)
			return nil, nil, err
		}
		if errors.As(err, &rpcErr) && rpcErr.Code == codeInvalidParams {
			return nil, nil, fmt.Errorf("%w: %s.%s: %s", executor.ErrBadInput, in.Server, in.Tool, rpcErr.Message)
		}
		if errors.As(err, &rpcErr) {
			return nil, nil, fmt.Errorf("%w: %s.%s: server error %d: %s", executor.ErrUpstream, in.Server, in.Tool, rpcErr.Code, rpcErr.Message)
		}
		// Transport failure: this session is finished.
		s.log.Warn("mcp call failed; dropping session", "tool", in.Tool, "err", err, "stderr", sess.stderr.String())
		s.drop(sess)
		safe := tool.Annotations != nil && (tool.Annotations.ReadOnlyHint || tool.Annotations.IdempotentHint)
		if attempt > 0 || !safe {
			return nil, nil, fmt.Errorf("%w: %s.%s: %w%s", executor.ErrUpstream, in.Server, in.Tool, err, sess.stderr.suffix())
		}
	}
}

// declineElicitation answers a server's elicitation/create at once with
// an error, and counts it (ErrElicitation). The client never advertises the
// elicitation capability; this covers servers that ask anyway, which
// otherwise leave the call waiting for its wall time.
func (s *server) declineElicitation(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "elicitation/create" {
			return next(ctx, method, req)
		}
		s.elicited.Add(1)
		s.log.Warn("declined an elicitation request: a runner has no user to ask")
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: "elicitation declined: this client is a Cowboy runner executing an off-chain job; no user can answer"}
	}
}

// checkHealth pings sess in the background, bounded by the server's
// health timeout, and drops it (killing a stdio server's process group) if
// the server does not answer; jobs asking for a session wait for the
// verdict. A session already being checked, or no longer current, is left
// alone.
func (s *server) checkHealth(sess *session) {
	s.mu.Lock()
	if s.sess != sess || sess.checked != nil || s.closed {
		s.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	sess.checked = ch
	s.retired.Add(1) // under mu: close cannot be waiting yet
	s.mu.Unlock()
	go func() {
		defer s.retired.Done()
		defer close(ch)
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.healthTimeout())
		err := sess.cs.Ping(ctx, nil)
		cancel()
		s.mu.Lock()
		sess.checked = nil
		s.mu.Unlock()
		if err != nil {
			s.log.Warn("mcp server did not answer a ping after a cut call; restarting it", "err", err, "stderr", sess.stderr.String())
			s.drop(sess)
			return
		}
		s.log.Debug("mcp session healthy after a cut call")
	}()
}

// tail keeps the last max bytes written (a server's stderr), for errors.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

func (t *tail) suffix() string {
	if s := t.String(); s != "" {
		return " (server stderr: " + clip(s, 1024) + ")"
	}
	return ""
}

type jsonrpcError = jsonrpc.Error

const codeInvalidParams = jsonrpc.CodeInvalidParams
