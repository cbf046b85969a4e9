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

func offchainKindName(k InstructionKind) (string, bool) {
	switch k {
	case KindEntitlementGrant:
		return "entitlement_grant", true
	case KindEntitlementRevoke:
		return "entitlement_revoke", true
	case KindEntitlementDelegate:
		return "entitlement_delegate", true
	case KindRoleCreate:
		return "role_create", true
	case KindRoleAssign:
		return "role_assign", true
	case KindRoleRevoke:
		return "role_revoke", true
	case KindRunnerDelegateStake:
		return "runner_delegate_stake", true
	case KindRunnerUndelegateStake:
		return "runner_undelegate_stake", true
	case KindRunnerWithdraw:
		return "runner_withdraw", true
	case KindChallengeResult:
		return "challenge_result", true
	case KindRunnerStake:
		return "runner_stake", true
	case KindRunnerUnstake:
		return "runner_unstake", true
	case KindRunnerSetCommission:
		return "runner_set_commission", true
	}
	return "", false
}

// newOffchainInstruction returns an empty instruction of kind k, or nil.
func newOffchainInstruction(k InstructionKind) Instruction {
	switch k {
	case KindEntitlementGrant:
		return &EntitlementGrant{}
	case KindEntitlementRevoke:
		return &EntitlementRevoke{}
	case KindEntitlementDelegate:
		return &EntitlementDelegate{}
	case KindRoleCreate:
		return &RoleCreate{}
	case KindRoleAssign:
		return &RoleAssign{}
	case KindRoleRevoke:
		return &RoleRevoke{}
	case KindRunnerDelegateStake:
		return &RunnerDelegateStake{}
	case KindRunnerUndelegateStake:
		return &RunnerUndelegateStake{}
	case KindRunnerWithdraw:
		return &RunnerWithdraw{}
	case KindChallengeResult:
		return &ChallengeResult{}
	case KindRunnerStake:
		return &RunnerStake{}
	case KindRunnerUnstake:
		return &RunnerUnstake{}
	case KindRunnerSetCommission:
		return &RunnerSetCommission{}
	}
	return nil
}

// setOffchainKind stamps the kind of an off-chain extra instruction; false
// if in is not one.
func setOffchainKind(in Instruction) bool {
	switch v := in.(type) {
	case *EntitlementGrant:
		v.Kind = KindEntitlementGrant
	case *EntitlementRevoke:
		v.Kind = KindEntitlementRevoke
	case *EntitlementDelegate:
		v.Kind = KindEntitlementDelegate
	case *RoleCreate:
		v.Kind = KindRoleCreate
	case *RoleAssign:
		v.Kind = KindRoleAssign
	case *RoleRevoke:
		v.Kind = KindRoleRevoke
	case *RunnerDelegateStake:
		v.Kind = KindRunnerDelegateStake
	case *RunnerUndelegateStake:
		v.Kind = KindRunnerUndelegateStake
	case *RunnerWithdraw:
		v.Kind = KindRunnerWithdraw
	case *ChallengeResult:
		v.Kind = KindChallengeResult
	case *RunnerStake:
		v.Kind = KindRunnerStake
	case *RunnerUnstake:
		v.Kind = KindRunnerUnstake
	case *RunnerSetCommission:
		v.Kind = KindRunnerSetCommission
	default:
		return false
	}
	return true
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
