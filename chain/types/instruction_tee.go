package types

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
)

// TEE Verifier (0x…05) and Secrets Manager (0x…04) instructions
// (docs/TEE.md). None carries value; `to` is the system actor.
const (
	KindTEEAttest       InstructionKind = 60 // TEE Verifier: attestation evidence for the sending runner
	KindTEEAttestResult InstructionKind = 61 // TEE Verifier: per-job evidence binding a job's result hash
	KindSecretPut       InstructionKind = 62 // Secrets Manager: create or replace an encrypted secret
	KindSecretGrant     InstructionKind = 63 // Secrets Manager: a sealed data key for an attested runner
	KindSecretRevoke    InstructionKind = 64 // Secrets Manager: remove a runner's grant
	KindSecretDelete    InstructionKind = 65 // Secrets Manager: delete a secret and all its grants
)

// TEEAttest submits attestation evidence (canonical CBOR attest.Evidence)
// for the sender, which must be a registered runner. The evidence binds
// attest.ReportDataForKey(sender, registered result key, SealKey).
type TEEAttest struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	Evidence Bytes
	SealKey  Bytes // X25519 public key generated in the enclave (32 bytes)
}

// TEEAttestResult records per-job evidence: the sender's enclave binds
// attest.ReportDataForResult(sender, JobID, ResultHash), or, with a
// ModelHash, attest.ReportDataForResultModel(sender, JobID, ResultHash,
// ModelHash): the registry model the enclave ran.
type TEEAttestResult struct {
	_          struct{} `cbor:",toarray"`
	Kind       InstructionKind
	JobID      Hash
	ResultHash Hash
	Evidence   Bytes
	// ModelHash is an optional trailing element: encoded only when
	// non-zero, so evidence without it keeps its 4-element form.
	ModelHash Hash
}

type teeAttestResultV1 struct {
	_          struct{} `cbor:",toarray"`
	Kind       InstructionKind
	JobID      Hash
	ResultHash Hash
	Evidence   Bytes
}

type teeAttestResultV2 struct {
	_          struct{} `cbor:",toarray"`
	Kind       InstructionKind
	JobID      Hash
	ResultHash Hash
	Evidence   Bytes
	ModelHash  Hash
}

// MarshalCBOR writes the 4-element form without a model hash and the
// 5-element form with one.
func (t TEEAttestResult) MarshalCBOR() ([]byte, error) {
	if t.ModelHash == (Hash{}) {
		return codec.Marshal(teeAttestResultV1{Kind: t.Kind, JobID: t.JobID, ResultHash: t.ResultHash, Evidence: t.Evidence})
	}
	return codec.Marshal(teeAttestResultV2{Kind: t.Kind, JobID: t.JobID, ResultHash: t.ResultHash, Evidence: t.Evidence, ModelHash: t.ModelHash})
}

// UnmarshalCBOR accepts both forms; an explicit zero model hash is not
// canonical (the encoder omits it) and is refused.
func (t *TEEAttestResult) UnmarshalCBOR(b []byte) error {
	n, err := arrayLen(b)
	if err != nil {
		return err
	}
	switch n {
	case 4:
		var v teeAttestResultV1
		if err := codec.Unmarshal(b, &v); err != nil {
			return err
		}
		*t = TEEAttestResult{Kind: v.Kind, JobID: v.JobID, ResultHash: v.ResultHash, Evidence: v.Evidence}
	case 5:
		var v teeAttestResultV2
		if err := codec.Unmarshal(b, &v); err != nil {
			return err
		}
		if v.ModelHash == (Hash{}) {
			return fmt.Errorf("%w: tee_attest_result: a zero model hash must be omitted", codec.ErrNonCanonical)
		}
		*t = TEEAttestResult{Kind: v.Kind, JobID: v.JobID, ResultHash: v.ResultHash, Evidence: v.Evidence, ModelHash: v.ModelHash}
	default:
		return fmt.Errorf("tee_attest_result: %d elements, want 4 or 5", n)
	}
	return nil
}

// SecretPut creates the sender's secret Name or replaces it with a new
// version (which drops every grant). Policy is a canonical attest.Policy the
// reading enclave must satisfy; Ciphertext is the secret under a fresh data
// key; OwnerKey is that data key sealed to the owner's own X25519 key, so
// the owner can grant later.
type SecretPut struct {
	_          struct{} `cbor:",toarray"`
	Kind       InstructionKind
	Name       string
	Policy     Bytes
	Ciphertext Bytes
	OwnerKey   Bytes
}

// SecretGrant stores the secret's data key sealed to Runner's attested
// X25519 key SealKey.
type SecretGrant struct {
	_         struct{} `cbor:",toarray"`
	Kind      InstructionKind
	Name      string
	Runner    Address
	SealKey   Bytes
	SealedKey Bytes
}

// SecretRevoke removes Runner's grant of the sender's secret Name.
type SecretRevoke struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	Name   string
	Runner Address
}

// SecretDelete deletes the sender's secret Name with all its grants.
type SecretDelete struct {
	_    struct{} `cbor:",toarray"`
	Kind InstructionKind
	Name string
}

func (TEEAttest) InstructionKind() InstructionKind       { return KindTEEAttest }
func (TEEAttestResult) InstructionKind() InstructionKind { return KindTEEAttestResult }
func (SecretPut) InstructionKind() InstructionKind       { return KindSecretPut }
func (SecretGrant) InstructionKind() InstructionKind     { return KindSecretGrant }
func (SecretRevoke) InstructionKind() InstructionKind    { return KindSecretRevoke }
func (SecretDelete) InstructionKind() InstructionKind    { return KindSecretDelete }

// teeKinds registers the kinds declared in this file (kinds.go). A
// runner's attestations keep it eligible for tee_required jobs and prove
// its per-job results: runner-lane traffic. Secrets are user transactions.
var teeKinds = []kindSpec{
	{KindTEEAttest, "tee_attest", LaneRunner, newOf[TEEAttest]},
	{KindTEEAttestResult, "tee_attest_result", LaneRunner, newOf[TEEAttestResult]},
	{KindSecretPut, "secret_put", LaneUser, newOf[SecretPut]},
	{KindSecretGrant, "secret_grant", LaneUser, newOf[SecretGrant]},
	{KindSecretRevoke, "secret_revoke", LaneUser, newOf[SecretRevoke]},
	{KindSecretDelete, "secret_delete", LaneUser, newOf[SecretDelete]},
}
