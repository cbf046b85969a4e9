package jobmachine

import (
	"reflect"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func TestStep(t *testing.T) {
	mine := types.Hash{1}
	other := types.Hash{2}
	at := func(h uint64, s job.State) ChainJob {
		return ChainJob{Height: h, Status: s, Ours: true, CommitMargin: 2}
	}
	withCommit := func(c ChainJob, h types.Hash) ChainJob { c.Commitment = &h; return c }
	notOurs := func(c ChainJob) ChainJob { c.Ours = false; return c }
	agreed := func(c ChainJob) ChainJob { c.Agreed = true; return c }
	dissented := func(c ChainJob) ChainJob { c.Dissented = true; return c }
	failed := func(c ChainJob, why string) ChainJob { c.FailReason = why; return c }
	base := Job{Deadline: 10, Commitment: mine}
	in := func(s State) Job { j := base; j.State = s; return j }
	inTx := func(s State, kind string) Job { j := in(s); j.TxKind = kind; return j }
	det := func(j Job) Job { j.Deterministic = true; return j }
	cases := []struct {
		name    string
		job     Job
		ev      Event
		want    State
		actions []Action
	}{
		// assigned → execute
		{"assigned executes", in(Assigned), at(3, job.StateAssigned), Executing, []Action{Execute{}}},
		{"assigned past deadline fails", in(Assigned), at(11, job.StateAssigned), Failed,
			[]Action{Finish{Failed, "missed", "commit deadline 10 passed before execution (height 11)"}}},
		// restart from persisted state
		{"restart while executing re-executes", in(Executing), at(5, job.StateAssigned), Executing, []Action{Execute{}}},
		{"restart finds the assignment over", in(Executing), at(5, job.StateFailed), Done,
			[]Action{Finish{Done, "missed", "assignment ended while the runner was down (job failed)"}}},
		{"restart finds us replaced", in(Executing), notOurs(at(5, job.StateAssigned)), Done,
			[]Action{Finish{Done, "missed", "assignment ended while the runner was down (job assigned)"}}},
		// the executor's outcome
		{"ran: result stored", in(Executing), Ran{}, Executed, []Action{StoreResult{}}},
		{"ran: job fault reported", in(Executing), Ran{Err: "bad input", Faulted: true}, Executed, []Action{StoreResult{Fault: true}}},
		{"ran: own failure", in(Executing), Ran{Err: "refused"}, Failed, []Action{Finish{Failed, "failed", "execute: refused"}}},
		{"ran: result check refused", in(Executing), Ran{CheckErr: "not json"}, Failed,
			[]Action{Finish{Failed, "rejected_locally", "result check: not json"}}},
		{"ran ignored outside executing", in(Executed), Ran{}, Executed, nil},
		// executed → commit
		{"executed commits", in(Executed), at(5, job.StateAssigned), Committing, []Action{Send{"commit", Committing}}},
		{"executed too close to the deadline", in(Executed), at(9, job.StateAssigned), Done,
			[]Action{Finish{Done, "missed", "result ready at height 9, too close to the commit deadline 10"}}},
		{"executed but dropped", in(Executed), notOurs(at(5, job.StateAssigned)), Done,
			[]Action{Finish{Done, "dropped", "assignment ended before commit (job assigned)"}}},
		{"restart after the commit landed", in(Executed), withCommit(at(5, job.StateAssigned), mine), Committed, []Action{CommitSeen{}}},
		{"chain holds another commitment", in(Executed), withCommit(at(5, job.StateAssigned), other), Failed,
			[]Action{Finish{Failed, "failed", "the chain holds a different commitment from this runner: refusing to reveal"}}},
		// committing: the chain, then the transaction
		{"commitment seen", inTx(Committing, "commit"), withCommit(at(6, job.StateAssigned), mine), Committed, []Action{CommitSeen{}}},
		{"commit pending on chain", inTx(Committing, "commit"), at(6, job.StateAssigned), Committing, nil},
		{"commit timed out", inTx(Committing, "commit"), at(11, job.StateAssigned), Done,
			[]Action{Finish{Done, "missed", "commitment did not land before the deadline (job assigned)"}}},
		{"commit tx pending waits", inTx(Committing, "commit"), TxOutcome{State: TxPending}, Committing, []Action{Wait{}}},
		{"commit tx failed", inTx(Committing, "commit"), TxOutcome{State: TxFailed, Why: "late"}, Done,
			[]Action{Finish{Done, "missed", "commit transaction failed: late"}}},
		{"commit tx lost: rebuild", inTx(Committing, "commit"), TxOutcome{State: TxUnknown}, Executed, []Action{ClearTx{}}},
		// aggregate / reveal
		{"pushed waits", in(Pushed), at(7, job.StateCommitted), Pushed, []Action{Wait{}}},
		{"aggregator timed out: reveal", in(Pushed), at(8, job.StateRevealed), Revealing, []Action{Send{"reveal", Revealing}}},
		{"verified releases the result", in(Revealed), at(9, job.StateVerified), Revealed, []Action{Release{}, Wait{}}},
		{"reveal landed", inTx(Revealing, "reveal"), TxOutcome{State: TxSuccess}, Revealed, []Action{ClearTx{}}},
		{"reveal refused", inTx(Revealing, "reveal"), TxOutcome{State: TxFailed, Why: "closed"}, Revealed, []Action{ClearTx{Error: "reveal: closed"}}},
		{"lost submission goes back to committed", inTx(Revealing, "submit"), TxOutcome{State: TxUnknown}, Committed, []Action{ClearTx{}}},
		{"lost reveal goes back to pushed", inTx(Revealing, "reveal"), TxOutcome{State: TxUnknown}, Pushed, []Action{ClearTx{}}},
		// per-job TEE evidence (tee_required jobs)
		{"evidence landed", inTx(Attesting, "attest_result"), TxOutcome{State: TxSuccess}, Committed, []Action{ClearTx{}}},
		{"evidence refused, deterministic", det(inTx(Attesting, "attest_result")), TxOutcome{State: TxFailed, Why: "bad quote"}, Failed,
			[]Action{Finish{Failed, "failed", "per-job TEE evidence refused: bad quote"}}},
		{"evidence refused, other mode", inTx(Attesting, "attest_result"), TxOutcome{State: TxFailed, Why: "bad quote"}, Committed,
			[]Action{ClearTx{Error: "attest_result: bad quote"}}},
		{"evidence tx lost: rebuild", inTx(Attesting, "attest_result"), TxOutcome{State: TxUnknown}, Committed, []Action{ClearTx{}}},
		{"evidence pending", inTx(Attesting, "attest_result"), TxOutcome{State: TxPending}, Attesting, nil},
		{"evidence pending, result phase open", inTx(Attesting, "attest_result"), at(6, job.StateCommitted), Attesting, []Action{Wait{}}},
		{"evidence pending, result phase over", inTx(Attesting, "attest_result"), at(6, job.StateVerified), Pushed, []Action{ClearTx{}}},
		// done / failed
		{"finalized settles", in(Revealed), agreed(at(12, job.StateFinalized)), Done, []Action{Settle{Outcome: "finalized"}}},
		{"finalized, outvoted", in(Revealed), dissented(at(12, job.StateFinalized)), Done, []Action{Settle{Outcome: "outvoted"}}},
		{"finalized without our result", in(Pushed), at(12, job.StateFinalized), Done, []Action{Settle{Outcome: "missing"}}},
		{"failed job settles", in(Pushed), failed(at(12, job.StateFailed), "no quorum"), Done, []Action{Settle{Outcome: "failed", Why: "no quorum"}}},
		{"dropped from the committee", in(Pushed), notOurs(at(8, job.StateCommitted)), Done,
			[]Action{Finish{Done, "dropped", "no longer in the committee"}}},
		{"terminal ignores events", in(Done), at(13, job.StateFinalized), Done, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, acts := Step(c.job, c.ev)
			if got.State != c.want || !reflect.DeepEqual(acts, c.actions) {
				t.Fatalf("Step(%s, %+v) = %s %#v, want %s %#v", c.job.State, c.ev, got.State, acts, c.want, c.actions)
			}
		})
	}
}

// A whole lifecycle through Step alone, as the daemon drives it: assigned,
// executed, committed, pushed to the aggregator, the aggregator times out,
// our reveal lands, the job is finalized.
func TestLifecycle(t *testing.T) {
	j := Job{State: Assigned, Deadline: 10, Commitment: types.Hash{7}}
	c := func(h uint64, s job.State) ChainJob {
		return ChainJob{Height: h, Status: s, Ours: true, CommitMargin: 1}
	}
	j, _ = Step(j, c(2, job.StateAssigned))
	j.State = Executed // the Execute action's outcome
	j, acts := Step(j, c(3, job.StateAssigned))
	if j.State != Committing || len(acts) != 1 {
		t.Fatalf("commit: %s %v", j.State, acts)
	}
	h := j.Commitment
	cj := c(4, job.StateAssigned)
	cj.Commitment = &h
	if j, _ = Step(j, cj); j.State != Committed {
		t.Fatalf("after the commitment landed: %s", j.State)
	}
	j.State = Pushed // the Push effect
	if j, _ = Step(j, c(6, job.StateRevealed)); j.State != Revealing || j.TxKind != "reveal" {
		t.Fatalf("aggregator timeout: %+v", j)
	}
	if j, _ = Step(j, TxOutcome{State: TxSuccess}); j.State != Revealed || !j.SelfRevealed {
		t.Fatalf("reveal landed: %+v", j)
	}
	// Our reveal is never sent twice.
	if j2, acts := Step(j, c(7, job.StateRevealed)); j2.State != Revealed || !reflect.DeepEqual(acts, []Action{Wait{}}) {
		t.Fatalf("second reveal: %s %v", j2.State, acts)
	}
	if j, _ = Step(j, c(8, job.StateFinalized)); !j.State.Terminal() {
		t.Fatalf("finalized: %s", j.State)
	}
}
