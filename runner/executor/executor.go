// Package executor defines how the runner daemon runs one job's work: the
// Executor interface every job type implements (LLM, HTTP, MCP), the request
// it receives and the result and usage it reports. Implementations live in
// the subpackages llm, httpx and mcp; the daemon (package runner) picks one by
// job type through a Registry.
//
// An executor enforces the job's resource bounds itself: the context it is
// given carries the wall-time deadline, and it must stop at MaxTokens,
// MaxMemoryBytes (response bytes held) and Spec.ResultSchema.MaxReturnBytes.
package executor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Request is one job handed to an executor.
type Request struct {
	JobID types.Hash
	Spec  *job.JobSpec
	// Height is the chain height at which the runner picked the job up; it
	// is informational (logging, freshness of snapshots).
	Height uint64
	// Inputs are the files of the job's input volumes (JobSpec.Volumes),
	// read by the daemon before the executor runs, in path order. Empty
	// for jobs without input volumes. See ExpandVolumes.
	Inputs []VolumeFile
}

// Result is what an executor produced. Output is the exact byte string the
// runner signs and commits; Embedding is set only for SemanticSimilarity
// jobs (fixed-point, as verify.Reveal carries it).
type Result struct {
	Output    []byte
	Embedding []int32
	Usage     job.Usage
}

// Executor runs jobs of one type.
type Executor interface {
	// Type is the job type this executor serves.
	Type() job.JobType
	// Execute runs the job. It must return when ctx is done (the daemon
	// sets ctx's deadline from the job's MaxWallTimeMs) and must never
	// return more than the job's bounds allow.
	Execute(ctx context.Context, req Request) (Result, error)
	// Close releases connections and child processes.
	Close() error
}

// Errors an executor wraps so the daemon can tell the job's fault from the
// runner's.
var (
	// ErrBadInput: the job input cannot be run by any runner (malformed
	// input, unknown model/tool/server, domain not allowed by the job).
	ErrBadInput = errors.New("bad job input")
	// ErrBoundExceeded: the work needed more than the job's bounds
	// (tokens, bytes, wall time).
	ErrBoundExceeded = errors.New("resource bound exceeded")
	// ErrUpstream: the remote service failed (connection, 5xx, protocol).
	ErrUpstream = errors.New("upstream failure")
	// ErrRefused: this runner's own policy refuses the job (its allowlist,
	// a capability it does not offer). The daemon reports no fault for it:
	// the runner should not have been selected. A refusal every runner
	// would make (a job host resolving to a private address) is the job's
	// fault and wraps ErrBadInput instead.
	ErrRefused = errors.New("refused by runner policy")
)

// Registry maps job types to executors. It is safe for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	m         map[job.JobType]Executor
	toolchain types.Hash
}

// SetToolchainDigest declares the toolchain digest this runner executes
// under (spec 002 §5.4): a job pinning another digest is refused
// (ErrRefused) before any executor runs. The zero digest declares none,
// so every pinned job is refused.
func (r *Registry) SetToolchainDigest(d types.Hash) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.toolchain = d
}

// ToolchainDigest is the declared toolchain digest.
func (r *Registry) ToolchainDigest() types.Hash {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.toolchain
}

// NewRegistry returns a registry holding execs; a later executor of the same
// type replaces an earlier one.
func NewRegistry(execs ...Executor) *Registry {
	r := &Registry{m: make(map[job.JobType]Executor)}
	for _, e := range execs {
		r.m[e.Type()] = e
	}
	return r
}

// Register adds or replaces the executor for e.Type().
func (r *Registry) Register(e Executor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[e.Type()] = e
}

// Get returns the executor for t.
func (r *Registry) Get(t job.JobType) (Executor, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.m[t]
	return e, ok
}

// Types lists the served job types in ascending order.
func (r *Registry) Types() []job.JobType {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]job.JobType, 0, len(r.m))
	for t := range r.m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Execute runs req on the executor for its job type under the job's wall-time
// bound, and fills Usage.WallTimeMs when the executor left it zero.
func (r *Registry) Execute(ctx context.Context, req Request) (Result, error) {
	if req.Spec == nil {
		return Result{}, fmt.Errorf("execute job %s: %w: no spec", req.JobID, ErrBadInput)
	}
	e, ok := r.Get(req.Spec.JobType)
	if !ok {
		return Result{}, fmt.Errorf("execute job %s: %w: job type %s not served", req.JobID, ErrRefused, req.Spec.JobType)
	}
	if pin := req.Spec.ToolchainDigest; pin != (types.Hash{}) && pin != r.ToolchainDigest() {
		return Result{}, fmt.Errorf("execute job %s: %w: the job pins toolchain %s, this runner runs %s", req.JobID, ErrRefused, pin, r.ToolchainDigest())
	}
	if ms := req.Spec.Bounds.MaxWallTimeMs; ms > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		defer cancel()
	}
	start := time.Now()
	res, err := e.Execute(ctx, req)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && !errors.Is(err, ErrBoundExceeded) {
			err = fmt.Errorf("%w: wall time %d ms: %w", ErrBoundExceeded, req.Spec.Bounds.MaxWallTimeMs, err)
		}
		return Result{}, fmt.Errorf("execute job %s (%s): %w", req.JobID, req.Spec.JobType, err)
	}
	if res.Usage.WallTimeMs == 0 {
		res.Usage.WallTimeMs = uint64(time.Since(start).Milliseconds())
	}
	// With an output volume a larger output is not an error: the runner
	// stores it there as a blob and the result is its reference
	// (runner.BlobResult).
	_, toVolume := req.Spec.OutputVolume()
	if max := req.Spec.ResultSchema.MaxReturnBytes; max > 0 && len(res.Output) > int(max) && !toVolume {
		return Result{}, fmt.Errorf("execute job %s: %w: result %d bytes, max_return_bytes %d", req.JobID, ErrBoundExceeded, len(res.Output), max)
	}
	return res, nil
}

// Close closes every executor and returns the first error.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first error
	for _, t := range sortedTypes(r.m) {
		if err := r.m[t].Close(); err != nil && first == nil {
			first = fmt.Errorf("close %s executor: %w", t, err)
		}
	}
	return first
}

func sortedTypes(m map[job.JobType]Executor) []job.JobType {
	out := make([]job.JobType, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
