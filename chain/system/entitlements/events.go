// Package entitlements is the Entitlement Registry system actor (0x…07;
// spec 002 §15, CIP-2 §7): grants, delegations, roles and scope ownership
// over chain/offchain/entitlement, with the authority rules of who may
// grant what, its instructions 30–35 and its events.
package entitlements

import (
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Event topics.
const (
	TopicScopeClaimed         = "ScopeClaimed"
	TopicEntitlementGranted   = "EntitlementGranted"
	TopicEntitlementRevoked   = "EntitlementRevoked"
	TopicEntitlementDelegated = "EntitlementDelegated"
	TopicRoleCreated          = "RoleCreated"
	TopicRoleAssigned         = "RoleAssigned"
	TopicRoleRevoked          = "RoleRevoked"
)

// ScopeClaimedEvent is the data of the ScopeClaimed event.
type ScopeClaimedEvent struct {
	ScopeKind uint64        `cbor:"scope_kind" json:"scope_kind"`
	ID        []byte        `cbor:"id" json:"id"`
	Owner     types.Address `cbor:"owner" json:"owner"`
}

// Topic implements system.EventData.
func (*ScopeClaimedEvent) Topic() string { return TopicScopeClaimed }

// EntitlementGrantedEvent is the data of the EntitlementGranted event.
type EntitlementGrantedEvent struct {
	ID      types.Hash    `cbor:"id" json:"id"`
	Granter types.Address `cbor:"granter" json:"granter"`
	Grantee types.Address `cbor:"grantee" json:"grantee"`
}

// Topic implements system.EventData.
func (*EntitlementGrantedEvent) Topic() string { return TopicEntitlementGranted }

// EntitlementRevokedEvent is the data of the EntitlementRevoked event.
type EntitlementRevokedEvent struct {
	ID types.Hash    `cbor:"id" json:"id"`
	By types.Address `cbor:"by" json:"by"`
}

// Topic implements system.EventData.
func (*EntitlementRevokedEvent) Topic() string { return TopicEntitlementRevoked }

// EntitlementDelegatedEvent is the data of the EntitlementDelegated event.
type EntitlementDelegatedEvent struct {
	ID      types.Hash    `cbor:"id" json:"id"`
	Parent  types.Hash    `cbor:"parent" json:"parent"`
	Grantee types.Address `cbor:"grantee" json:"grantee"`
}

// Topic implements system.EventData.
func (*EntitlementDelegatedEvent) Topic() string { return TopicEntitlementDelegated }

// RoleCreatedEvent is the data of the RoleCreated event.
type RoleCreatedEvent struct {
	ID      types.Hash    `cbor:"id" json:"id"`
	Creator types.Address `cbor:"creator" json:"creator"`
	Name    string        `cbor:"name" json:"name"`
}

// Topic implements system.EventData.
func (*RoleCreatedEvent) Topic() string { return TopicRoleCreated }

// RoleAssignedEvent is the data of the RoleAssigned event.
type RoleAssignedEvent struct {
	Role     types.Hash    `cbor:"role" json:"role"`
	Assignee types.Address `cbor:"assignee" json:"assignee"`
}

// Topic implements system.EventData.
func (*RoleAssignedEvent) Topic() string { return TopicRoleAssigned }

// RoleRevokedEvent is the data of the RoleRevoked event.
type RoleRevokedEvent struct {
	Role     types.Hash    `cbor:"role" json:"role"`
	Assignee types.Address `cbor:"assignee" json:"assignee"`
}

// Topic implements system.EventData.
func (*RoleRevokedEvent) Topic() string { return TopicRoleRevoked }
