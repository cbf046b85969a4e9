package jobmachine

import (
	"reflect"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The result phase: every transition of Resume, Collected, Verified and
// PushOutcome, each from the state a restart finds persisted.
func TestStepResultPhase(t *testing.T) {
	committed := Job{State: Committed, Deadline: 10, Commitment: types.Hash{1}}
	agg := committed
	agg.Aggregator = true
	tee := committed
	tee.NeedsEvidence = true
	teeAgg := agg
	teeAgg.NeedsEvidence = true
	collected := func(h uint64, s job.State, commits, reveals int) Collected {
		return Collected{Height: h, Status: s, Ours: true, Deadline: 20, Commitments: commits, Reveals: reveals}
	}
	notOurs := func(c Collected) Collected { c.Ours = false; return c }
	retry := func(s job.State) PushOutcome { return PushOutcome{Result: PushRetry, Status: s, StatusKnown: true} }
	cases := []struct {
		name    string
		job     Job
		ev      Event
		want    State
		txKind  string
		actions []Action
	}{
		// Entering (or restarting in) Committed: the role decides.
		{"member pushes", committed, Resume{}, Committed, "", []Action{Push{}}},
		{"aggregator collects", agg, Resume{}, Committed, "", []Action{Collect{}}},
		{"tee job attests first", tee, Resume{}, Attesting, "attest_result", []Action{Send{"attest_result", Attesting}}},
		{"tee aggregator attests first", teeAgg, Resume{}, Attesting, "attest_result", []Action{Send{"attest_result", Attesting}}},
		{"resume elsewhere does nothing", Job{State: Pushed}, Resume{}, Pushed, "", nil},
		// Aggregator: collect until every result is in or the deadline nears.
		{"commits still landing", agg, collected(5, job.StateAssigned, 1, 1), Committed, "", []Action{Wait{}}},
		{"some results missing, early", agg, collected(5, job.StateCommitted, 3, 2), Committed, "", []Action{Wait{}}},
		{"all results in", agg, collected(5, job.StateCommitted, 3, 3), Committed, "", []Action{VerifyResults{All: true}}},
		{"deadline near with some missing", agg, collected(18, job.StateCommitted, 3, 2), Committed, "", []Action{VerifyResults{All: false}}},
		{"one block before the margin", agg, collected(17, job.StateCommitted, 3, 2), Committed, "", []Action{Wait{}}},
		{"aggregator window over", agg, collected(21, job.StateRevealed, 3, 0), Pushed, "", []Action{Persist{}}},
		{"job ended under the aggregator", agg, collected(21, job.StateFailed, 3, 0), Pushed, "", []Action{Persist{}}},
		{"aggregator replaced", agg, notOurs(collected(8, job.StateCommitted, 3, 3)), Pushed, "", []Action{Persist{}}},
		{"member ignores Collected", committed, collected(5, job.StateCommitted, 3, 3), Committed, "", nil},
		// Aggregator: the verification outcome.
		{"all in and accepted: submit", agg, Verified{All: true, Accepted: true}, Revealing, "submit", []Action{Send{"submit", Revealing}}},
		{"all in, rejected: submit the rejection", agg, Verified{All: true}, Revealing, "submit", []Action{Send{"submit", Revealing}}},
		{"quorum with some missing: submit", agg, Verified{Accepted: true}, Revealing, "submit", []Action{Send{"submit", Revealing}}},
		{"no quorum with some missing: leave to reveals", agg, Verified{}, Pushed, "", []Action{Persist{}}},
		{"member ignores Verified", committed, Verified{All: true, Accepted: true}, Committed, "", nil},
		// Member: push until delivered, refused, or the phase is over.
		{"push delivered", committed, PushOutcome{Result: PushDelivered}, Pushed, "", []Action{Persist{}}},
		{"push refused for good", committed, PushOutcome{Result: PushRefused}, Pushed, "", []Action{Persist{}}},
		{"no aggregator endpoint", committed, PushOutcome{Result: PushNoEndpoint}, Pushed, "", []Action{Persist{}}},
		{"push retry, status unknown", committed, PushOutcome{Result: PushRetry}, Committed, "", []Action{Wait{}}},
		{"push retry, commits landing", committed, retry(job.StateAssigned), Committed, "", []Action{Wait{}}},
		{"push retry, aggregating", committed, retry(job.StateCommitted), Committed, "", []Action{Wait{}}},
		{"push retry, window over", committed, retry(job.StateRevealed), Pushed, "", []Action{Persist{}}},
		{"push retry, job verified", committed, retry(job.StateVerified), Pushed, "", []Action{Persist{}}},
		{"aggregator ignores PushOutcome", agg, PushOutcome{Result: PushDelivered}, Committed, "", nil},
		// Restart after the aggregate was sent: the submission's fate.
		{"submission landed", Job{State: Revealing, TxKind: "submit", Aggregator: true}, TxOutcome{State: TxSuccess}, Revealed, "", []Action{ClearTx{}}},
		{"submission refused", Job{State: Revealing, TxKind: "submit", Aggregator: true}, TxOutcome{State: TxFailed, Why: "late"}, Revealed, "",
			[]Action{ClearTx{Error: "submit: late"}}},
		{"submission lost: collect again", Job{State: Revealing, TxKind: "submit", Aggregator: true}, TxOutcome{State: TxUnknown}, Committed, "", []Action{ClearTx{}}},
		{"submission pending", Job{State: Revealing, TxKind: "submit", Aggregator: true}, TxOutcome{State: TxPending}, Revealing, "submit", []Action{Wait{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, acts := Step(c.job, c.ev)
			if got.State != c.want || got.TxKind != c.txKind || !reflect.DeepEqual(acts, c.actions) {
				t.Fatalf("Step(%+v, %+v) = %s/%q %#v, want %s/%q %#v", c.job, c.ev, got.State, got.TxKind, acts, c.want, c.txKind, c.actions)
			}
		})
	}
}

// The aggregator's whole path through Step alone: committed, collecting
// while results arrive, verifying once all are in, submitting, the
// submission lands, the job is finalized.
func TestAggregatorLifecycle(t *testing.T) {
	j := Job{State: Committed, Deadline: 10, Commitment: types.Hash{7}, Aggregator: true}
	j, acts := Step(j, Resume{})
	if !reflect.DeepEqual(acts, []Action{Collect{}}) {
		t.Fatalf("resume: %v", acts)
	}
	for reveals := 1; reveals < 3; reveals++ {
		if j, acts = Step(j, Collected{Height: uint64(4 + reveals), Status: job.StateCommitted, Ours: true, Deadline: 20, Commitments: 3, Reveals: reveals}); !reflect.DeepEqual(acts, []Action{Wait{}}) {
			t.Fatalf("%d of 3 results: %s %v", reveals, j.State, acts)
		}
	}
	j, acts = Step(j, Collected{Height: 8, Status: job.StateCommitted, Ours: true, Deadline: 20, Commitments: 3, Reveals: 3})
	if !reflect.DeepEqual(acts, []Action{VerifyResults{All: true}}) {
		t.Fatalf("all in: %v", acts)
	}
	if j, _ = Step(j, Verified{All: true, Accepted: true}); j.State != Revealing || j.TxKind != "submit" {
		t.Fatalf("verified: %+v", j)
	}
	if j, _ = Step(j, TxOutcome{State: TxSuccess}); j.State != Revealed || j.SelfRevealed {
		t.Fatalf("submission landed: %+v", j)
	}
	// The aggregate verified the job: the result may be dropped.
	if j2, acts := Step(j, ChainJob{Height: 9, Status: job.StateVerified, Ours: true}); j2.State != Revealed || !reflect.DeepEqual(acts, []Action{Release{}, Wait{}}) {
		t.Fatalf("after the submission: %s %v", j2.State, acts)
	}
	if j, _ = Step(j, ChainJob{Height: 10, Status: job.StateFinalized, Ours: true}); !j.State.Terminal() {
		t.Fatalf("finalized: %s", j.State)
	}
}
