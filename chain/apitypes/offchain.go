package apitypes

import (
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// RateCard is a runner's prices, base units as decimal strings.
type RateCard struct {
	Base         string `json:"base"`
	PerToken     string `json:"per_token"`
	PerWallMs    string `json:"per_wall_ms"`
	PerMemoryMiB string `json:"per_memory_mib"`
}

// Runner is a Runner Registry (0x…01) record: GET /v1/runners/{addr} and
// the items of GET /v1/runners.
type Runner struct {
	Address           types.Address `json:"address"`
	ResultKey         types.Bytes   `json:"result_key"` // Ed25519
	JobTypes          []string      `json:"job_types"`
	Models            []string      `json:"models"`
	Domains           []string      `json:"domains"`
	TEE               bool          `json:"tee"`
	Rates             RateCard      `json:"rates"`
	MaxConcurrentJobs uint32        `json:"max_concurrent_jobs"`
	ActiveJobs        uint32        `json:"active_jobs"`
	MaxJobValue       string        `json:"max_job_value"`
	Stake             string        `json:"stake"`
	Reputation        uint64        `json:"reputation"`
	RegisteredAt      uint64        `json:"registered_at"`
	LastHeartbeat     uint64        `json:"last_heartbeat"`
	Status            string        `json:"status"` // active, exited
	Healthy           bool          `json:"healthy"`
	Endpoint          string        `json:"endpoint,omitempty"` // aggregator URL, if registered
	Height            uint64        `json:"height"`
	// CIP-13 delegation: delegated stake, effective = stake + delegated.
	Delegated          string `json:"delegated"`
	EffectiveStake     string `json:"effective_stake"`
	Delegators         uint32 `json:"delegators"`
	CommissionBps      uint16 `json:"commission_bps"`
	ConsecutiveSlashes uint32 `json:"consecutive_slashes"`
	Eligible           bool   `json:"eligible"` // stake still meets the registration rules
}

// OffchainParams is GET /v1/offchain/params: the parameters runners
// schedule by (amounts in base units, windows in blocks).
type OffchainParams struct {
	MinRunnerStake          string `json:"min_runner_stake"`
	HeartbeatTimeoutBlocks  uint64 `json:"heartbeat_timeout_blocks"`
	AggregatorTimeoutBlocks uint64 `json:"aggregator_timeout_blocks"`
	RevealTimeoutBlocks     uint64 `json:"reveal_timeout_blocks"`
	ChallengeWindowBlocks   uint64 `json:"challenge_window_blocks"`
	MaxRetries              uint32 `json:"max_retries"`
	// Staking, challenges and slashing (CIP-13).
	ChallengeBond   string `json:"challenge_bond"`
	SlashBps        uint64 `json:"slash_bps"`
	ChallengerBps   uint64 `json:"challenger_bps"`
	UnbondingBlocks uint64 `json:"unbonding_blocks"`
	MinSelfBondBps  uint64 `json:"min_self_bond_bps"`
	MaxDelegators   uint32 `json:"max_delegators"`
	MaxTranches     int    `json:"max_tranches"`
}

// JobCommitment is one committee member's commitment.
type JobCommitment struct {
	Runner types.Address `json:"runner"`
	Hash   types.Hash    `json:"hash"`
	Block  uint64        `json:"block"`
}

// JobReveal is one revealed result of the accepted submission.
type JobReveal struct {
	Runner    types.Address `json:"runner"`
	Result    types.Bytes   `json:"result"`
	Signature types.Bytes   `json:"signature"`
	Report    *UsageReport  `json:"report,omitempty"` // signed usage report, if any
}

// JobPayment is one transfer out of the escrow.
type JobPayment struct {
	Kind   string        `json:"kind"` // burn, treasury, runner, delegator, refund
	To     types.Address `json:"to"`
	Amount string        `json:"amount"`
}

// JobPayments is a job's settlement.
type JobPayments struct {
	Outcome   string       `json:"outcome"` // success, runner_fault, ...
	Payment   string       `json:"payment"`
	Refund    string       `json:"refund"`
	Height    uint64       `json:"height"`
	Transfers []JobPayment `json:"transfers"`
}

// Job is GET /v1/jobs/{id}.
type Job struct {
	ID            types.Hash      `json:"id"`
	Status        job.State       `json:"status"` // pending, assigned, committed, revealed, verified, finalized, failed
	FailReason    string          `json:"fail_reason,omitempty"`
	JobType       string          `json:"job_type"`
	Mode          string          `json:"mode"`
	Submitter     types.Address   `json:"submitter"`
	SubmittedAt   uint64          `json:"submitted_at"`
	Callback      types.Address   `json:"callback_actor"`
	Handler       string          `json:"callback_handler"`
	MaxPrice      string          `json:"max_price"`
	Tip           string          `json:"tip"`
	Input         types.Bytes     `json:"input"`
	Seed          types.Hash      `json:"seed"`
	CandidateRoot types.Hash      `json:"candidate_root"`
	Retry         uint32          `json:"retry"`
	Committee     []types.Address `json:"committee"`
	Aggregator    types.Address   `json:"aggregator"`
	Deadline      uint64          `json:"deadline"`
	Excluded      []types.Address `json:"excluded"`
	Commitments   []JobCommitment `json:"commitments"`
	Reveals       []JobReveal     `json:"reveals"`
	Result        types.Bytes     `json:"result,omitempty"`
	ResultHash    types.Hash      `json:"result_hash"`
	Agreed        []types.Address `json:"agreed"`
	Dissented     []types.Address `json:"dissented"`
	Payments      *JobPayments    `json:"payments,omitempty"`
	Spec          types.Bytes     `json:"spec"` // canonical CBOR JobSpec (job.DecodeJobSpec)
	Height        uint64          `json:"height"`

	// Callbacks are the delivered callbacks (a later block than the decision).
	Callbacks []JobCallback `json:"callbacks,omitempty"`
}
