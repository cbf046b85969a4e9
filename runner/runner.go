// Package runner is the runner daemon of the off-chain compute market
// (CIP-2): it registers and heartbeats in the Runner Registry, follows the
// chain for its job assignments, runs each job on an executor, signs and
// commits the result, delivers it to the committee's aggregator (or, as
// aggregator, collects the committee's results, verifies them with
// chain/offchain/verify and submits the verified result), and falls back to
// individual reveals when the aggregator is silent.
//
// Every in-flight job is a record in a bbolt file whose state is written
// before each external effect (executor call, commit, reveal, submission),
// so a restart continues where the process stopped and never commits a
// second, different result. The daemon talks to the node only through sdk.
package runner

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/volumes"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/fxamacker/cbor/v2"
)

// ResultChecker vets an executor's output before it is signed (schema,
// size, empty/garbage/prompt-leak rules). A non-nil error means the runner
// does not commit.
type ResultChecker func(spec *job.JobSpec, res *executor.Result) error

// Options configure a Daemon. Key, ResultKey, Client, Executors and
// DataDir are required.
type Options struct {
	Client    *sdk.Client
	Key       *ecdsa.PrivateKey  // secp256k1 account: pays fees and stake
	ResultKey ed25519.PrivateKey // signs results
	Executors *executor.Registry
	Check     ResultChecker // nil: no check beyond the executor's bounds
	DataDir   string

	Stake             *big.Int // desired self-bond (base units)
	MaxConcurrentJobs uint64
	MaxJobValue       *big.Int // nil: none declared
	JobTypes          []job.JobType
	Models, Domains   []string
	Rates             job.RateCard
	TEE               bool
	// Attester, when set, attests the runner to the TEE Verifier at start
	// (and before the attestation expires) and evidences each result of a
	// tee_required job. Setting it implies TEE.
	Attester attest.Attester

	// Volumes reads and writes the CBFS volumes jobs name (JobSpec.Volumes)
	// with this runner's key; nil refuses jobs that name volumes
	// (executor.ErrRefused: no fault reported).
	Volumes *volumes.Access

	AggregatorListen string // "" = no aggregator API (members still push to others)
	PublicURL        string // registered endpoint; "" = none
	PushTimeout      time.Duration
	MetricsListen    string // "" = off

	CommitMarginBlocks uint64
	KeepBlocks         uint64
	// Grace bounds how long Run waits for in-flight work after ctx ends
	// before abandoning it (state is persisted either way).
	Grace  time.Duration
	Logger *slog.Logger
}

// Daemon is a running runner. Create with New, then Run.
type Daemon struct {
	o      Options
	log    *slog.Logger
	client *sdk.Client
	self   types.Address
	store  *Store
	m      *metrics

	tx *txSender // builds and signs transactions with local nonces

	mu       sync.Mutex
	height   uint64
	blockCh  chan struct{} // closed and replaced at every block
	stopping chan struct{} // closed when the follower stops: waiting jobs park
	active   map[types.Hash]bool
	// released are active jobs the chain no longer counts against this
	// runner (verified, waiting out the challenge window).
	released map[types.Hash]bool
	// restart marks jobs whose worker must start again after it exits
	// (a re-selection arrived while it ran).
	restart       map[types.Hash]bool
	params        apitypes.OffchainParams
	lastBlockAt   time.Time
	registered    bool
	lastHeartbeat uint64 // height we last sent one

	aggAddr, metricsAddr net.Addr
	ready                chan struct{}
	wg                   sync.WaitGroup
}

// New opens the data directory and checks the options.
func New(o Options) (*Daemon, error) {
	if o.Client == nil || o.Key == nil || len(o.ResultKey) != ed25519.PrivateKeySize || o.Executors == nil || o.DataDir == "" {
		return nil, errors.New("runner: Client, Key, ResultKey, Executors and DataDir are required")
	}
	if o.MaxConcurrentJobs == 0 {
		o.MaxConcurrentJobs = 4
	}
	if o.Stake == nil {
		o.Stake = new(big.Int)
	}
	if o.PushTimeout <= 0 {
		o.PushTimeout = 5 * time.Second
	}
	if o.CommitMarginBlocks == 0 {
		o.CommitMarginBlocks = 1
	}
	if o.KeepBlocks == 0 {
		o.KeepBlocks = 100_000
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	if o.Attester != nil {
		o.TEE = true
	}
	if len(o.JobTypes) == 0 {
		o.JobTypes = o.Executors.Types()
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := OpenStore(o.DataDir + "/runner.db")
	if err != nil {
		return nil, err
	}
	d := &Daemon{o: o, log: log, client: o.Client, self: types.PubkeyToAddress(o.Key.PublicKey), store: st, m: newMetrics(), tx: newTxSender(o.Client, o.Key),
		blockCh: make(chan struct{}), stopping: make(chan struct{}), active: map[types.Hash]bool{}, released: map[types.Hash]bool{}, restart: map[types.Hash]bool{}, ready: make(chan struct{})}
	return d, nil
}

// Address is the runner's account address.
func (d *Daemon) Address() types.Address { return d.self }

// Store exposes the job database (status tooling, tests).
func (d *Daemon) Store() *Store { return d.store }

// Ready is closed once the HTTP listeners are up and the runner is registered.
func (d *Daemon) Ready() <-chan struct{} { return d.ready }

// AggregatorAddr is the bound aggregator API address (nil if off).
func (d *Daemon) AggregatorAddr() net.Addr { return d.aggAddr }

// MetricsAddr is the bound metrics address (nil if off).
func (d *Daemon) MetricsAddr() net.Addr { return d.metricsAddr }

// Run registers the runner, resumes persisted jobs and follows the chain
// until ctx ends; then it lets in-flight work reach a safe point for up to
// Options.Grace, closes the database and returns nil. Run can be called once.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.store.Close()
	// work outlives ctx by the grace period so jobs can finish their step.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()

	servers, err := d.listen()
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, s := range servers {
			s.Shutdown(sctx)
		}
	}()

	if err := d.loadParams(ctx); err != nil {
		return err
	}
	recs, err := d.store.Jobs()
	if err != nil {
		return fmt.Errorf("load jobs: %w", err)
	}
	if err := d.tx.start(ctx, journalFloor(recs)); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if err := d.ensureRegistered(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if err := d.ensureAttested(ctx, d.heartbeatEvery()*3); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	close(d.ready)

	for _, r := range recs {
		if !r.State.Terminal() {
			d.log.Info("resuming job", "job", r.ID, "state", r.State)
			d.startJob(workCtx, r.ID)
		}
	}

	from, err := d.store.Height()
	if err != nil {
		return err
	}
	if from == 0 {
		// A fresh runner has no assignments in the past: start at the head.
		st, err := d.client.Chain().Status(ctx)
		if err != nil {
			return fmt.Errorf("node status: %w", err)
		}
		from = st.Height
	} else {
		from++
	}
	d.log.Info("following the chain", "from", from, "runner", d.self)
	err = d.client.Chain().Subscribe(ctx, from, func(b apitypes.Block) error { return d.onBlock(ctx, workCtx, b) })
	if err != nil && ctx.Err() == nil {
		close(d.stopping)
		cancelWork()
		d.wg.Wait()
		return fmt.Errorf("follow chain: %w", err)
	}
	// Graceful: let jobs reach their next persisted step, then abandon.
	close(d.stopping)
	d.log.Info("shutting down", "in_flight", d.inFlight(), "grace", d.o.Grace)
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d.o.Grace):
		d.log.Warn("grace period over; abandoning in-flight work (persisted, resumes on restart)")
		cancelWork()
		<-done
	}
	d.log.Info("stopped")
	return nil
}

func (d *Daemon) loadParams(ctx context.Context) error {
	for {
		p, err := d.client.Jobs().Params(ctx)
		if err == nil {
			d.mu.Lock()
			d.params = *p
			d.mu.Unlock()
			return nil
		}
		d.log.Warn("node not reachable; retrying", "node", d.client.URL(), "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// onBlock handles one block of the stream: new assignments are persisted
// before the height is, so a restart never misses one.
// ctx is the daemon's run context (the stream stops with it); work is the
// context jobs run under (it outlives ctx by the grace period).
func (d *Daemon) onBlock(ctx, work context.Context, b apitypes.Block) error {
	h := b.Header.Height
	for _, rc := range b.Receipts {
		for _, ev := range rc.Events {
			if ev.Emitter != types.JobDispatcherAddress || ev.Topic != jobs.TopicJobAssigned {
				continue
			}
			var a jobs.JobAssignedEvent
			if err := cbor.Unmarshal(ev.Data, &a); err != nil {
				d.log.Warn("undecodable JobAssigned event", "height", h, "err", err)
				continue
			}
			if !slices.Contains(a.Runners, d.self) {
				continue
			}
			if err := d.assign(ctx, work, h, &a); err != nil {
				return err
			}
		}
	}
	if err := d.store.SetHeight(h); err != nil {
		return fmt.Errorf("persist height: %w", err)
	}
	d.mu.Lock()
	d.height = h
	d.lastBlockAt = time.Now()
	close(d.blockCh)
	d.blockCh = make(chan struct{})
	d.mu.Unlock()
	d.m.height.Set(float64(h))
	d.maybeHeartbeat(work, h)
	if h%1000 == 0 && h > d.o.KeepBlocks {
		if n, err := d.store.Prune(h - d.o.KeepBlocks); err == nil && n > 0 {
			d.log.Debug("pruned finished jobs", "count", n)
		}
	}
	return nil
}

// assign records a new assignment (or declines it) and starts its worker.
func (d *Daemon) assign(ctx, work context.Context, h uint64, a *jobs.JobAssignedEvent) error {
	if old, err := d.store.Job(a.JobID); err == nil && old.Retry >= uint32(a.Retry) {
		return nil // already known (replayed block)
	}
	rec := &JobRecord{ID: a.JobID, Retry: uint32(a.Retry), Committee: a.Runners, Aggregator: a.Aggregator, AssignedAt: h,
		Deadline: a.Deadline, State: StateAssigned, StartedAt: time.Now(), UpdatedAt: time.Now()}
	// The stream waits while the node is unreachable: skipping the block
	// would lose the assignment.
	var cj *apitypes.Job
	for backoff := 200 * time.Millisecond; ; backoff = min(2*backoff, 5*time.Second) {
		var err error
		if cj, err = d.client.Jobs().Get(ctx, a.JobID); err == nil {
			break
		}
		d.log.Warn("fetching an assigned job failed; retrying", "job", a.JobID, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
	spec, err := job.DecodeJobSpec(cj.Spec)
	if err == nil && spec.JobID != a.JobID {
		err = fmt.Errorf("spec is of job %s", spec.JobID)
	}
	if err != nil {
		rec.State, rec.Error = StateDeclined, "node returned no usable spec: "+err.Error()
	} else {
		rec.Spec, rec.Type = cj.Spec, spec.JobType.String()
		if _, ok := d.o.Executors.Get(spec.JobType); !ok {
			rec.State, rec.Error = StateDeclined, "job type not served by this runner"
		} else if n := d.busyReconciled(ctx); uint64(n) >= d.o.MaxConcurrentJobs {
			rec.State, rec.Error = StateDeclined, fmt.Sprintf("at capacity (%d in flight)", n)
		}
	}
	if rec.State == StateDeclined {
		rec.DoneAt = h
		d.m.jobs.WithLabelValues(rec.Type, "declined").Inc()
		d.log.Warn("declining job", "job", a.JobID, "reason", rec.Error)
	}
	// A re-selection (higher retry) supersedes the stored attempt: the
	// earlier attempt's worker can no longer write (ErrSuperseded) and
	// exits, and the new attempt starts after it.
	if err := d.store.PutJob(rec); err != nil {
		return err
	}
	d.mu.Lock()
	if d.active[a.JobID] {
		d.restart[a.JobID] = true
		d.mu.Unlock()
		d.log.Info("re-selected; new attempt starts when the previous one stops", "job", a.JobID, "retry", a.Retry)
		return nil
	}
	d.mu.Unlock()
	if rec.State == StateAssigned {
		d.log.Info("assigned", "job", a.JobID, "type", rec.Type, "aggregator", a.Aggregator == d.self, "deadline", a.Deadline)
		d.startJob(work, a.JobID)
	}
	return nil
}

// busy counts the jobs that occupy a slot of max_concurrent_jobs, as the
// chain counts them.
func (d *Daemon) busy() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.active) - len(d.released)
}

// busyReconciled is busy after releasing the jobs the chain has already
// verified or ended (workers notice only at their next block), so a slot the
// chain reused is not declined.
func (d *Daemon) busyReconciled(ctx context.Context) int {
	if n := d.busy(); uint64(n) < d.o.MaxConcurrentJobs {
		return n
	}
	d.mu.Lock()
	var ids []types.Hash
	for id := range d.active {
		if !d.released[id] {
			ids = append(ids, id)
		}
	}
	d.mu.Unlock()
	for _, id := range ids {
		if cj, err := d.client.Jobs().Get(ctx, id); err == nil && cj.Status != job.StateAssigned && cj.Status != job.StateCommitted && cj.Status != job.StateRevealed {
			d.release(id)
		}
	}
	return d.busy()
}

// release frees a job's slot while its worker waits for settlement.
func (d *Daemon) release(id types.Hash) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.active[id] {
		d.released[id] = true
	}
}

func (d *Daemon) inFlight() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.active)
}

func (d *Daemon) startJob(ctx context.Context, id types.Hash) {
	d.mu.Lock()
	if d.active[id] {
		d.mu.Unlock()
		return
	}
	d.active[id] = true
	d.m.inFlight.Set(float64(len(d.active)))
	d.mu.Unlock()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer func() {
			d.mu.Lock()
			delete(d.active, id)
			delete(d.released, id)
			d.m.inFlight.Set(float64(len(d.active)))
			again := d.restart[id]
			delete(d.restart, id)
			d.mu.Unlock()
			if again && ctx.Err() == nil {
				d.startJob(ctx, id)
			}
		}()
		d.runJob(ctx, id)
	}()
}

// waitBlock returns after the next block (or ctx's end).
func (d *Daemon) waitBlock(ctx context.Context) error {
	d.mu.Lock()
	ch := d.blockCh
	d.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-d.stopping:
		return errStopping
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errStopping parks a job that waits for the chain while the daemon stops;
// its persisted state lets the next start continue it.
var errStopping = errors.New("runner stopping")

// Height is the last chain height processed.
func (d *Daemon) Height() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.height
}

func (d *Daemon) paramsSnapshot() apitypes.OffchainParams {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.params
}

// PublicURL is the aggregator URL registered on chain.
func (d *Daemon) PublicURL() string { return d.o.PublicURL }
