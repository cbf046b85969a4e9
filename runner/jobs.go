package runner

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/jobmachine"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// runJob drives one job through its states until it is terminal, the
// daemon stops, or ctx ends. Each step reads the persisted record, so the
// same code resumes a job after a restart.
func (d *Daemon) runJob(ctx context.Context, id types.Hash) {
	for {
		rec, err := d.store.Job(id)
		if err != nil {
			d.log.Error("job record unreadable", "job", id, "err", err)
			return
		}
		if rec.State.Terminal() {
			return
		}
		err = d.step(ctx, rec)
		if errors.Is(err, errStopping) || errors.Is(err, ErrSuperseded) || ctx.Err() != nil {
			return
		}
		if err != nil {
			d.log.Warn("job step failed; retrying next block", "job", id, "state", rec.State, "err", err)
			if d.waitBlock(ctx) != nil {
				return
			}
		}
	}
}

func (d *Daemon) step(ctx context.Context, rec *JobRecord) error {
	switch rec.State {
	case StateAssigned, StateExecuting:
		return d.execute(ctx, rec)
	case StateExecuted:
		return d.commit(ctx, rec)
	case StateCommitting:
		return d.awaitCommit(ctx, rec)
	case StateCommitted:
		_, err := d.advance(ctx, rec, jobmachine.Resume{}, nil)
		return err
	case StatePushed, StateRevealed:
		return d.watch(ctx, rec)
	case StateRevealing:
		return d.awaitReveal(ctx, rec)
	case StateAttesting:
		return d.awaitResultAttestation(ctx, rec)
	}
	return fmt.Errorf("unknown state %q", rec.State)
}

// finish marks the job terminal with the chain's outcome.
func (d *Daemon) finish(rec *JobRecord, state JobState, outcome, why string) error {
	rec.State, rec.Outcome, rec.DoneAt = state, outcome, max(d.Height(), 1)
	if why != "" {
		rec.Error = why
	}
	rec.Tx = nil
	d.m.jobs.WithLabelValues(rec.Type, outcome).Inc()
	d.log.Info("job finished", "job", rec.ID, "type", rec.Type, "outcome", outcome, "why", why)
	return d.put(rec)
}

// execute runs the executor, checks the result and stores result,
// signature and commitment.
func (d *Daemon) execute(ctx context.Context, rec *JobRecord) error {
	spec, err := rec.DecodedSpec()
	if err != nil {
		return d.finish(rec, StateFailed, "failed", err.Error())
	}
	// A fresh assignment stands as the JobAssigned event showed it; on
	// resuming after a restart the chain may have moved on meanwhile.
	ev := jobmachine.ChainJob{Height: d.Height(), Status: job.StateAssigned, Ours: true}
	if rec.State == StateExecuting {
		var err error
		if ev, _, err = d.observeChain(ctx, rec); err != nil {
			return err
		}
	}
	next, acts := jobmachine.Step(d.machineJob(rec), ev)
	if len(acts) == 0 {
		return fmt.Errorf("job machine: nothing to do in state %s", rec.State)
	}
	if f, ok := acts[0].(jobmachine.Finish); ok {
		return d.finish(rec, f.State, f.Outcome, f.Why)
	}
	rec.State = next.State // Executing: persisted before the executor runs
	if err := d.put(rec); err != nil {
		return err
	}
	start := time.Now()
	res, err := d.run(ctx, rec, spec)
	elapsed := time.Since(start)
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // shutting down: executing resumes on restart
	}
	var ran jobmachine.Ran
	var fault uint8
	switch {
	case err != nil:
		d.m.executorErrors.WithLabelValues(rec.Type, errorKind(err)).Inc()
		fault = faultOf(err)
		ran.Err, ran.Faulted = err.Error(), fault != verify.FaultNone
	default:
		d.m.execSeconds.WithLabelValues(rec.Type).Observe(elapsed.Seconds())
		if d.o.Check != nil {
			if cerr := d.o.Check(spec, &res); cerr != nil {
				d.m.executorErrors.WithLabelValues(rec.Type, "result_check").Inc()
				ran.CheckErr = cerr.Error()
			}
		}
	}
	next, acts = jobmachine.Step(d.machineJob(rec), ran)
	if len(acts) != 1 {
		return fmt.Errorf("job machine: %d actions after execution in state %s", len(acts), rec.State)
	}
	switch a := acts[0].(type) {
	case jobmachine.Finish:
		return d.finish(rec, a.State, a.Outcome, a.Why)
	case jobmachine.StoreResult:
		if a.Fault {
			// The job itself cannot be done: an empty result with a
			// signed fault report.
			rep := &verify.Report{Usage: job.Usage{WallTimeMs: uint64(elapsed.Milliseconds())}, Fault: fault}
			sig := verify.SignReport(d.o.ResultKey, rec.ID, d.self, []byte{}, nil, rep)
			rec.Result, rec.Embedding, rec.Signature, rec.Report = []byte{}, nil, sig, rep
			rec.Commitment, rec.Usage, rec.ExecMs = verify.Commitment(nil, sig), rep.Usage, elapsed.Milliseconds()
			rec.ExecError, rec.State = "execute: "+err.Error(), next.State
			d.log.Warn("execution failed; committing a fault report", "job", rec.ID, "fault", fault, "err", err)
			return d.put(rec)
		}
		// The usage report makes payment price what the job used, not its bounds.
		rep := &verify.Report{Usage: res.Usage}
		sig := verify.SignReport(d.o.ResultKey, rec.ID, d.self, res.Output, res.Embedding, rep)
		rec.Result, rec.Embedding, rec.Signature, rec.Report = res.Output, res.Embedding, sig, rep
		rec.Commitment, rec.Usage, rec.ExecMs = verify.Commitment(res.Output, sig), res.Usage, elapsed.Milliseconds()
		rec.State = next.State
		d.log.Info("executed", "job", rec.ID, "type", rec.Type, "bytes", len(res.Output), "ms", rec.ExecMs)
		return d.put(rec)
	}
	return fmt.Errorf("job machine: unexpected action %T after execution", acts[0])
}

// faultOf maps an executor failure to the fault a runner may report: the
// job's input (actor fault), its bounds (impossible job) or the external
// service (external fault). Refusals by this runner's policy and unknown
// failures are this runner's own problem and are not reported.
func faultOf(err error) uint8 {
	switch {
	case errors.Is(err, executor.ErrBadInput):
		return verify.FaultActorFault
	case errors.Is(err, executor.ErrBoundExceeded):
		return verify.FaultImpossibleJob
	case errors.Is(err, executor.ErrUpstream):
		return verify.FaultExternalFault
	}
	return verify.FaultNone
}

func errorKind(err error) string {
	switch {
	case errors.Is(err, executor.ErrBadInput):
		return "bad_input"
	case errors.Is(err, executor.ErrBoundExceeded):
		return "bound_exceeded"
	case errors.Is(err, executor.ErrUpstream):
		return "upstream"
	case errors.Is(err, executor.ErrRefused):
		return "refused"
	}
	return "other"
}

// chainJob fetches the job and reports whether this assignment still
// stands (same retry, we are in the committee).
func (d *Daemon) chainJob(ctx context.Context, rec *JobRecord) (*apitypes.Job, bool, error) {
	cj, err := d.client.Jobs().Get(ctx, rec.ID)
	if err != nil {
		return nil, false, err
	}
	return cj, cj.Retry == rec.Retry && slices.Contains(cj.Committee, d.self), nil
}

func commitmentOf(cj *apitypes.Job, a types.Address) (types.Hash, bool) {
	for _, c := range cj.Commitments {
		if c.Runner == a {
			return c.Hash, true
		}
	}
	return types.Hash{}, false
}

// machineJob is rec as the job machine sees it.
func (d *Daemon) machineJob(rec *JobRecord) jobmachine.Job {
	j := jobmachine.Job{State: rec.State, Deadline: rec.Deadline, Commitment: rec.Commitment, TxKind: rec.TxKind,
		SelfRevealed: rec.SelfRevealed, ResultAttested: rec.ResultAttested, Aggregator: rec.Aggregator == d.self}
	if rec.State == StateCommitted {
		j.NeedsEvidence = d.needsResultEvidence(rec)
	}
	if rec.State == StateAttesting {
		spec, err := rec.DecodedSpec()
		j.Deterministic = err == nil && spec.Verification.Mode == job.ModeDeterministic
	}
	return j
}

// observeChain fetches the chain's view of rec's job as a machine event.
func (d *Daemon) observeChain(ctx context.Context, rec *JobRecord) (jobmachine.ChainJob, *apitypes.Job, error) {
	cj, ours, err := d.chainJob(ctx, rec)
	if err != nil {
		return jobmachine.ChainJob{}, nil, err
	}
	ev := jobmachine.ChainJob{Height: cj.Height, Status: cj.Status, Ours: ours, CommitMargin: d.o.CommitMarginBlocks,
		Agreed: slices.Contains(cj.Agreed, d.self), Dissented: slices.Contains(cj.Dissented, d.self), FailReason: cj.FailReason}
	if h, ok := commitmentOf(cj, d.self); ok {
		ev.Commitment = &h
	}
	return ev, cj, nil
}

// effects is what an action may need beyond the record: the chain's view
// of the job that the stepped event came from and, for the aggregator,
// the spec, the reveals collected and the aggregate a submission carries.
type effects struct {
	cj      *apitypes.Job
	spec    *job.JobSpec
	reveals []verify.Reveal
	sub     *verify.Submission
}

// advance steps the job machine with ev and performs its actions: the
// record is persisted before any external effect. It reports whether the
// step is over (the caller returns) rather than waiting for more events.
func (d *Daemon) advance(ctx context.Context, rec *JobRecord, ev jobmachine.Event, cj *apitypes.Job) (bool, error) {
	return d.perform(ctx, rec, ev, effects{cj: cj})
}

func (d *Daemon) perform(ctx context.Context, rec *JobRecord, ev jobmachine.Event, fx effects) (bool, error) {
	next, acts := jobmachine.Step(d.machineJob(rec), ev)
	for _, a := range acts {
		switch a := a.(type) {
		case jobmachine.Finish:
			return true, d.finish(rec, a.State, a.Outcome, a.Why)
		case jobmachine.Settle:
			return true, d.settled(rec, fx.cj, a)
		case jobmachine.CommitSeen:
			return true, d.committed(ctx, rec)
		case jobmachine.ClearTx:
			rec.State, rec.Tx, rec.SelfRevealed, rec.ResultAttested = next.State, nil, next.SelfRevealed, next.ResultAttested
			if a.Error != "" {
				rec.Error = a.Error
			}
			return true, d.put(rec)
		case jobmachine.Persist:
			rec.State = next.State
			return true, d.put(rec)
		case jobmachine.Send:
			return true, d.sendEffect(ctx, rec, a, fx)
		case jobmachine.Collect:
			return true, d.aggregate(ctx, rec)
		case jobmachine.Push:
			return true, d.push(ctx, rec)
		case jobmachine.VerifyResults:
			return true, d.submitAggregate(ctx, rec, fx, a.All)
		case jobmachine.Release:
			d.release(rec.ID)
		case jobmachine.Wait:
			return false, d.waitBlock(ctx)
		default:
			return true, fmt.Errorf("job machine: unexpected action %T in state %s", a, rec.State)
		}
	}
	return false, nil
}

// sendEffect builds, persists and sends the transaction a Send action asks for.
func (d *Daemon) sendEffect(ctx context.Context, rec *JobRecord, a jobmachine.Send, fx effects) error {
	switch a.Kind {
	case "attest_result":
		return d.attestResult(ctx, rec)
	case "submit":
		if fx.sub == nil {
			return fmt.Errorf("job machine: submit without a verified aggregate")
		}
		b, err := fx.sub.Encode()
		if err != nil {
			return err
		}
		return d.sendPersisted(ctx, rec, "submit", a.Next, types.ResultVerifierAddress, &types.SubmitResult{JobID: rec.ID, Submission: b})
	case "commit":
		return d.sendPersisted(ctx, rec, "commit", a.Next, types.JobDispatcherAddress,
			&types.CommitResult{JobID: rec.ID, Commitment: rec.Commitment})
	case "reveal":
		d.log.Info("aggregator timed out; revealing individually", "job", rec.ID)
		rev := rec.Reveal(d.self)
		b, err := rev.Encode()
		if err != nil {
			return err
		}
		return d.sendPersisted(ctx, rec, "reveal", a.Next, types.ResultVerifierAddress, &types.RevealResult{JobID: rec.ID, Reveal: b})
	}
	return fmt.Errorf("job machine: cannot send %q", a.Kind)
}

// commit sends the commitment unless the chain already has it.
func (d *Daemon) commit(ctx context.Context, rec *JobRecord) error {
	ev, cj, err := d.observeChain(ctx, rec)
	if err != nil {
		return err
	}
	_, err = d.advance(ctx, rec, ev, cj)
	return err
}

// committed records that our commitment landed.
func (d *Daemon) committed(ctx context.Context, rec *JobRecord) error {
	if len(rec.Tx) > 0 && d.tx.wantsSample("commit") {
		// The commitment was seen on the job before its receipt was read:
		// read it now to size later commits' limits.
		if r, err := d.client.Chain().Tx(ctx, rec.TxHash); err == nil && r.Receipt != nil {
			d.tx.observe("commit", rec.Tx, r.Receipt)
		}
	}
	rec.State, rec.Tx = StateCommitted, nil
	d.m.commitSeconds.WithLabelValues(rec.Type).Observe(time.Since(rec.StartedAt).Seconds())
	d.log.Info("committed", "job", rec.ID, "commitment", rec.Commitment)
	return d.put(rec)
}

// awaitCommit waits for the stored commit transaction to land: the chain's
// view first (the commitment seen, or the assignment over), then the
// transaction's fate.
func (d *Daemon) awaitCommit(ctx context.Context, rec *JobRecord) error {
	for {
		ev, cj, err := d.observeChain(ctx, rec)
		if err != nil {
			return err
		}
		if done, err := d.advance(ctx, rec, ev, cj); done || err != nil {
			return err
		}
		st, why, err := d.persistedTx(ctx, rec, "commit")
		if err != nil {
			return err
		}
		if done, err := d.advance(ctx, rec, jobmachine.TxOutcome{State: st, Why: why}, cj); done || err != nil {
			return err
		}
	}
}

// push delivers the result to the aggregator's API, an attempt a block,
// until the job machine says the push phase is over.
func (d *Daemon) push(ctx context.Context, rec *JobRecord) error {
	rev := rec.Reveal(d.self)
	for attempt := 0; ; attempt++ {
		ev, err := d.tryPush(ctx, rec, &rev, attempt)
		if err != nil {
			return err
		}
		if done, err := d.advance(ctx, rec, ev, nil); done || err != nil {
			return err
		}
	}
}

// tryPush makes one push attempt. The endpoint is looked up on every
// attempt: a restarted aggregator may have re-registered a new one.
func (d *Daemon) tryPush(ctx context.Context, rec *JobRecord, rev *verify.Reveal, attempt int) (jobmachine.PushOutcome, error) {
	r, err := d.client.Runners().Get(ctx, rec.Aggregator)
	if err != nil {
		return jobmachine.PushOutcome{}, err
	}
	endpoint := r.Endpoint
	if endpoint == "" {
		d.log.Warn("aggregator registered no endpoint; will reveal after its timeout", "job", rec.ID, "aggregator", rec.Aggregator)
		return jobmachine.PushOutcome{Result: jobmachine.PushNoEndpoint}, nil
	}
	err = pushResult(ctx, endpoint, rec.ID, rev, d.o.PushTimeout)
	if err == nil {
		d.log.Info("pushed result to aggregator", "job", rec.ID, "aggregator", rec.Aggregator)
		return jobmachine.PushOutcome{Result: jobmachine.PushDelivered}, nil
	}
	var perm *permanentError
	if errors.As(err, &perm) {
		d.log.Warn("aggregator refused our result; will reveal after its timeout", "job", rec.ID, "err", err)
		return jobmachine.PushOutcome{Result: jobmachine.PushRefused}, nil
	}
	ev := jobmachine.PushOutcome{Result: jobmachine.PushRetry}
	if cj, _, jerr := d.chainJob(ctx, rec); jerr == nil {
		ev.Status, ev.StatusKnown = cj.Status, true
	}
	if attempt%5 == 0 && (!ev.StatusKnown || ev.Status == job.StateAssigned || ev.Status == job.StateCommitted) {
		d.log.Info("aggregator not reachable yet; retrying", "job", rec.ID, "endpoint", endpoint, "err", err)
	}
	return ev, nil
}

// watch follows the job after our part: it reveals individually if the
// aggregator timed out, and finishes when the job is settled or failed.
func (d *Daemon) watch(ctx context.Context, rec *JobRecord) error {
	for {
		ev, cj, err := d.observeChain(ctx, rec)
		if err != nil {
			return err
		}
		if done, err := d.advance(ctx, rec, ev, cj); done || err != nil {
			return err
		}
	}
}

// awaitReveal waits for the stored reveal or submission to land.
func (d *Daemon) awaitReveal(ctx context.Context, rec *JobRecord) error {
	kind := rec.TxKind
	for {
		st, why, err := d.persistedTx(ctx, rec, kind)
		if err != nil {
			return err
		}
		switch st {
		case jobmachine.TxSuccess:
			d.log.Info(kind+" included", "job", rec.ID)
		case jobmachine.TxFailed:
			// The job moved on (e.g. the aggregator's submission landed
			// first, or the window closed): watch decides what remains.
			d.log.Warn(kind+" transaction failed", "job", rec.ID, "err", why)
		}
		if done, err := d.advance(ctx, rec, jobmachine.TxOutcome{State: st, Why: why}, nil); done || err != nil {
			return err
		}
	}
}

// settled records what this runner earned and finishes the job with the
// outcome the job machine named.
func (d *Daemon) settled(rec *JobRecord, cj *apitypes.Job, s jobmachine.Settle) error {
	if cj != nil && cj.Payments != nil {
		for _, t := range cj.Payments.Transfers {
			if t.To == d.self && t.Kind == "runner" {
				if v, err := sdk.ParseAmount(t.Amount); err == nil {
					d.m.earnings.Add(cbyFloat(v))
				}
			}
		}
	}
	return d.finish(rec, StateDone, s.Outcome, s.Why)
}

// keys returns the committee's registered result keys.
func (d *Daemon) keys(ctx context.Context, committee []types.Address) (map[types.Address]ed25519.PublicKey, error) {
	out := make(map[types.Address]ed25519.PublicKey, len(committee))
	for _, a := range committee {
		r, err := d.client.Runners().Get(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("result key of %s: %w", a, err)
		}
		out[a] = ed25519.PublicKey(r.ResultKey)
	}
	return out, nil
}
