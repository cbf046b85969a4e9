package jobmachine

import "github.com/cowboy-foundation/cowboy/chain/offchain/job"

// The result phase, after our commitment landed (state Committed): send
// our per-job TEE evidence if the job needs it, then either push our
// result to the aggregator (a member) or collect the committee's results,
// verify them and submit the aggregate (the aggregator). Both end in
// Pushed, from where the member path (ChainJob in Pushed) reveals
// individually if the aggregator window closes without a submission.

// Resume asks what a state decided without the chain does next: the
// daemon steps it on entering Committed, after a restart included.
type Resume struct{}

// Collected is the aggregator's view of the job at a block.
type Collected struct {
	Height   uint64
	Status   job.State
	Ours     bool   // the assignment stands, we are in the committee
	Deadline uint64 // the aggregator's submission deadline
	// Commitments is how many members committed; Reveals how many of
	// their results the aggregator holds that the Result Verifier will
	// count (opened commitments, with per-job evidence where needed).
	Commitments, Reveals int
}

// Verified is the outcome of running the job's verification mode over the
// results collected (VerifyResults).
type Verified struct {
	All      bool // every committed member's result was counted
	Accepted bool // the mode accepts a claim from them
}

// PushResult is the fate of one attempt to push our result.
type PushResult int

// Push results.
const (
	PushDelivered  PushResult = iota // the aggregator accepted it
	PushRefused                      // a permanent refusal: retrying will not change it
	PushNoEndpoint                   // the aggregator registered no endpoint
	PushRetry                        // unreachable or not ready: try again next block
)

// PushOutcome is the result of a push attempt. For PushRetry, Status is
// the job's chain status when it could be read (StatusKnown).
type PushOutcome struct {
	Result      PushResult
	Status      job.State
	StatusKnown bool
}

// Collect records our own result among the collected ones, then observes
// the job each block (Collected).
type Collect struct{}

// Push delivers our result to the aggregator (PushOutcome).
type Push struct{}

// VerifyResults runs the job's verification mode over the results
// collected and reports Verified. All: every committed result is in.
type VerifyResults struct{ All bool }

// Persist writes the job as returned: a local decision with no external
// effect.
type Persist struct{}

// aggregateMargin is how many blocks before its deadline the aggregator
// submits with what it has when some results are missing.
const aggregateMargin = 2

func resultPhase(s job.State) bool { return s == job.StateAssigned || s == job.StateCommitted }

func stepResume(j Job) (Job, []Action) {
	if j.State != Committed {
		return j, nil
	}
	switch {
	case j.NeedsEvidence:
		j.TxKind = "attest_result"
		j.State = Attesting
		return j, []Action{Send{Kind: "attest_result", Next: Attesting}}
	case j.Aggregator:
		return j, []Action{Collect{}}
	}
	return j, []Action{Push{}}
}

func stepCollected(j Job, c Collected) (Job, []Action) {
	if j.State != Committed || !j.Aggregator {
		return j, nil
	}
	if !c.Ours || !resultPhase(c.Status) {
		// Timed out as aggregator (or the job ended): the member path
		// reveals individually if the chain asks for reveals.
		j.State = Pushed
		return j, []Action{Persist{}}
	}
	if c.Status == job.StateCommitted {
		all := c.Reveals == c.Commitments
		if all || c.Height+aggregateMargin >= c.Deadline {
			return j, []Action{VerifyResults{All: all}}
		}
	}
	return j, []Action{Wait{}}
}

func stepVerified(j Job, v Verified) (Job, []Action) {
	if j.State != Committed || !j.Aggregator {
		return j, nil
	}
	if !v.Accepted && !v.All {
		// Missing results, not disagreement: a rejection now would refund
		// a job the individual reveals after the aggregator window can
		// still settle.
		j.State = Pushed
		return j, []Action{Persist{}}
	}
	j.State, j.TxKind = Revealing, "submit"
	return j, []Action{Send{Kind: "submit", Next: Revealing}}
}

func stepPush(j Job, p PushOutcome) (Job, []Action) {
	if j.State != Committed || j.Aggregator {
		return j, nil
	}
	if p.Result == PushRetry && (!p.StatusKnown || resultPhase(p.Status)) {
		return j, []Action{Wait{}}
	}
	// Delivered, refused for good, or the aggregator phase is over: the
	// chain decides what remains (ChainJob in Pushed).
	j.State = Pushed
	return j, []Action{Persist{}}
}
