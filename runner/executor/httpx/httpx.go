// Package httpx is the runner's HTTP executor (job type Http): it fetches the
// URLs a job names from domains both the job's entitlement
// (JobSpec.RequiredDomains) and the runner's allowlist admit, refuses
// private and loopback targets at dial time unless the operator allows them,
// extracts fields by JSONPath, CSS selector, XPath or regular expression,
// combines several sources by a snapshot mode (first_valid, median, majority,
// latest) under a freshness bound, and returns canonical JSON so that every
// honest committee member produces the same bytes. The job input format is
// documented on Input and in docs/EXECUTORS.md.
package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cowboy-foundation/cowboy/chain/codec/jsoncanon"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// Executor runs HTTP jobs. It is safe for concurrent use.
type Executor struct {
	cfg       Config
	runner    patternSet
	transport *http.Transport
	now       func() time.Time // freshness clock; tests replace it
}

var _ executor.Executor = (*Executor)(nil)

// New returns an HTTP executor for cfg (zero fields take their defaults).
func New(cfg Config) (*Executor, error) {
	cfg = cfg.withDefaults()
	runner := patternSet{any: len(cfg.AllowedDomains) == 0}
	if !runner.any {
		var err error
		if runner, err = compilePatterns(cfg.AllowedDomains, cfg.DomainSets); err != nil {
			return nil, fmt.Errorf("httpx config: allowed_domains: %w", err)
		}
	}
	for name, members := range cfg.DomainSets {
		if _, err := compilePatterns(members, nil); err != nil {
			return nil, fmt.Errorf("httpx config: domain_sets.%s: %w", name, err)
		}
	}
	return &Executor{cfg: cfg, runner: runner, transport: newTransport(cfg), now: time.Now}, nil
}

// Type implements executor.Executor.
func (e *Executor) Type() job.JobType { return job.JobTypeHTTP }

// Close releases idle connections.
func (e *Executor) Close() error {
	e.transport.CloseIdleConnections()
	return nil
}

// Domains is Config.Domains of the executor's configuration.
func (e *Executor) Domains() []string { return e.cfg.Domains() }

// policy decides whether a URL may be fetched for one job.
type policy struct {
	job    patternSet
	runner patternSet
}

func (e *Executor) policyFor(spec *job.JobSpec) (*policy, error) {
	if len(spec.RequiredDomains) == 0 {
		return nil, fmt.Errorf("%w: the job declares no required_domains; HTTP jobs must declare the domains they fetch", executor.ErrBadInput)
	}
	js, err := compilePatterns(spec.RequiredDomains, e.cfg.DomainSets)
	if err != nil {
		// An unknown set name is one this runner does not serve; a
		// malformed entry is the job's fault.
		if errors.Is(err, errUnknownSet) {
			return nil, fmt.Errorf("%w: required_domains: %w", executor.ErrRefused, err)
		}
		return nil, fmt.Errorf("%w: required_domains: %w", executor.ErrBadInput, err)
	}
	return &policy{job: js, runner: e.runner}, nil
}

func (p *policy) check(u *url.URL) error {
	h := normalizeHost(u.Hostname())
	if !p.job.matches(h) {
		return fmt.Errorf("%w: host %q is not covered by the job's required_domains", executor.ErrBadInput, h)
	}
	if !p.runner.matches(h) {
		return fmt.Errorf("%w: host %q is not in this runner's allowed_domains", executor.ErrRefused, h)
	}
	return nil
}

// source is one fetched and extracted source.
type source struct {
	err   error
	body  []byte
	value any
	canon []byte    // the whole body in canonical JSON, for JSON jobs without rules
	ts    time.Time // zero when unknown
}

// Execute implements executor.Executor.
func (e *Executor) Execute(ctx context.Context, req executor.Request) (executor.Result, error) {
	start := time.Now()
	spec := req.Spec
	if spec == nil {
		return executor.Result{}, fmt.Errorf("%w: no job spec", executor.ErrBadInput)
	}
	if spec.JobType != job.JobTypeHTTP {
		return executor.Result{}, fmt.Errorf("%w: job type %s is not http", executor.ErrBadInput, spec.JobType)
	}
	p, err := parseInput(spec.Input)
	if err != nil {
		return executor.Result{}, fmt.Errorf("%w: %w", executor.ErrBadInput, err)
	}
	pol, err := e.policyFor(spec)
	if err != nil {
		return executor.Result{}, err
	}
	for i, u := range p.sources {
		if err := pol.check(u); err != nil {
			return executor.Result{}, fmt.Errorf("sources[%d]: %w", i, err)
		}
	}
	limit := e.cfg.MaxResponseBytes
	total := limit * int64(len(p.sources))
	if mm := spec.Bounds.MaxMemoryBytes; mm > 0 {
		limit = min(limit, int64(min(mm, 1<<62)))
		total = min(total, int64(min(mm, 1<<62)))
	}
	bud := &budget{}
	bud.left.Store(total)

	srcs := e.gather(ctx, p, spec, pol, limit, bud)
	used := total - max(bud.left.Load(), 0)
	val, from, err := p.combine(srcs)
	if err != nil {
		return executor.Result{}, err
	}
	out, err := encode(spec, p, val, from, srcs)
	if err != nil {
		return executor.Result{}, err
	}
	if lim := min(int(spec.ResultSchema.MaxReturnBytes), job.MaxInlineResultBytes); spec.ResultSchema.MaxReturnBytes > 0 && len(out) > lim {
		return executor.Result{}, fmt.Errorf("%w: result is %d bytes, max_return_bytes %d", executor.ErrBoundExceeded, len(out), lim)
	}
	return executor.Result{Output: out, Usage: job.Usage{
		WallTimeMs:  uint64(max(time.Since(start).Milliseconds(), 1)),
		MemoryBytes: uint64(used),
	}}, nil
}

// gather fetches every source concurrently and prepares (extracts, checks
// freshness) each as it arrives. With several sources each fetch may use at
// most three quarters of the time left, so one hanging source fails alone
// and the others still combine; first_valid stops the remaining fetches as
// soon as its answer is settled.
func (e *Executor) gather(ctx context.Context, p *plan, spec *job.JobSpec, pol *policy, limit int64, bud *budget) []source {
	srcs := make([]source, len(p.sources))
	now := e.now()
	get := func(ctx context.Context, i int) {
		f, err := e.fetch(ctx, pol, p, p.sources[i], limit, bud)
		if err != nil {
			srcs[i].err = err
			return
		}
		srcs[i].body = f.body
		if spec.ResultSchema.DataFormat != job.FormatBinary {
			if srcs[i].body, srcs[i].err = toUTF8(f.body, f.contentType); srcs[i].err != nil {
				return
			}
		}
		srcs[i].ts = f.lastModified
		if srcs[i].ts.IsZero() {
			srcs[i].ts = f.date
		}
	}
	if len(srcs) == 1 {
		get(ctx, 0)
		if srcs[0].err == nil {
			srcs[0].err = e.prepare(p, spec, &srcs[0], now)
		}
		return srcs
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if dl, ok := ctx.Deadline(); ok {
		var c2 context.CancelFunc
		fctx, c2 = context.WithTimeout(fctx, time.Until(dl)*3/4)
		defer c2()
	}
	arrived := make(chan int, len(srcs))
	var wg sync.WaitGroup
	for i := range srcs {
		wg.Go(func() {
			get(fctx, i)
			arrived <- i
		})
	}
	// Extraction runs on this goroutine, one source at a time: a job's
	// compiled rules are shared by its sources.
	finished := make([]bool, len(srcs))
	for range srcs {
		i := <-arrived
		finished[i] = true
		if srcs[i].err == nil {
			srcs[i].err = e.prepare(p, spec, &srcs[i], now)
		}
		if p.snapshot == SnapshotFirstValid && p.minValid == 1 && firstSettled(srcs, finished) {
			break
		}
	}
	cancel()
	wg.Wait()
	for i := range srcs {
		if !finished[i] && srcs[i].err == nil {
			srcs[i].err = errors.New("not needed: an earlier source was valid")
		}
	}
	return srcs
}

// firstSettled reports whether the first valid source is known: every
// source before it finished and failed.
func firstSettled(srcs []source, finished []bool) bool {
	for i := range srcs {
		if !finished[i] {
			return false
		}
		if srcs[i].err == nil {
			return true
		}
	}
	return true
}

// prepare extracts one fetched source and applies the freshness bound.
func (e *Executor) prepare(p *plan, spec *job.JobSpec, s *source, now time.Time) error {
	if len(p.rules) == 0 && spec.ResultSchema.DataFormat == job.FormatJSON {
		// The body is the result: canonicalise it straight from its bytes,
		// refusing what the canonicaliser would repair (lone surrogates).
		if err := executor.CheckText(s.body); err != nil {
			return fmt.Errorf("%w: response: %w", executor.ErrUpstream, err)
		}
		c, err := jsoncanon.Canonicalize(s.body)
		if err != nil {
			return fmt.Errorf("%w: response is not JSON: %w", executor.ErrUpstream, err)
		}
		s.canon = c
	}
	if s.canon == nil || p.snapshot == SnapshotMedian || p.snapshot == SnapshotMajority {
		v, err := p.extract(&document{body: s.body})
		if err != nil {
			return fmt.Errorf("%w: extraction: %w", executor.ErrUpstream, err)
		}
		s.value = v
	}
	v := s.value
	if p.tsField != "" {
		tv := v.(map[string]any)[p.tsField]
		ts, err := parseTimestamp(tv)
		if err != nil {
			return fmt.Errorf("%w: timestamp_field %q: %w", executor.ErrUpstream, p.tsField, err)
		}
		s.ts = ts
	}
	if p.maxAge > 0 || p.snapshot == SnapshotLatest {
		if s.ts.IsZero() {
			return fmt.Errorf("%w: no timestamp (no timestamp_field, Last-Modified or Date)", executor.ErrUpstream)
		}
	}
	if p.maxAge > 0 {
		if age := now.Sub(s.ts); age > time.Duration(p.maxAge)*time.Second {
			return fmt.Errorf("%w: data is %s old, max_age_seconds %d", executor.ErrUpstream, age.Truncate(time.Second), p.maxAge)
		}
	}
	return nil
}

// parseTimestamp reads an extracted timestamp: a number or numeric string of
// Unix seconds (milliseconds when above 10^12), or an RFC 3339 / HTTP date.
func parseTimestamp(v any) (time.Time, error) {
	var text string
	switch x := v.(type) {
	case json.Number:
		text = string(x)
	case string:
		text = strings.TrimSpace(x)
		if t, err := time.Parse(time.RFC3339Nano, text); err == nil {
			return t, nil
		}
		if t, err := http.ParseTime(text); err == nil {
			return t, nil
		}
	default:
		return time.Time{}, fmt.Errorf("value of type %s is not a timestamp", jsonType(v))
	}
	r, err := parseDecimal(text)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a Unix time or RFC 3339 date", truncate(text))
	}
	if r.Cmp(big.NewRat(1e12, 1)) > 0 {
		r.Quo(r, big.NewRat(1000, 1))
	}
	ms, _ := new(big.Rat).Mul(r, big.NewRat(1000, 1)).Float64()
	if ms < 0 || ms > 1e16 {
		return time.Time{}, fmt.Errorf("timestamp %s out of range", text)
	}
	return time.UnixMilli(int64(ms)), nil
}

// combine applies the snapshot mode to the sources; from is the index of
// the source whose value was taken whole, or -1 for a computed value.
func (p *plan) combine(srcs []source) (val any, from int, err error) {
	var valid []int
	for i, s := range srcs {
		if s.err == nil {
			valid = append(valid, i)
		}
	}
	if len(valid) < p.minValid {
		return nil, -1, p.sourceFailure(srcs, len(valid))
	}
	key := func(i int) any {
		if p.field != "" {
			return srcs[i].value.(map[string]any)[p.field]
		}
		return srcs[i].value
	}
	switch p.snapshot {
	case SnapshotFirstValid:
		return srcs[valid[0]].value, valid[0], nil
	case SnapshotLatest:
		best := valid[0]
		for _, i := range valid[1:] {
			if srcs[i].ts.After(srcs[best].ts) {
				best = i
			}
		}
		return srcs[best].value, best, nil
	case SnapshotMajority:
		counts := map[string]int{}
		first := map[string]int{}
		for _, i := range valid {
			kb, err := canonicalJSON(key(i))
			if err != nil {
				return nil, -1, err
			}
			k := string(kb)
			if _, ok := first[k]; !ok {
				first[k] = i
			}
			counts[k]++
		}
		for k, n := range counts {
			if 2*n > len(valid) {
				return srcs[first[k]].value, first[k], nil
			}
		}
		return nil, -1, fmt.Errorf("%w: snapshot majority: no value held by more than half of %d valid sources", executor.ErrUpstream, len(valid))
	case SnapshotMedian:
		nums := make([]*big.Rat, 0, len(valid))
		for _, i := range valid {
			n, err := numberOf(key(i))
			if err != nil {
				return nil, -1, fmt.Errorf("%w: snapshot median: source %d: %w", executor.ErrUpstream, i, err)
			}
			nums = append(nums, n)
		}
		slices.SortFunc(nums, func(a, b *big.Rat) int { return a.Cmp(b) })
		m := new(big.Rat).Set(nums[len(nums)/2])
		if len(nums)%2 == 0 {
			m.Add(m, nums[len(nums)/2-1]).Quo(m, big.NewRat(2, 1))
		}
		s, err := decimalString(m)
		if err != nil {
			return nil, -1, fmt.Errorf("%w: snapshot median: %w", executor.ErrUpstream, err)
		}
		if p.field == "" {
			return json.Number(s), -1, nil
		}
		obj := map[string]any{}
		for k, v := range srcs[valid[0]].value.(map[string]any) {
			obj[k] = v
		}
		obj[p.field] = json.Number(s)
		return obj, -1, nil
	}
	return nil, -1, fmt.Errorf("%w: snapshot %q", executor.ErrBadInput, p.snapshot)
}

// sourceFailure reports too few valid sources. Its class is the first failed
// source's (so a single refused or oversized source reads as such); the
// message lists every failure.
func (p *plan) sourceFailure(srcs []source, valid int) error {
	var first error
	var msgs []string
	for i, s := range srcs {
		if s.err == nil {
			continue
		}
		if first == nil {
			first = s.err
		}
		msgs = append(msgs, fmt.Sprintf("sources[%d] %s: %v", i, p.sources[i].Redacted(), s.err))
	}
	if len(srcs) == 1 {
		return first
	}
	return fmt.Errorf("%d of %d sources valid, need %d: %w%s", valid, len(srcs), p.minValid,
		errClass(first), "; "+strings.Join(msgs, "; "))
}

// errClass returns the executor sentinel err wraps.
func errClass(err error) error {
	for _, c := range []error{executor.ErrRefused, executor.ErrBadInput, executor.ErrBoundExceeded, executor.ErrUpstream} {
		if errors.Is(err, c) {
			return c
		}
	}
	return executor.ErrUpstream
}

// encode renders the result bytes. JSON jobs get canonical JSON. Text and
// binary jobs without extraction rules get the chosen response body
// verbatim; with rules, a string value is returned as its text and any other
// value as canonical JSON.
func encode(spec *job.JobSpec, p *plan, val any, from int, srcs []source) ([]byte, error) {
	var out []byte
	var err error
	switch {
	case from >= 0 && srcs[from].canon != nil:
		out = srcs[from].canon
	case spec.ResultSchema.DataFormat == job.FormatJSON:
		out, err = canonicalJSON(val)
	case len(p.rules) == 0 && from >= 0:
		out = srcs[from].body
	default:
		if s, ok := val.(string); ok {
			out = []byte(s)
		} else {
			out, err = canonicalJSON(val)
		}
	}
	if err != nil {
		return nil, err
	}
	if spec.ResultSchema.DataFormat == job.FormatText && !utf8.Valid(out) {
		return nil, fmt.Errorf("%w: %w: the text result is not UTF-8", executor.ErrUpstream, executor.ErrNotUTF8)
	}
	return out, nil
}
