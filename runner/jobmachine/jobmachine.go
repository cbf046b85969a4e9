// Package jobmachine is a runner's job lifecycle as a pure state machine,
// in the shape of etcd-io/raft's RawNode: Step(job, event) returns the
// job's next state and the actions the daemon performs, in order. It does
// no IO and reads no clock: the chain's view of the job, the fate of a
// persisted transaction and the block height arrive in events. The daemon
// (package runner) persists the returned job, then performs the actions.
// The member's and the aggregator's result phase (evidence, push, collect,
// verify, submit) is in result.go.
package jobmachine

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// State is a step of a job's life on a runner. Each state is written before
// the external effect it announces, so a restart always knows whether an
// effect may have happened and checks the chain before repeating it.
type State string

// Job states, in order.
const (
	Assigned   State = "assigned"   // seen in a JobAssigned event; spec stored
	Executing  State = "executing"  // executor started (repeating it is harmless)
	Executed   State = "executed"   // result, signature and commitment stored
	Committing State = "committing" // signed commit tx stored, then sent
	Committed  State = "committed"  // commitment seen on chain
	Attesting  State = "attesting"  // signed tee_attest_result tx stored, then sent (tee_required jobs)
	Pushed     State = "pushed"     // result delivered to the aggregator
	Revealing  State = "revealing"  // signed reveal / submission tx stored, then sent
	Revealed   State = "revealed"   // reveal / submission seen on chain
	Done       State = "done"       // the job reached a terminal chain state
	Declined   State = "declined"   // over capacity or unservable: never committed
	Failed     State = "failed"     // execution or result check failed: never committed
)

// Terminal reports whether nothing remains to do for the job.
func (s State) Terminal() bool { return s == Done || s == Declined || s == Failed }

// Job is what the machine decides on: the runner's durable record of one
// assignment, reduced to the fields its decisions read.
type Job struct {
	State      State
	Deadline   uint64     // commit deadline of the assignment
	Commitment types.Hash // our commitment, once executed
	// TxKind is the kind of the persisted transaction (commit,
	// attest_result, submit, reveal).
	TxKind       string
	SelfRevealed bool
	// ResultAttested: our per-job TEE evidence landed, or was refused in
	// a mode that does not need it; never sent twice.
	ResultAttested bool
	// Deterministic: the job's mode counts our result only with our
	// per-job TEE evidence on chain.
	Deterministic bool
	// Aggregator: this runner aggregates the job's committee.
	Aggregator bool
	// NeedsEvidence: our result may not leave the runner before our
	// per-job TEE evidence is on chain (a tee_required job on a runner
	// with an attester, not yet attested).
	NeedsEvidence bool
}

// TxState is what the node knows of a persisted transaction.
type TxState int

// Transaction states.
const (
	TxUnknown TxState = iota // not in the mempool nor a block, and re-sending it was refused: rebuild
	TxPending                // in the mempool (or re-sent)
	TxSuccess                // included, succeeded
	TxFailed                 // included, failed
)

// Event is an observation the daemon feeds the machine.
type Event interface{ isEvent() }

// ChainJob is the chain's view of the job at Height.
type ChainJob struct {
	Height uint64
	Status job.State
	// Ours: the assignment stands (same retry, we are in the committee).
	Ours bool
	// Commitment is our commitment as the chain holds it, nil if none.
	Commitment *types.Hash
	// CommitMargin is how many blocks before the deadline a commit must
	// be sent to land in time.
	CommitMargin uint64
	// Agreed, Dissented: we are among the runners the verified claim
	// agreed with, or among those it outvoted (a settled job).
	Agreed, Dissented bool
	// FailReason is the chain's reason for a failed job.
	FailReason string
}

// TxOutcome is the fate of the persisted transaction (Job.TxKind).
type TxOutcome struct {
	State TxState
	Why   string // the failure's text, for TxFailed
}

func (Ran) isEvent()         {}
func (ChainJob) isEvent()    {}
func (TxOutcome) isEvent()   {}
func (Resume) isEvent()      {}
func (Collected) isEvent()   {}
func (Verified) isEvent()    {}
func (PushOutcome) isEvent() {}

// Action is an effect the daemon performs after persisting the job.
type Action interface{ isAction() }

// Execute runs the executor and reports Ran.
type Execute struct{}

// Send builds, persists (with the job in Next) and submits a transaction.
type Send struct {
	Kind string // commit, reveal
	Next State
}

// Finish marks the job terminal.
type Finish struct {
	State   State
	Outcome string
	Why     string
}

// Wait waits for the next block before stepping again.
type Wait struct{}

// Release drops the job's result from memory (the job is verified).
type Release struct{}

// Settle records the chain's final outcome (Outcome, Why) and what we
// earned, and marks the job Done.
type Settle struct{ Outcome, Why string }

// ClearTx forgets the persisted transaction (it landed, failed or was
// lost), recording Error if set.
type ClearTx struct{ Error string }

// CommitSeen records that our commitment landed (state Committed): it
// forgets the commit transaction and records the commit latency.
type CommitSeen struct{}

func (StoreResult) isAction()   {}
func (Execute) isAction()       {}
func (Collect) isAction()       {}
func (Push) isAction()          {}
func (VerifyResults) isAction() {}
func (Persist) isAction()       {}
func (Send) isAction()          {}
func (Finish) isAction()        {}
func (Wait) isAction()          {}
func (Release) isAction()       {}
func (Settle) isAction()        {}
func (ClearTx) isAction()       {}
func (CommitSeen) isAction()    {}

// Step returns the job after ev and the actions to perform, in order. An
// event the state does not use leaves the job unchanged with no action.
func Step(j Job, ev Event) (Job, []Action) {
	switch e := ev.(type) {
	case ChainJob:
		return stepChain(j, e)
	case TxOutcome:
		return stepTx(j, e)
	case Ran:
		return stepRan(j, e)
	case Resume:
		return stepResume(j)
	case Collected:
		return stepCollected(j, e)
	case Verified:
		return stepVerified(j, e)
	case PushOutcome:
		return stepPush(j, e)
	}
	panic(fmt.Sprintf("jobmachine: unknown event %T", ev))
}

func finish(j Job, s State, outcome, why string) (Job, []Action) {
	j.State = s
	return j, []Action{Finish{State: s, Outcome: outcome, Why: why}}
}

func stepChain(j Job, c ChainJob) (Job, []Action) {
	switch j.State {
	case Assigned, Executing:
		if j.State == Executing && (!c.Ours || c.Status != job.StateAssigned || c.Height > j.Deadline) {
			// Resuming after a restart: the chain moved on meanwhile.
			return finish(j, Done, "missed", "assignment ended while the runner was down (job "+c.Status.String()+")")
		}
		if c.Height > j.Deadline {
			return finish(j, Failed, "missed", fmt.Sprintf("commit deadline %d passed before execution (height %d)", j.Deadline, c.Height))
		}
		j.State = Executing
		return j, []Action{Execute{}}
	case Executed:
		if c.Commitment != nil && c.Ours {
			return committed(j, *c.Commitment)
		}
		if !c.Ours || c.Status != job.StateAssigned {
			return finish(j, Done, "dropped", "assignment ended before commit (job "+c.Status.String()+")")
		}
		if c.Height+c.CommitMargin > j.Deadline {
			return finish(j, Done, "missed", fmt.Sprintf("result ready at height %d, too close to the commit deadline %d", c.Height, j.Deadline))
		}
		j.State, j.TxKind = Committing, "commit"
		return j, []Action{Send{Kind: "commit", Next: Committing}}
	case Committing:
		if c.Commitment != nil && c.Ours {
			return committed(j, *c.Commitment)
		}
		if !c.Ours || c.Status != job.StateAssigned || c.Height > j.Deadline {
			return finish(j, Done, "missed", "commitment did not land before the deadline (job "+c.Status.String()+")")
		}
		return j, nil // the transaction's fate decides (TxOutcome)
	case Pushed, Revealed:
		switch {
		case c.Status == job.StateFinalized || c.Status == job.StateFailed:
			j.State = Done
			return j, []Action{settle(c)}
		case !c.Ours:
			return finish(j, Done, "dropped", "no longer in the committee")
		case c.Status == job.StateVerified:
			return j, []Action{Release{}, Wait{}}
		case c.Status == job.StateRevealed && !j.SelfRevealed:
			// The aggregator timed out: reveal individually.
			j.State, j.TxKind = Revealing, "reveal"
			return j, []Action{Send{Kind: "reveal", Next: Revealing}}
		}
		return j, []Action{Wait{}}
	case Attesting:
		if !c.Ours || (c.Status != job.StateAssigned && c.Status != job.StateCommitted && c.Status != job.StateRevealed) {
			// The result phase is over: what remains is the outcome.
			j.State, j.TxKind, j.ResultAttested = Pushed, "", true
			return j, []Action{ClearTx{}}
		}
		return j, []Action{Wait{}}
	}
	return j, nil
}

// settle names a settled job's outcome for this runner: the chain's
// status, or for a finalized job we were not counted in, whether we were
// outvoted or our result never reached the verifier.
func settle(c ChainJob) Settle {
	outcome := c.Status.String()
	switch {
	case c.Status != job.StateFinalized || c.Agreed:
	case c.Dissented:
		outcome = "outvoted"
	default:
		outcome = "missing"
	}
	return Settle{Outcome: outcome, Why: c.FailReason}
}

// Ran is the executor's outcome (Execute).
type Ran struct {
	Err string // the executor's failure, "" if it produced a result
	// Faulted: Err is the job's fault (bad input, bounds too tight, the
	// service down), which a runner reports instead of a result.
	Faulted bool
	// CheckErr: the local result check refused the output.
	CheckErr string
}

// StoreResult signs and stores the result, or for Fault an empty result
// with a signed fault report, with its commitment (state Executed).
type StoreResult struct{ Fault bool }

func stepRan(j Job, r Ran) (Job, []Action) {
	if j.State != Executing {
		return j, nil
	}
	switch {
	case r.Err != "" && !r.Faulted:
		return finish(j, Failed, "failed", "execute: "+r.Err)
	case r.Err != "":
		// Commit the fault report, so a committee agreeing on the fault
		// is paid its row (spec 002 Payment and Failure Handling) instead
		// of timing out. Every mode refuses a fault report as a result.
		j.State = Executed
		return j, []Action{StoreResult{Fault: true}}
	case r.CheckErr != "":
		return finish(j, Failed, "rejected_locally", "result check: "+r.CheckErr)
	}
	j.State = Executed
	return j, []Action{StoreResult{}}
}

func committed(j Job, onChain types.Hash) (Job, []Action) {
	if onChain != j.Commitment {
		// Only possible if the data dir was replaced under a running key.
		return finish(j, Failed, "failed", "the chain holds a different commitment from this runner: refusing to reveal")
	}
	j.State, j.TxKind = Committed, ""
	return j, []Action{CommitSeen{}}
}

func stepTx(j Job, t TxOutcome) (Job, []Action) {
	switch j.State {
	case Committing:
		switch t.State {
		case TxFailed:
			return finish(j, Done, "missed", "commit transaction failed: "+t.Why)
		case TxUnknown:
			j.State, j.TxKind = Executed, "" // rebuild the commit
			return j, []Action{ClearTx{}}
		}
		return j, []Action{Wait{}}
	case Revealing:
		kind := j.TxKind
		switch t.State {
		case TxSuccess:
			j.State, j.TxKind, j.SelfRevealed = Revealed, "", j.SelfRevealed || kind == "reveal"
			return j, []Action{ClearTx{}}
		case TxFailed:
			// The job moved on (the aggregator's submission landed first,
			// or the window closed): watching decides what remains.
			j.State, j.TxKind, j.SelfRevealed = Revealed, "", j.SelfRevealed || kind == "reveal"
			return j, []Action{ClearTx{Error: kind + ": " + t.Why}}
		case TxUnknown:
			j.State, j.TxKind = Pushed, ""
			if kind == "submit" {
				j.State = Committed
			}
			return j, []Action{ClearTx{}}
		}
		return j, []Action{Wait{}}
	case Attesting:
		switch t.State {
		case TxSuccess:
			j.State, j.TxKind, j.ResultAttested = Committed, "", true
			return j, []Action{ClearTx{}}
		case TxFailed:
			if j.Deterministic {
				return finish(j, Failed, "failed", "per-job TEE evidence refused: "+t.Why)
			}
			// Other modes do not need the evidence and carry on.
			j.State, j.TxKind, j.ResultAttested = Committed, "", true
			return j, []Action{ClearTx{Error: "attest_result: " + t.Why}}
		case TxUnknown:
			j.State, j.TxKind = Committed, "" // rebuild
			return j, []Action{ClearTx{}}
		}
		return j, nil // pending: the chain's view decides (ChainJob)
	}
	return j, nil
}
