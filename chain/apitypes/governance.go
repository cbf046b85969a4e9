package apitypes

import "github.com/cowboy-foundation/cowboy/chain/types"

// Param is one governed parameter (GET /v1/params).
type Param struct {
	Key     string `json:"key"`
	Value   uint64 `json:"value"`
	Source  string `json:"source"` // default, genesis or governance
	Tier    uint8  `json:"tier"`   // the lowest proposal tier that may change it
	Min     uint64 `json:"min"`
	Max     uint64 `json:"max"`
	Default uint64 `json:"default"`
	Doc     string `json:"doc"`
}

// Params is GET /v1/params.
type Params struct {
	Params []Param `json:"params"`
	Height uint64  `json:"height"`
}

// Treasury is GET /v1/treasury: the Treasury 0x…08's balance and outflows
// (base units, decimal).
type Treasury struct {
	Address       types.Address `json:"address"`
	Balance       string        `json:"balance"`
	Disbursed     string        `json:"disbursed"`
	Disbursements uint64        `json:"disbursements"`
	Height        uint64        `json:"height"`
}

// GovParamChange is one parameter change of a proposal.
type GovParamChange struct {
	Key   string `json:"key"`
	Value uint64 `json:"value"`
}

// GovDisbursement is one treasury payment of a proposal.
type GovDisbursement struct {
	To     types.Address `json:"to"`
	Amount string        `json:"amount"`
}

// GovChamber is one chamber's count.
type GovChamber struct {
	Yes     string `json:"yes"`
	No      string `json:"no"`
	Abstain string `json:"abstain"`
	Total   string `json:"total"`
	Passing bool   `json:"passing"`
}

// GovProposal is one proposal (GET /v1/gov/proposals/{id}).
type GovProposal struct {
	ID             uint64            `json:"id"`
	Proposer       types.Address     `json:"proposer"`
	Tier           uint8             `json:"tier"`
	Title          string            `json:"title"`
	Params         []GovParamChange  `json:"params,omitempty"`
	Disburse       []GovDisbursement `json:"disburse,omitempty"`
	Ratify         []types.Address   `json:"ratify,omitempty"`  // circuit-breaks to ratify
	Council        []types.Address   `json:"council,omitempty"` // a new Security Council (Tier 4)
	Upgrade        []GovUpgrade      `json:"upgrade,omitempty"`
	Models         []GovModel        `json:"models,omitempty"` // Model Registry bans and unbans (Tier 1)
	Deposit        string            `json:"deposit"`
	Status         string            `json:"status"` // voting, queued, executed, rejected, failed
	SnapshotBlock  uint64            `json:"snapshot_block"`
	VotingEnd      uint64            `json:"voting_end"`
	ClosedAt       uint64            `json:"closed_at,omitempty"`
	ETA            uint64            `json:"eta,omitempty"`
	FailCode       uint32            `json:"fail_code,omitempty"`
	QuorumBps      uint64            `json:"quorum_bps"`
	ApprovalBps    uint64            `json:"approval_bps"`
	ValidatorBps   uint64            `json:"validator_bps"`
	TimelockBlocks uint64            `json:"timelock_blocks"`
	QuorumReached  bool              `json:"quorum_reached"`
	Stake          GovChamber        `json:"stake"`      // stake chamber, base units
	Validators     GovChamber        `json:"validators"` // validator chamber, one vote each
}

// GovProposals is GET /v1/gov/proposals.
type GovProposals struct {
	Proposals []GovProposal `json:"proposals"`
	Height    uint64        `json:"height"`
}

// GovCouncil is GET /v1/gov/council.
type GovCouncil struct {
	Members   []types.Address `json:"members"`
	Threshold int             `json:"threshold"`
	Nonce     uint64          `json:"nonce"` // the nonce the next Council action must sign
	Paused    []GovPause      `json:"paused"`
	Upgrades  []GovVersion    `json:"upgrades"` // system actors with an upgrade record (others run their genesis version)
	Height    uint64          `json:"height"`
}

// GovVersion is a system actor's upgrade record: the version in force, a
// pending upgrade and the rollback slot the Council's fast-track restores.
type GovVersion struct {
	Actor            types.Address `json:"actor"`
	Version          string        `json:"version,omitempty"` // empty: the genesis version
	Pending          string        `json:"pending,omitempty"`
	Activation       uint64        `json:"activation,omitempty"`
	Rollback         string        `json:"rollback,omitempty"`
	RollbackDeadline uint64        `json:"rollback_deadline,omitempty"`
}

// GovPause is a Security Council circuit-break in force.
type GovPause struct {
	Actor    types.Address `json:"actor"`
	Since    uint64        `json:"since"`
	Lapses   uint64        `json:"lapses,omitempty"` // the block whose end lifts it unless ratified
	Ratified bool          `json:"ratified"`
}

// GovUpgrade is a system-actor upgrade of a proposal.
type GovUpgrade struct {
	Actor            types.Address `json:"actor"`
	Version          string        `json:"version"`
	Activation       uint64        `json:"activation"`
	RollbackDeadline uint64        `json:"rollback_deadline"`
}

// GovModel is a Model Registry ban or unban of a proposal.
type GovModel struct {
	ID     types.Hash `json:"id"`
	Action string     `json:"action"` // "ban" or "unban"
	Reason string     `json:"reason,omitempty"`
}
