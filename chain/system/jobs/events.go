// Package jobs is the Job Dispatcher (0x…02) and the Result Verifier
// (0x…03) system actors of off-chain compute (CIP-2 §4–8): job records,
// submission and committee selection (over the Runner Registry, the TEE
// Verifier and the Entitlement Registry), the job state machine's effects,
// settlement, commitments, reveals, verification, challenges, the callback
// queue, and their events. The executor's job lane ticks due jobs (Tx.Tick)
// and delivers the queued callbacks to actors.
package jobs

import (
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Event topics.
const (
	TopicJobCallback       = "JobCallback"
	TopicJobSubmitted      = "JobSubmitted"
	TopicJobAssigned       = "JobAssigned"
	TopicJobFailed         = "JobFailed"
	TopicUsageAnomaly      = "UsageAnomaly"
	TopicJobSettled        = "JobSettled"
	TopicJobCommitted      = "JobCommitted"
	TopicJobRejected       = "JobRejected"
	TopicJobVerified       = "JobVerified"
	TopicJobRevealed       = "JobRevealed"
	TopicChallengeRejected = "ChallengeRejected"
	TopicChallengeUpheld   = "ChallengeUpheld"
	TopicJobCallbackQueued = "JobCallbackQueued"
)

// JobSubmittedEvent is the data of the JobSubmitted event.
type JobSubmittedEvent struct {
	JobID         types.Hash    `cbor:"job_id" json:"job_id"`
	Submitter     types.Address `cbor:"submitter" json:"submitter"`
	Escrow        *big.Int      `cbor:"escrow" json:"escrow"`
	Candidates    uint64        `cbor:"candidates" json:"candidates"`
	CandidateRoot types.Hash    `cbor:"candidate_root" json:"candidate_root"`
}

// Topic implements system.EventData.
func (*JobSubmittedEvent) Topic() string { return TopicJobSubmitted }

// JobAssignedEvent is the data of the JobAssigned event.
type JobAssignedEvent struct {
	JobID      types.Hash      `cbor:"job_id" json:"job_id"`
	Runners    []types.Address `cbor:"runners" json:"runners"`
	Aggregator types.Address   `cbor:"aggregator" json:"aggregator"`
	Retry      uint64          `cbor:"retry" json:"retry"`
	Deadline   uint64          `cbor:"deadline" json:"deadline"`
}

// Topic implements system.EventData.
func (*JobAssignedEvent) Topic() string { return TopicJobAssigned }

// JobFailedEvent is the data of the JobFailed event.
type JobFailedEvent struct {
	JobID  types.Hash `cbor:"job_id" json:"job_id"`
	Reason uint64     `cbor:"reason" json:"reason"`
	Retry  uint64     `cbor:"retry" json:"retry"`
}

// Topic implements system.EventData.
func (*JobFailedEvent) Topic() string { return TopicJobFailed }

// UsageAnomalyEvent is the data of the UsageAnomaly event.
type UsageAnomalyEvent struct {
	JobID      types.Hash    `cbor:"job_id" json:"job_id"`
	Runner     types.Address `cbor:"runner" json:"runner"`
	WallTimeMs uint64        `cbor:"wall_time_ms" json:"wall_time_ms"`
	ExpectedMs uint64        `cbor:"expected_ms" json:"expected_ms"`
}

// Topic implements system.EventData.
func (*UsageAnomalyEvent) Topic() string { return TopicUsageAnomaly }

// JobSettledEvent is the data of the JobSettled event.
type JobSettledEvent struct {
	JobID   types.Hash `cbor:"job_id" json:"job_id"`
	Outcome uint64     `cbor:"outcome" json:"outcome"`
	Payment *big.Int   `cbor:"payment" json:"payment"`
	Refund  *big.Int   `cbor:"refund" json:"refund"`
}

// Topic implements system.EventData.
func (*JobSettledEvent) Topic() string { return TopicJobSettled }

// JobCommittedEvent is the data of the JobCommitted event.
type JobCommittedEvent struct {
	JobID      types.Hash    `cbor:"job_id" json:"job_id"`
	Runner     types.Address `cbor:"runner" json:"runner"`
	Commitment types.Hash    `cbor:"commitment" json:"commitment"`
}

// Topic implements system.EventData.
func (*JobCommittedEvent) Topic() string { return TopicJobCommitted }

// JobRejectedEvent is the data of the JobRejected event.
type JobRejectedEvent struct {
	JobID     types.Hash      `cbor:"job_id" json:"job_id"`
	Dissented []types.Address `cbor:"dissented" json:"dissented"`
}

// Topic implements system.EventData.
func (*JobRejectedEvent) Topic() string { return TopicJobRejected }

// JobVerifiedEvent is the data of the JobVerified event.
type JobVerifiedEvent struct {
	JobID      types.Hash      `cbor:"job_id" json:"job_id"`
	ResultHash types.Hash      `cbor:"result_hash" json:"result_hash"`
	Agreed     []types.Address `cbor:"agreed" json:"agreed"`
	Dissented  []types.Address `cbor:"dissented" json:"dissented"`
	Aggregator *types.Address  `cbor:"aggregator,omitempty" json:"aggregator,omitempty"`
}

// Topic implements system.EventData.
func (*JobVerifiedEvent) Topic() string { return TopicJobVerified }

// JobRevealedEvent is the data of the JobRevealed event.
type JobRevealedEvent struct {
	JobID  types.Hash    `cbor:"job_id" json:"job_id"`
	Runner types.Address `cbor:"runner" json:"runner"`
}

// Topic implements system.EventData.
func (*JobRevealedEvent) Topic() string { return TopicJobRevealed }

// ChallengeRejectedEvent is the data of the ChallengeRejected event.
type ChallengeRejectedEvent struct {
	JobID      types.Hash    `cbor:"job_id" json:"job_id"`
	Challenger types.Address `cbor:"challenger" json:"challenger"`
	Forfeited  *big.Int      `cbor:"forfeited" json:"forfeited"`
	Reason     string        `cbor:"reason" json:"reason"`
}

// Topic implements system.EventData.
func (*ChallengeRejectedEvent) Topic() string { return TopicChallengeRejected }

// ChallengeUpheldEvent is the data of the ChallengeUpheld event.
type ChallengeUpheldEvent struct {
	JobID      types.Hash      `cbor:"job_id" json:"job_id"`
	Challenger types.Address   `cbor:"challenger" json:"challenger"`
	Culprits   []types.Address `cbor:"culprits" json:"culprits"`
	Reason     string          `cbor:"reason" json:"reason"`
	Slashed    *big.Int        `cbor:"slashed" json:"slashed"`
	Reward     *big.Int        `cbor:"reward" json:"reward"`
	Burned     *big.Int        `cbor:"burned" json:"burned"`
}

// Topic implements system.EventData.
func (*ChallengeUpheldEvent) Topic() string { return TopicChallengeUpheld }

// JobCallbackQueuedEvent is the data of the JobCallbackQueued event.
type JobCallbackQueuedEvent struct {
	JobID  types.Hash    `cbor:"job_id" json:"job_id"`
	Status string        `cbor:"status" json:"status"`
	Actor  types.Address `cbor:"actor" json:"actor"`
}

// Topic implements system.EventData.
func (*JobCallbackQueuedEvent) Topic() string { return TopicJobCallbackQueued }

// JobCallbackEvent is the data of the JobCallback event of a callback
// receipt (the Result Verifier delivering a job's outcome to its actor).
type JobCallbackEvent struct {
	JobID    types.Hash    `cbor:"job_id" json:"job_id"`
	Status   string        `cbor:"status" json:"status"`
	Actor    types.Address `cbor:"actor" json:"actor"`
	Handler  string        `cbor:"handler" json:"handler"`
	QueuedAt uint64        `cbor:"queued_at" json:"queued_at"`
}

// Topic implements system.EventData.
func (*JobCallbackEvent) Topic() string { return TopicJobCallback }
