// Package joblane is the off-chain job lane of a block (spec 002
// "Message-Passing Continuation Model", §6.3 runner lane): the delivery of
// job callbacks to actors and the end-of-block job sweep, and the actor op
// submit_job. The Job Dispatcher and Result Verifier themselves are
// chain/system/jobs; running the callbacks is chain/actors.
package joblane

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The off-chain job lane of a block (spec 002 "Message-Passing Continuation
// Model", §6.3 runner lane): after the timer lane, the block at height h
//
//  1. delivers the job callbacks queued before h — each a message from the
//     Result Verifier (0x…03) to callback.actor.handler(res), with its own
//     receipt (JobCallbackReceiptHash), oldest first, as many as the
//     block's callback claim holds (planCallbacks; the rest wait);
//  2. runs the end-of-block sweep (timeouts, re-selection, refunds,
//     finalisation and settlement of the jobs due at h) and records its
//     events in one receipt (JobSweepReceiptHash) if it emitted any.
//
// A callback never runs in the transaction (or sweep) that decided the job:
// it is queued in state and delivered in a later block, so the actor
// re-reads its state in a fresh message, as the continuation model asks.
// Each callback is bounded by CallbackCycles / CallbackCells, which the
// submitting transaction prepaid; the block's callbacks are claimed from the
// runner lane before its transactions (CallbackBudget) and their use is
// reported in Result.CallbackCycles.

// Result is what the job lane of one block did.
type Result struct {
	Receipts       []*types.Receipt // callbacks in delivery order, then the sweep receipt
	CallbackCycles uint64           // cycles used by the delivered callbacks
	CallbackCells  uint64
}

// Lane runs the job lane over the Job Dispatcher and an actor runtime.
type Lane struct {
	rt                            *actors.Runtime
	jobs                          *jobs.Module
	callbackCycles, callbackCells uint64
	maxTxCycles, maxTxCells       uint64
}

// New returns the job lane of the dispatcher d, and registers submit_job
// on rt. Each callback runs within p's CallbackCycles / CallbackCells, the
// sweep's steps within maxTxCycles / maxTxCells.
func New(rt *actors.Runtime, d *jobs.Module, p runners.Params, maxTxCycles, maxTxCells uint64) (*Lane, error) {
	l := &Lane{rt: rt, jobs: d, callbackCycles: p.CallbackCycles, callbackCells: p.CallbackCells, maxTxCycles: maxTxCycles, maxTxCells: maxTxCells}
	if err := rt.Register(OpSubmitJob, l.submitJobOp); err != nil {
		return nil, err
	}
	return l, nil
}

// Claim is the cycles the plan reserves in the block.
func (p *Plan) Claim() uint64 { return p.claim }

// JobCallbackReceiptHash is the TxHash of the receipt of the callback of job
// id with status delivered in the block at height:
//
//	keccak256("cowboy/job-callback" ‖ id ‖ status ‖ height_be8)
func JobCallbackReceiptHash(id types.Hash, status string, height uint64) types.Hash {
	return types.Keccak256([]byte("cowboy/job-callback"), id[:], []byte(status), system.BE8(height))
}

// JobSweepReceiptHash is the TxHash of the receipt carrying the events of
// the end-of-block job sweep at height:
//
//	keccak256("cowboy/job-sweep" ‖ height_be8)
func JobSweepReceiptHash(height uint64) types.Hash {
	return types.Keccak256([]byte("cowboy/job-sweep"), system.BE8(height))
}

// CallbackDelivery records that a job's callback ran: at Height, with the
// receipt JobCallbackReceiptHash(job, Status, Height), OK if the handler
// succeeded.
type CallbackDelivery struct {
	_      struct{}   `cbor:",toarray"`
	Status string     `json:"status"`
	Height uint64     `json:"height"`
	OK     bool       `json:"ok"`
	Error  string     `json:"error,omitempty"`
	Hash   types.Hash `json:"receipt"`
}

// CallbackStats counts the job callbacks delivered to an actor and how many
// of them failed (seed 004 "Callback Griefing": runners may refuse actors
// whose callbacks keep failing).
type CallbackStats struct {
	_         struct{} `cbor:",toarray"`
	Delivered uint64   `json:"delivered_callbacks"`
	Failed    uint64   `json:"failed_callbacks"`
}

func callbackStatsKey(actor types.Address) []byte {
	return system.Key(types.ResultVerifierAddress, []byte("cbstat/"), actor[:])
}

// ReadCallbackStats returns an actor's callback counters.
func ReadCallbackStats(r state.Reader, actor types.Address) (CallbackStats, error) {
	var st CallbackStats
	b, ok, err := r.Get(callbackStatsKey(actor))
	if err != nil || !ok {
		return st, err
	}
	if err := codec.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("decode callback stats: %w", err)
	}
	return st, nil
}

func callbackDoneKey(id types.Hash) []byte {
	return system.Key(types.ResultVerifierAddress, []byte("cbdone/"), id[:])
}

// ReadCallbackDeliveries returns the delivered callbacks of job id, in
// delivery order.
func ReadCallbackDeliveries(r state.Reader, id types.Hash) ([]CallbackDelivery, error) {
	b, ok, err := r.Get(callbackDoneKey(id))
	if err != nil || !ok {
		return nil, err
	}
	var ds []CallbackDelivery
	if err := codec.Unmarshal(b, &ds); err != nil {
		return nil, fmt.Errorf("decode callback deliveries: %w", err)
	}
	return ds, nil
}

// Plan is the job lane's claim on a block, fixed before its
// transactions like the timer lane's (planTimers): the callbacks the block
// delivers and the cycles they may use.
type Plan struct {
	due   []jobs.PendingCallback // oldest first
	claim uint64                 // len(due) × CallbackCycles
}

// Plan picks the callbacks the block at height delivers: those
// queued before height, oldest first, as many as budget holds at
// CallbackCycles each (the rest wait, in order, for later blocks). It reads
// only the state at the start of the block, so every node computes the same
// plan; the block's own transactions queue callbacks at height, which are
// never due in it. The claim is charged to the runner lane before the
// transactions (buildLanes, verifyLanes), so callbacks run inside the
// block's cycle cap.
func (l *Lane) Plan(o *state.Overlay, height, budget uint64) (*Plan, error) {
	plan := &Plan{}
	if height == 0 {
		return plan, nil
	}
	per := l.callbackCycles
	n := budget / per
	pre := jobs.CallbackPrefix()
	if err := o.Scan(pre, func(k, v []byte) error {
		if uint64(len(plan.due)) >= n || len(k) < len(pre)+8 || system.FromBE8(k[len(pre):len(pre)+8]) >= height {
			return system.ErrStopScan
		}
		var pc jobs.PendingCallback
		if err := codec.Unmarshal(v, &pc); err != nil {
			return fmt.Errorf("decode callback: %w", err)
		}
		plan.due = append(plan.due, pc)
		return nil
	}); err != nil && !errors.Is(err, system.ErrStopScan) {
		return nil, fmt.Errorf("job callbacks: %w", err)
	}
	plan.claim = uint64(len(plan.due)) * per
	return plan, nil
}

// Advance runs the job lane of the block (see Result): the planned
// callbacks, then the sweep.
func (l *Lane) Advance(x0 *actors.Exec, plan *Plan) (*Result, error) {
	lane := &Result{}
	if x0.Env().Height == 0 {
		return lane, nil
	}
	if err := l.deliverCallbacks(x0, lane, plan.due); err != nil {
		return nil, fmt.Errorf("job callbacks: %w", err)
	}
	if err := l.sweepJobs(x0, lane); err != nil {
		return nil, err
	}
	return lane, nil
}

// deliverCallbacks runs the planned callbacks, in order. Each runs within
// CallbackCycles, so their use stays within the plan's claim.
func (l *Lane) deliverCallbacks(x0 *actors.Exec, lane *Result, due []jobs.PendingCallback) error {
	for _, pc := range due {
		x0.State().Delete(jobs.CallbackKey(pc.QueuedAt, pc.JobID, pc.Status))
		r, err := l.runCallback(x0, pc)
		if err != nil {
			return fmt.Errorf("job %s: %w", pc.JobID, err)
		}
		ds, err := ReadCallbackDeliveries(x0.State(), pc.JobID)
		if err != nil {
			return err
		}
		ds = append(ds, CallbackDelivery{Status: pc.Status, Height: x0.Env().Height, OK: r.Status == types.ReceiptSuccess, Error: r.Error, Hash: r.TxHash})
		x0.State().Set(callbackDoneKey(pc.JobID), codec.MustMarshal(ds))
		st, err := ReadCallbackStats(x0.State(), pc.Actor)
		if err != nil {
			return err
		}
		st.Delivered++
		if r.Status != types.ReceiptSuccess {
			st.Failed++
		}
		x0.State().Set(callbackStatsKey(pc.Actor), codec.MustMarshal(&st))
		lane.Receipts = append(lane.Receipts, r)
		lane.CallbackCycles += r.CyclesUsed
		lane.CallbackCells += r.CellsUsed
	}
	return nil
}

// runCallback delivers one callback; a failing handler reverts only itself.
func (l *Lane) runCallback(x0 *actors.Exec, pc jobs.PendingCallback) (*types.Receipt, error) {
	o, env := x0.State(), x0.Env()
	ev := system.Event(types.ResultVerifierAddress, &jobs.JobCallbackEvent{JobID: pc.JobID, Status: pc.Status, Actor: pc.Actor, Handler: pc.Handler, QueuedAt: pc.QueuedAt})
	rcpt := &types.Receipt{TxHash: JobCallbackReceiptHash(pc.JobID, pc.Status, env.Height), Status: types.ReceiptSuccess,
		FeePaid: new(big.Int), Burned: new(big.Int), Tip: new(big.Int), Return: []byte{}}
	if !l.rt.HasVM() {
		rcpt.Status, rcpt.Code, rcpt.Error, rcpt.Events = types.ReceiptFailed, uint32(system.CodeUnsupported), "Unsupported: this node runs without the PVM", []types.Event{ev}
		return rcpt, nil
	}
	run := &actors.Meter{CyclesLimit: l.callbackCycles, CellsLimit: l.callbackCells}
	x := l.rt.NewExec(x0.Context(), o, env, nil, types.ResultVerifierAddress, run, x0.Block())
	snap := o.Snapshot()
	ret, execErr := x.Invoke(pc.Actor, types.ResultVerifierAddress, new(big.Int), pc.Handler, pc.Payload)
	if execErr != nil {
		if !actors.IsFailure(execErr) && !errors.Is(execErr, types.ErrInsufficientBalance) {
			return nil, execErr
		}
		o.RevertTo(snap)
		run.Events, ret = nil, nil
		actors.MarkFailed(rcpt, x.Records(), execErr, "reverted with the callback")
	}
	if ret == nil {
		ret = []byte{}
	}
	rcpt.CyclesUsed, rcpt.CellsUsed = min(run.Cycles, run.CyclesLimit), min(run.Cells, run.CellsLimit)
	rcpt.Events = append([]types.Event{ev}, run.Events...)
	rcpt.Return = ret
	rcpt.Messages, rcpt.FailedMessage = x.Records(), x.FailedMessage()
	return rcpt, nil
}

// sweepJobs steps every job whose deadline is the previous height with
// Tick{height} and records the sweep's events in one receipt. Live jobs are
// indexed by deadline, so only the bucket height−1 is read.
func (l *Lane) sweepJobs(x0 *actors.Exec, lane *Result) error {
	var ids []types.Hash
	prefix := jobs.DuePrefix(x0.Env().Height - 1)
	if err := x0.State().Scan(prefix, func(k, _ []byte) error {
		id, err := types.BytesToHash(k[len(prefix):])
		if err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	}); err != nil {
		return err
	}
	var events []types.Event
	for _, id := range ids {
		j, err := jobs.ReadJob(x0.State(), id)
		if err != nil {
			return err
		}
		if j == nil || j.State.Terminal() || x0.Env().Height <= j.Deadline {
			continue
		}
		run := &actors.Meter{CyclesLimit: l.maxTxCycles, CellsLimit: l.maxTxCells}
		x := l.rt.NewExec(x0.Context(), x0.State(), x0.Env(), nil, types.JobDispatcherAddress, run, x0.Block())
		if err := l.jobs.With(x).Tick(j); err != nil {
			return fmt.Errorf("job %s: tick: %w", id, err)
		}
		events = append(events, run.Events...)
	}
	if len(events) > 0 {
		lane.Receipts = append(lane.Receipts, &types.Receipt{TxHash: JobSweepReceiptHash(x0.Env().Height), Status: types.ReceiptSuccess,
			FeePaid: new(big.Int), Burned: new(big.Int), Tip: new(big.Int), Events: events, Return: []byte{}})
	}
	return nil
}
