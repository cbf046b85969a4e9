package sdk

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// EntitlementsService is the client's service for the Entitlement Registry:
// grants, delegations, roles and entitlement checks (/v1/entitlements,
// /v1/roles).
type EntitlementsService struct{ c *Client }

// Entitlements returns the service for the Entitlement Registry.
func (c *Client) Entitlements() *EntitlementsService { return &EntitlementsService{c: c} }

// AccountEntitlements is the Entitlements service bound to an account: its transaction
// methods sign with the account's key and submit as Account describes
// (nonces, fees, waiting); its reads are those of EntitlementsService.
type AccountEntitlements struct {
	*EntitlementsService
	a *Account
}

// Entitlements returns the Entitlements service bound to a.
func (a *Account) Entitlements() *AccountEntitlements {
	return &AccountEntitlements{EntitlementsService: a.c.Entitlements(), a: a}
}

// Grant grants action on scope to grantee (Entitlement Registry
// instruction 30); the id is the receipt's return value.
func (s *AccountEntitlements) Grant(ctx context.Context, grantee types.Address, scope entitlement.Scope, action entitlement.Action, cons entitlement.Constraints, o TxOptions) (*types.Tx, error) {
	in := &types.EntitlementGrant{Grantee: grantee, Scope: codec.MustMarshal(scope), Action: codec.MustMarshal(action), Constraints: codec.MustMarshal(&cons)}
	return s.a.sendSystem(ctx, types.EntitlementRegistryAddress, nil, in, o)
}

// Revoke revokes entitlement id (instruction 31).
func (s *AccountEntitlements) Revoke(ctx context.Context, id types.Hash, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.EntitlementRegistryAddress, nil, &types.EntitlementRevoke{ID: id}, o)
}

// Delegate delegates key's entitlement parent to grantee under
// narrower constraints (instruction 32).
func (s *AccountEntitlements) Delegate(ctx context.Context, parent types.Hash, grantee types.Address, cons entitlement.Constraints, o TxOptions) (*types.Tx, error) {
	in := &types.EntitlementDelegate{Parent: parent, Grantee: grantee, Constraints: codec.MustMarshal(&cons)}
	return s.a.sendSystem(ctx, types.EntitlementRegistryAddress, nil, in, o)
}

// List lists the live entitlements an address holds.
func (s *EntitlementsService) List(ctx context.Context, grantee types.Address) ([]apitypes.Entitlement, error) {
	var r []apitypes.Entitlement
	return r, s.c.do(ctx, http.MethodGet, "/v1/entitlements/"+grantee.String(), nil, &r)
}

// Check asks whether grantee may perform action on scope at
// height (0: the next block).
func (s *EntitlementsService) Check(ctx context.Context, grantee types.Address, scope entitlement.Scope, action entitlement.Action, height uint64) (*apitypes.EntitlementCheck, error) {
	q := url.Values{"scope": {scope.String()}, "action": {action.String()}}
	if height > 0 {
		q.Set("height", strconv.FormatUint(height, 10))
	}
	var r apitypes.EntitlementCheck
	return &r, s.c.do(ctx, http.MethodGet, "/v1/entitlements/"+grantee.String()+"/check?"+q.Encode(), nil, &r)
}

// CreateRole creates role name over scopes × actions (instruction 33); the
// role id is the receipt's return value.
func (s *AccountEntitlements) CreateRole(ctx context.Context, name string, scopes []entitlement.Scope, actions []entitlement.Action, cons entitlement.Constraints, o TxOptions) (*types.Tx, error) {
	in := &types.RoleCreate{Name: name, Scopes: codec.MustMarshal(scopes), Actions: codec.MustMarshal(actions), Constraints: codec.MustMarshal(&cons)}
	return s.a.sendSystem(ctx, types.EntitlementRegistryAddress, nil, in, o)
}

// AssignRole assigns key's role to assignee (instruction 34).
func (s *AccountEntitlements) AssignRole(ctx context.Context, role types.Hash, assignee types.Address, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.EntitlementRegistryAddress, nil, &types.RoleAssign{RoleID: role, Assignee: assignee}, o)
}

// RevokeRole removes key's role from assignee (instruction 35).
func (s *AccountEntitlements) RevokeRole(ctx context.Context, role types.Hash, assignee types.Address, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.EntitlementRegistryAddress, nil, &types.RoleRevoke{RoleID: role, Assignee: assignee}, o)
}
