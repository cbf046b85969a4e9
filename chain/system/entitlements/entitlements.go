package entitlements

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The Entitlement Registry (0x…07) as a native system actor: instructions
// 30–35 over chain/offchain/entitlement, whose KV is the registry's system
// state. The registry enforces validity windows, lazy expiry, delegation
// depth and narrowing, the per-address limits and revocation; this file
// decides who may grant what (seed 004 §7 leaves it to the actor):
//
//   - RunnerPool(p) and Namespace(n) scopes belong to an owner: the first
//     address that grants under that scope claims it ("owner/" ‖ kind ‖ id);
//     afterwards only the owner (or governance) grants under it.
//   - Runner(a) scopes: only a itself (or governance) grants; Actor(a)
//     scopes: a itself or the actor's owner (its deployer).
//   - Token(id) scopes: the token's admin (chain/system/tokens records
//     it at creation) or governance; Global scopes: governance only.
//
// Roles are created and assigned by anyone; a role only grants what its
// creator could (the role's scopes are checked with the same rule when it is
// created).

// entitlementKV adapts the registry's system state to entitlement.KV: keys
// are relative to state.Key(PrefixSystem, 0x…07).
type entitlementKV struct {
	o   *state.Overlay
	pre []byte
}

func newEntitlementKV(o *state.Overlay) entitlementKV {
	return entitlementKV{o: o, pre: state.Key(state.PrefixSystem, types.EntitlementRegistryAddress[:])}
}

func (k entitlementKV) full(key []byte) []byte {
	return append(bytes.Clone(k.pre), key...)
}

func (k entitlementKV) Get(key []byte) ([]byte, bool, error) { return k.o.Get(k.full(key)) }
func (k entitlementKV) Set(key, v []byte) error              { k.o.Set(k.full(key), v); return nil }
func (k entitlementKV) Delete(key []byte) error              { k.o.Delete(k.full(key)); return nil }
func (k entitlementKV) Scan(prefix []byte, fn func(key, v []byte) error) error {
	n := len(k.pre)
	return k.o.Scan(k.full(prefix), func(key, v []byte) error { return fn(key[n:], v) })
}

// readOnlyKV serves API reads from a state.Reader; writes (lazy expiry) are
// dropped.
type readOnlyKV struct {
	r   state.Reader
	pre []byte
}

func (k readOnlyKV) Get(key []byte) ([]byte, bool, error) {
	return k.r.Get(append(bytes.Clone(k.pre), key...))
}
func (readOnlyKV) Set([]byte, []byte) error { return nil }
func (readOnlyKV) Delete([]byte) error      { return nil }
func (k readOnlyKV) Scan(prefix []byte, fn func(key, v []byte) error) error {
	n := len(k.pre)
	return k.r.Scan(append(bytes.Clone(k.pre), prefix...), func(key, v []byte) error { return fn(key[n:], v) })
}

// ReadOnly returns a read-only view of the registry over r (for the API and
// CLI): lazy expiry is computed but not written.
func ReadOnly(r state.Reader) *entitlement.Registry {
	return entitlement.NewRegistry(readOnlyKV{r: r, pre: state.Key(state.PrefixSystem, types.EntitlementRegistryAddress[:])}, types.GovernanceAddress)
}

// Writable returns the registry over the block's overlay o: what the Job
// Dispatcher's pool filter checks runners against.
func Writable(o *state.Overlay) *entitlement.Registry {
	return entitlement.NewRegistry(newEntitlementKV(o), types.GovernanceAddress)
}

// ScopeOwnerKey holds the owner of a RunnerPool or Namespace scope.
func ScopeOwnerKey(s entitlement.Scope) []byte {
	return system.Key(types.EntitlementRegistryAddress, []byte("owner/"), []byte{byte(s.Kind)}, s.ID)
}

// mayGrant applies the authority rules above, claiming an unowned pool or
// namespace for from.
func (x *txCtx) mayGrant(from types.Address, s entitlement.Scope) error {
	if from == types.GovernanceAddress {
		return nil
	}
	switch s.Kind {
	case entitlement.ScopeActor, entitlement.ScopeRunner:
		if s.Addr == from {
			return nil
		}
		if s.Kind == entitlement.ScopeActor {
			// An actor cannot send instructions: its owner (deployer)
			// grants under its scope.
			if b, ok, err := x.State().Get(state.StorageKey(s.Addr, []byte(system.ActorOwnerKey))); err != nil {
				return err
			} else if ok {
				var owner []byte
				if codec.Unmarshal(b, &owner) == nil && bytes.Equal(owner, from[:]) {
					return nil
				}
			}
			return system.Failf(system.CodeUnauthorized, "Unauthorized: only actor %s's owner grants under its scope", s.Addr)
		}
		return system.Failf(system.CodeUnauthorized, "Unauthorized: only %s grants under its own scope", s.Addr)
	case entitlement.ScopeRunnerPool, entitlement.ScopeNamespace:
		k := ScopeOwnerKey(s)
		owner, ok, err := x.State().Get(k)
		if err != nil {
			return err
		}
		if !ok {
			x.State().Set(k, from[:])
			x.Emit(types.EntitlementRegistryAddress, &ScopeClaimedEvent{ScopeKind: uint64(s.Kind), ID: s.ID, Owner: from})
			return nil
		}
		if !bytes.Equal(owner, from[:]) {
			return system.Failf(system.CodeUnauthorized, "Unauthorized: scope is owned by %x", owner)
		}
	case entitlement.ScopeToken:
		// A CIP-20 token's scope belongs to its admin, recorded by the
		// token module when it creates the token (chain/system/tokens);
		// it cannot be claimed.
		if owner, ok, err := x.State().Get(ScopeOwnerKey(s)); err != nil {
			return err
		} else if !ok || !bytes.Equal(owner, from[:]) {
			return system.Failf(system.CodeUnauthorized, "Unauthorized: only the token's admin (or governance) grants under its scope")
		}
	default:
		return system.Failf(system.CodeUnauthorized, "Unauthorized: global scopes are granted by governance")
	}
	return nil
}

// entitlementError turns registry errors into transaction failures.
func entitlementError(err error) error {
	for _, e := range []error{entitlement.ErrNotFound, entitlement.ErrExists, entitlement.ErrLimit, entitlement.ErrUnauthorized,
		entitlement.ErrInvalid, entitlement.ErrNotNarrower, entitlement.ErrDenied} {
		if errors.Is(err, e) {
			return system.Failf(system.CodeEntitlement, "Entitlement: %v", err)
		}
	}
	return err
}

func (x *txCtx) dispatch(from types.Address, in types.Instruction) ([]byte, error) {
	reg := Writable(x.State())
	at := x.Env().Height
	switch v := in.(type) {
	case *types.EntitlementGrant:
		if err := x.Charge(entitlement.GrantCycles, entitlement.GrantCells); err != nil {
			return nil, err
		}
		s, err := entitlement.DecodeScope(v.Scope)
		if err != nil {
			return nil, system.Failf(system.CodeInvalidEntitlement, "InvalidEntitlement: scope: %v", err)
		}
		a, err := entitlement.DecodeAction(v.Action)
		if err != nil {
			return nil, system.Failf(system.CodeInvalidEntitlement, "InvalidEntitlement: action: %v", err)
		}
		c, err := entitlement.DecodeConstraints(v.Constraints)
		if err != nil {
			return nil, system.Failf(system.CodeInvalidEntitlement, "InvalidEntitlement: constraints: %v", err)
		}
		if err := x.mayGrant(from, s); err != nil {
			return nil, err
		}
		id, err := reg.Grant(from, v.Grantee, s, a, c, at)
		if err != nil {
			return nil, entitlementError(err)
		}
		x.Emit(types.EntitlementRegistryAddress, &EntitlementGrantedEvent{ID: id, Granter: from, Grantee: v.Grantee})
		return id[:], nil
	case *types.EntitlementRevoke:
		if err := x.Charge(entitlement.RevokeCycles, entitlement.RevokeCells); err != nil {
			return nil, err
		}
		if err := reg.Revoke(from, v.ID); err != nil {
			return nil, entitlementError(err)
		}
		x.Emit(types.EntitlementRegistryAddress, &EntitlementRevokedEvent{ID: v.ID, By: from})
		return nil, nil
	case *types.EntitlementDelegate:
		if err := x.Charge(entitlement.DelegateCycles, entitlement.DelegateCells); err != nil {
			return nil, err
		}
		c, err := entitlement.DecodeConstraints(v.Constraints)
		if err != nil {
			return nil, system.Failf(system.CodeInvalidEntitlement, "InvalidEntitlement: constraints: %v", err)
		}
		id, err := reg.Delegate(from, v.Parent, v.Grantee, c, at)
		if err != nil {
			return nil, entitlementError(err)
		}
		x.Emit(types.EntitlementRegistryAddress, &EntitlementDelegatedEvent{ID: id, Parent: v.Parent, Grantee: v.Grantee})
		return id[:], nil
	case *types.RoleCreate:
		if err := x.Charge(entitlement.CreateRoleCycles, entitlement.CreateRoleCells); err != nil {
			return nil, err
		}
		scopes, err := entitlement.DecodeScopes(v.Scopes)
		if err != nil {
			return nil, system.Failf(system.CodeInvalidEntitlement, "InvalidEntitlement: scopes: %v", err)
		}
		actions, err := entitlement.DecodeActions(v.Actions)
		if err != nil {
			return nil, system.Failf(system.CodeInvalidEntitlement, "InvalidEntitlement: actions: %v", err)
		}
		c, err := entitlement.DecodeConstraints(v.Constraints)
		if err != nil {
			return nil, system.Failf(system.CodeInvalidEntitlement, "InvalidEntitlement: constraints: %v", err)
		}
		for _, s := range scopes {
			if err := x.mayGrant(from, s); err != nil {
				return nil, err
			}
		}
		id, err := reg.CreateRole(from, entitlement.Role{Name: []byte(v.Name), Scopes: scopes, Actions: actions, Constraints: c})
		if err != nil {
			return nil, entitlementError(err)
		}
		x.Emit(types.EntitlementRegistryAddress, &RoleCreatedEvent{ID: id, Creator: from, Name: v.Name})
		return id[:], nil
	case *types.RoleAssign:
		if err := x.Charge(entitlement.AssignRoleCycles, entitlement.AssignRoleCells); err != nil {
			return nil, err
		}
		if err := reg.AssignRole(from, v.RoleID, v.Assignee); err != nil {
			return nil, entitlementError(err)
		}
		x.Emit(types.EntitlementRegistryAddress, &RoleAssignedEvent{Role: v.RoleID, Assignee: v.Assignee})
		return nil, nil
	case *types.RoleRevoke:
		if err := x.Charge(entitlement.AssignRoleCycles, entitlement.AssignRoleCells); err != nil {
			return nil, err
		}
		if err := reg.RevokeRole(from, v.RoleID, v.Assignee); err != nil {
			return nil, entitlementError(err)
		}
		x.Emit(types.EntitlementRegistryAddress, &RoleRevokedEvent{Role: v.RoleID, Assignee: v.Assignee})
		return nil, nil
	}
	return nil, fmt.Errorf("%w: %s", types.ErrUnsupported, in.InstructionKind())
}
