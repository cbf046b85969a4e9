package apitypes

import "github.com/cowboy-foundation/cowboy/chain/types"

// UsageReport is a runner's signed usage report (spec 002 "Runner Resource
// Accounting").
type UsageReport struct {
	Tokens      uint64 `json:"tokens"`
	WallTimeMs  uint64 `json:"wall_time_ms"`
	MemoryBytes uint64 `json:"memory_bytes"`
	Fault       string `json:"fault,omitempty"` // impossible_job, actor_fault, external_fault
	ProgressBps uint16 `json:"progress_bps,omitempty"`
}

// Delegation is GET /v1/runners/{addr}/delegations: one delegator's stake.
type Delegation struct {
	Delegator types.Address `json:"delegator"`
	Amount    string        `json:"amount"`
	Since     uint64        `json:"since"`
}

// Tranche is GET /v1/unbonding/{addr}: stake released to Owner at Release.
type Tranche struct {
	Owner   types.Address `json:"owner"`
	Runner  types.Address `json:"runner"`
	Amount  string        `json:"amount"`
	Release uint64        `json:"release"`
	Matured bool          `json:"matured"` // withdrawable now
	Height  uint64        `json:"height"`
}

// Entitlement is one live entitlement record (GET /v1/entitlements/{addr}).
// Scope and Action are also given as their canonical CBOR (hex) for
// instructions and checks.
type Entitlement struct {
	ID          types.Hash    `json:"id"`
	Grantee     types.Address `json:"grantee"`
	Granter     types.Address `json:"granter"`
	Scope       string        `json:"scope"`
	Action      string        `json:"action"`
	ScopeCBOR   types.Bytes   `json:"scope_cbor"`
	ActionCBOR  types.Bytes   `json:"action_cbor"`
	Constraints any           `json:"constraints"`
	Parent      *types.Hash   `json:"parent,omitempty"`
	Depth       uint8         `json:"depth"`
	CreatedAt   uint64        `json:"created_at"`
}

// EntitlementCheck is GET /v1/entitlements/{addr}/check.
type EntitlementCheck struct {
	Grantee types.Address `json:"grantee"`
	Allowed bool          `json:"allowed"`
	Height  uint64        `json:"height"`
}

// JobCallback is one delivered job callback: its receipt is
// GET /v1/txs/{receipt}.
type JobCallback struct {
	Status  string     `json:"status"` // verified | failed
	Height  uint64     `json:"height"`
	OK      bool       `json:"ok"`
	Error   string     `json:"error,omitempty"`
	Receipt types.Hash `json:"receipt"`
}

// JobCandidate is one entry of a job's candidate snapshot.
type JobCandidate struct {
	Address    types.Address `json:"address"`
	Stake      string        `json:"stake"` // effective stake, base units
	Reputation uint64        `json:"reputation"`
}

// JobSelection is GET /v1/jobs/{id}/selection: everything needed to
// recompute the job's committee (selection.Assign) and candidate root.
type JobSelection struct {
	JobID         types.Hash      `json:"job_id"`
	Seed          types.Hash      `json:"seed"`         // original VRF seed
	AttemptSeed   types.Hash      `json:"attempt_seed"` // seed of the current attempt (RetrySeed for retry > 0)
	Retry         uint32          `json:"retry"`
	Runners       uint32          `json:"runners"` // M
	Excluded      []types.Address `json:"excluded"`
	CandidateRoot types.Hash      `json:"candidate_root"`
	Candidates    []JobCandidate  `json:"candidates"`
}

// CallbackStats is GET /v1/offchain/actors/{addr}.
type CallbackStats struct {
	Actor     types.Address `json:"actor"`
	Delivered uint64        `json:"delivered_callbacks"`
	Failed    uint64        `json:"failed_callbacks"`
	Height    uint64        `json:"height"`
}
