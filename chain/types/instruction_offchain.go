package types

import "math/big"

// Off-chain compute extras (CIP-2 / CIP-13): delegation, self-bond changes,
// challenges, and the Entitlement Registry (docs/OFFCHAIN.md §9).
const (
	// Entitlement Registry (0x…07); `to` is the registry, no value.
	KindEntitlementGrant    InstructionKind = 30 // grant an entitlement
	KindEntitlementRevoke   InstructionKind = 31 // revoke an entitlement (cascades to delegations)
	KindEntitlementDelegate InstructionKind = 32 // delegate an owned entitlement with narrower constraints
	KindRoleCreate          InstructionKind = 33 // create a role
	KindRoleAssign          InstructionKind = 34 // assign a role
	KindRoleRevoke          InstructionKind = 35 // revoke a role assignment

	// Runner Registry (0x…01) and Result Verifier (0x…03).
	KindRunnerDelegateStake   InstructionKind = 47 // RunnerDelegateStake: value is delegated to a runner
	KindRunnerUndelegateStake InstructionKind = 48 // RunnerUndelegateStake: start unbonding delegated stake
	KindRunnerWithdraw        InstructionKind = 49 // release every matured unbonding tranche of the sender
	KindChallengeResult       InstructionKind = 50 // challenge a verified result; value is the challenge bond
	KindRunnerStake           InstructionKind = 51 // add the value to the sender's self-bond
	KindRunnerUnstake         InstructionKind = 52 // start unbonding part of the sender's self-bond
	KindRunnerSetCommission   InstructionKind = 53 // set commission_bps on delegator-attributed revenue
)

// offchainKinds registers the kinds declared in this file (kinds.go).
var offchainKinds = []kindSpec{
	{KindEntitlementGrant, "entitlement_grant", LaneUser, newOf[EntitlementGrant]},
	{KindEntitlementRevoke, "entitlement_revoke", LaneUser, newOf[EntitlementRevoke]},
	{KindEntitlementDelegate, "entitlement_delegate", LaneUser, newOf[EntitlementDelegate]},
	{KindRoleCreate, "role_create", LaneUser, newOf[RoleCreate]},
	{KindRoleAssign, "role_assign", LaneUser, newOf[RoleAssign]},
	{KindRoleRevoke, "role_revoke", LaneUser, newOf[RoleRevoke]},
	// Delegators are users; a runner's own stake changes are runner
	// traffic, and a challenge must land inside its window.
	{KindRunnerDelegateStake, "runner_delegate_stake", LaneUser, newOf[RunnerDelegateStake]},
	{KindRunnerUndelegateStake, "runner_undelegate_stake", LaneUser, newOf[RunnerUndelegateStake]},
	{KindRunnerWithdraw, "runner_withdraw", LaneUser, newOf[RunnerWithdraw]},
	{KindChallengeResult, "challenge_result", LaneRunner, newOf[ChallengeResult]},
	{KindRunnerStake, "runner_stake", LaneRunner, newOf[RunnerStake]},
	{KindRunnerUnstake, "runner_unstake", LaneRunner, newOf[RunnerUnstake]},
	{KindRunnerSetCommission, "runner_set_commission", LaneRunner, newOf[RunnerSetCommission]},
}

// RunnerDelegateStake delegates the transaction value to Runner (CIP-13).
type RunnerDelegateStake struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	Runner Address
}

// RunnerUndelegateStake moves Amount of the sender's delegation on Runner
// into an unbonding tranche released after the unbonding period.
type RunnerUndelegateStake struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	Runner Address
	Amount *big.Int
}

// RunnerWithdraw pays the sender every unbonding tranche whose release
// height has passed.
type RunnerWithdraw struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
}

// RunnerStake adds the transaction value to the sender's self-bond.
type RunnerStake struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
}

// RunnerUnstake moves Amount of the sender's self-bond into unbonding.
type RunnerUnstake struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	Amount *big.Int
}

// RunnerSetCommission sets the sender's commission on delegator-attributed
// revenue, in basis points (0..10000).
type RunnerSetCommission struct {
	_             struct{} `cbor:",toarray"`
	Kind          InstructionKind
	CommissionBps uint64
}

// ChallengeResult challenges job JobID within its challenge window.
// Evidence is the canonical CBOR of a verify.Reveal signed by a committee
// member; the transaction value is the challenge bond.
type ChallengeResult struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	JobID    Hash
	Evidence Bytes
}

// EntitlementGrant grants Action on Scope to Grantee. Scope, Action and
// Constraints are canonical CBOR of the chain/offchain/entitlement types.
type EntitlementGrant struct {
	_           struct{} `cbor:",toarray"`
	Kind        InstructionKind
	Grantee     Address
	Scope       Bytes
	Action      Bytes
	Constraints Bytes
}

// EntitlementRevoke revokes entitlement ID (and every delegation below it).
type EntitlementRevoke struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
	ID   Hash
}

// EntitlementDelegate delegates the sender's entitlement Parent to Grantee
// under strictly narrower Constraints.
type EntitlementDelegate struct {
	_           struct{} `cbor:",toarray"`
	Kind        InstructionKind
	Parent      Hash
	Grantee     Address
	Constraints Bytes
}

// RoleCreate creates role Name with Scopes × Actions (canonical CBOR lists).
type RoleCreate struct {
	_           struct{} `cbor:",toarray"`
	Kind        InstructionKind
	Name        string
	Scopes      Bytes
	Actions     Bytes
	Constraints Bytes
}

// RoleAssign assigns the sender's role RoleID to Assignee.
type RoleAssign struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	RoleID   Hash
	Assignee Address
}

// RoleRevoke removes the assignment of the sender's role RoleID from Assignee.
type RoleRevoke struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	RoleID   Hash
	Assignee Address
}

func (EntitlementGrant) InstructionKind() InstructionKind      { return KindEntitlementGrant }
func (EntitlementRevoke) InstructionKind() InstructionKind     { return KindEntitlementRevoke }
func (EntitlementDelegate) InstructionKind() InstructionKind   { return KindEntitlementDelegate }
func (RoleCreate) InstructionKind() InstructionKind            { return KindRoleCreate }
func (RoleAssign) InstructionKind() InstructionKind            { return KindRoleAssign }
func (RoleRevoke) InstructionKind() InstructionKind            { return KindRoleRevoke }
func (RunnerDelegateStake) InstructionKind() InstructionKind   { return KindRunnerDelegateStake }
func (RunnerUndelegateStake) InstructionKind() InstructionKind { return KindRunnerUndelegateStake }
func (RunnerWithdraw) InstructionKind() InstructionKind        { return KindRunnerWithdraw }
func (ChallengeResult) InstructionKind() InstructionKind       { return KindChallengeResult }
func (RunnerStake) InstructionKind() InstructionKind           { return KindRunnerStake }
func (RunnerUnstake) InstructionKind() InstructionKind         { return KindRunnerUnstake }
func (RunnerSetCommission) InstructionKind() InstructionKind   { return KindRunnerSetCommission }
