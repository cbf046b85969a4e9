// Package tee is the TEE Verifier system actor (0x…05): runner
// attestations and per-job result evidence checked against the chain's TEE
// policy (attest/), its instructions and events, and the parameters it
// shares with the Secrets Manager.
package tee

import (
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Event topics.
const (
	TopicAttestationVerified = "AttestationVerified"
	TopicResultAttested      = "ResultAttested"
)

// AttestationVerifiedEvent is the data of the AttestationVerified event.
type AttestationVerifiedEvent struct {
	Runner          types.Address `cbor:"runner" json:"runner"`
	Backend         string        `cbor:"backend" json:"backend"`
	UniqueID        types.Bytes   `cbor:"unique_id" json:"unique_id"`
	SignerID        types.Bytes   `cbor:"signer_id" json:"signer_id"`
	SecurityVersion uint64        `cbor:"security_version" json:"security_version"`
	ExpiresAt       uint64        `cbor:"expires_at" json:"expires_at"`
}

// Topic implements system.EventData.
func (*AttestationVerifiedEvent) Topic() string { return TopicAttestationVerified }

// ResultAttestedEvent is the data of the ResultAttested event.
type ResultAttestedEvent struct {
	JobID      types.Hash    `cbor:"job_id" json:"job_id"`
	Runner     types.Address `cbor:"runner" json:"runner"`
	ResultHash types.Hash    `cbor:"result_hash" json:"result_hash"`
}

// Topic implements system.EventData.
func (*ResultAttestedEvent) Topic() string { return TopicResultAttested }
