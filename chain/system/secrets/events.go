// Package secrets is the Secrets Manager system actor (0x…04): sealed
// secrets and their grants to runners whose TEE attestation satisfies the
// secret's policy, its instructions and events.
package secrets

import (
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Event topics.
const (
	TopicSecretPut     = "SecretPut"
	TopicSecretGranted = "SecretGranted"
	TopicSecretRevoked = "SecretRevoked"
	TopicSecretDeleted = "SecretDeleted"
)

// SecretPutEvent is the data of the SecretPut event.
type SecretPutEvent struct {
	Owner    types.Address `cbor:"owner" json:"owner"`
	Name     string        `cbor:"name" json:"name"`
	Version  uint64        `cbor:"version" json:"version"`
	PolicyID types.Hash    `cbor:"policy_id" json:"policy_id"`
}

// Topic implements system.EventData.
func (*SecretPutEvent) Topic() string { return TopicSecretPut }

// SecretGrantedEvent is the data of the SecretGranted event.
type SecretGrantedEvent struct {
	Owner   types.Address `cbor:"owner" json:"owner"`
	Name    string        `cbor:"name" json:"name"`
	Version uint64        `cbor:"version" json:"version"`
	Runner  types.Address `cbor:"runner" json:"runner"`
}

// Topic implements system.EventData.
func (*SecretGrantedEvent) Topic() string { return TopicSecretGranted }

// SecretRevokedEvent is the data of the SecretRevoked event.
type SecretRevokedEvent struct {
	Owner  types.Address `cbor:"owner" json:"owner"`
	Name   string        `cbor:"name" json:"name"`
	Runner types.Address `cbor:"runner" json:"runner"`
}

// Topic implements system.EventData.
func (*SecretRevokedEvent) Topic() string { return TopicSecretRevoked }

// SecretDeletedEvent is the data of the SecretDeleted event.
type SecretDeletedEvent struct {
	Owner types.Address `cbor:"owner" json:"owner"`
	Name  string        `cbor:"name" json:"name"`
}

// Topic implements system.EventData.
func (*SecretDeletedEvent) Topic() string { return TopicSecretDeleted }
