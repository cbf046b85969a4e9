package sdk

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// DelegateStake delegates amount of key's balance to runner (CIP-13).
func (c *Client) DelegateStake(ctx context.Context, key *ecdsa.PrivateKey, runner types.Address, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.RunnerRegistryAddress, amount, &types.RunnerDelegateStake{Runner: runner}, o)
}

// UndelegateStake starts unbonding amount of key's delegation on runner.
func (c *Client) UndelegateStake(ctx context.Context, key *ecdsa.PrivateKey, runner types.Address, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.RunnerRegistryAddress, nil, &types.RunnerUndelegateStake{Runner: runner, Amount: amount}, o)
}

// WithdrawUnbonded pays key every matured unbonding tranche.
func (c *Client) WithdrawUnbonded(ctx context.Context, key *ecdsa.PrivateKey, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.RunnerRegistryAddress, nil, &types.RunnerWithdraw{}, o)
}

// StakeRunner adds amount to key's runner self-bond.
func (c *Client) StakeRunner(ctx context.Context, key *ecdsa.PrivateKey, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.RunnerRegistryAddress, amount, &types.RunnerStake{}, o)
}

// UnstakeRunner starts unbonding amount of key's runner self-bond.
func (c *Client) UnstakeRunner(ctx context.Context, key *ecdsa.PrivateKey, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.RunnerRegistryAddress, nil, &types.RunnerUnstake{Amount: amount}, o)
}

// SetRunnerCommission sets key's runner commission on delegator revenue.
func (c *Client) SetRunnerCommission(ctx context.Context, key *ecdsa.PrivateKey, bps uint64, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.RunnerRegistryAddress, nil, &types.RunnerSetCommission{CommissionBps: bps}, o)
}

// ChallengeResult challenges a verified job with the bond; evidence is a
// committee member's signed reveal contradicting its commitment, or nil to
// have the chain re-verify the stored reveals.
func (c *Client) ChallengeResult(ctx context.Context, key *ecdsa.PrivateKey, id types.Hash, evidence *verify.Reveal, bond *big.Int, o TxOptions) (*types.Tx, error) {
	in := &types.ChallengeResult{JobID: id}
	if evidence != nil {
		b, err := evidence.Encode()
		if err != nil {
			return nil, err
		}
		in.Evidence = b
	}
	return c.sendSystem(ctx, key, types.ResultVerifierAddress, bond, in, o)
}

// Delegations lists the delegations on a runner.
func (c *Client) Delegations(ctx context.Context, runner types.Address) ([]apitypes.Delegation, error) {
	var r []apitypes.Delegation
	return r, c.do(ctx, http.MethodGet, "/v1/runners/"+runner.String()+"/delegations", nil, &r)
}

// Unbonding lists an address's unbonding tranches.
func (c *Client) Unbonding(ctx context.Context, owner types.Address) ([]apitypes.Tranche, error) {
	var r []apitypes.Tranche
	return r, c.do(ctx, http.MethodGet, "/v1/unbonding/"+owner.String(), nil, &r)
}

// GrantEntitlement grants action on scope to grantee (Entitlement Registry
// instruction 30); the id is the receipt's return value.
func (c *Client) GrantEntitlement(ctx context.Context, key *ecdsa.PrivateKey, grantee types.Address, s entitlement.Scope, a entitlement.Action, cons entitlement.Constraints, o TxOptions) (*types.Tx, error) {
	in := &types.EntitlementGrant{Grantee: grantee, Scope: codec.MustMarshal(s), Action: codec.MustMarshal(a), Constraints: codec.MustMarshal(&cons)}
	return c.sendSystem(ctx, key, types.EntitlementRegistryAddress, nil, in, o)
}

// RevokeEntitlement revokes entitlement id (instruction 31).
func (c *Client) RevokeEntitlement(ctx context.Context, key *ecdsa.PrivateKey, id types.Hash, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.EntitlementRegistryAddress, nil, &types.EntitlementRevoke{ID: id}, o)
}

// DelegateEntitlement delegates key's entitlement parent to grantee under
// narrower constraints (instruction 32).
func (c *Client) DelegateEntitlement(ctx context.Context, key *ecdsa.PrivateKey, parent types.Hash, grantee types.Address, cons entitlement.Constraints, o TxOptions) (*types.Tx, error) {
	in := &types.EntitlementDelegate{Parent: parent, Grantee: grantee, Constraints: codec.MustMarshal(&cons)}
	return c.sendSystem(ctx, key, types.EntitlementRegistryAddress, nil, in, o)
}

// Entitlements lists the live entitlements an address holds.
func (c *Client) Entitlements(ctx context.Context, grantee types.Address) ([]apitypes.Entitlement, error) {
	var r []apitypes.Entitlement
	return r, c.do(ctx, http.MethodGet, "/v1/entitlements/"+grantee.String(), nil, &r)
}

// CheckEntitlement asks whether grantee may perform action on scope at
// height (0: the next block).
func (c *Client) CheckEntitlement(ctx context.Context, grantee types.Address, s entitlement.Scope, a entitlement.Action, height uint64) (*apitypes.EntitlementCheck, error) {
	q := url.Values{"scope": {s.String()}, "action": {a.String()}}
	if height > 0 {
		q.Set("height", strconv.FormatUint(height, 10))
	}
	var r apitypes.EntitlementCheck
	return &r, c.do(ctx, http.MethodGet, "/v1/entitlements/"+grantee.String()+"/check?"+q.Encode(), nil, &r)
}

// JobSelection returns what is needed to recompute a job's committee
// (GET /v1/jobs/{id}/selection).
func (c *Client) JobSelection(ctx context.Context, id types.Hash) (*apitypes.JobSelection, error) {
	var r apitypes.JobSelection
	return &r, c.do(ctx, http.MethodGet, "/v1/jobs/"+id.String()+"/selection", nil, &r)
}

// CallbackStats returns an actor's job-callback counters (GET
// /v1/offchain/actors/{addr}); runners may refuse actors whose callbacks
// keep failing.
func (c *Client) CallbackStats(ctx context.Context, actor types.Address) (*apitypes.CallbackStats, error) {
	var r apitypes.CallbackStats
	return &r, c.do(ctx, http.MethodGet, "/v1/offchain/actors/"+actor.String(), nil, &r)
}

// CreateRole creates role name over scopes × actions (instruction 33); the
// role id is the receipt's return value.
func (c *Client) CreateRole(ctx context.Context, key *ecdsa.PrivateKey, name string, scopes []entitlement.Scope, actions []entitlement.Action, cons entitlement.Constraints, o TxOptions) (*types.Tx, error) {
	in := &types.RoleCreate{Name: name, Scopes: codec.MustMarshal(scopes), Actions: codec.MustMarshal(actions), Constraints: codec.MustMarshal(&cons)}
	return c.sendSystem(ctx, key, types.EntitlementRegistryAddress, nil, in, o)
}

// AssignRole assigns key's role to assignee (instruction 34).
func (c *Client) AssignRole(ctx context.Context, key *ecdsa.PrivateKey, role types.Hash, assignee types.Address, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.EntitlementRegistryAddress, nil, &types.RoleAssign{RoleID: role, Assignee: assignee}, o)
}

// RevokeRole removes key's role from assignee (instruction 35).
func (c *Client) RevokeRole(ctx context.Context, key *ecdsa.PrivateKey, role types.Hash, assignee types.Address, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.EntitlementRegistryAddress, nil, &types.RoleRevoke{RoleID: role, Assignee: assignee}, o)
}
