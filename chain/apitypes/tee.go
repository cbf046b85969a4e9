package apitypes

import "github.com/cowboy-foundation/cowboy/chain/types"

// TEEPolicy is an attest.Policy in JSON (docs/TEE.md).
type TEEPolicy struct {
	UniqueID           types.Bytes `json:"unique_id"`
	SignerID           types.Bytes `json:"signer_id"`
	ProductID          uint64      `json:"product_id"`
	MinSecurityVersion uint64      `json:"min_security_version"`
	AllowDebug         bool        `json:"allow_debug"`
	AllowOutdatedTCB   bool        `json:"allow_outdated_tcb"`
	AllowSimulation    bool        `json:"allow_simulation"`
}

// TEEParams are the TEE Verifier and Secrets Manager parameters:
// GET /v1/tee/params.
type TEEParams struct {
	Policy         TEEPolicy  `json:"policy"`
	PolicyID       types.Hash `json:"policy_id"`
	AttestationTTL uint64     `json:"attestation_ttl"` // blocks
	MaxSecretBytes uint64     `json:"max_secret_bytes"`
	MaxGrants      uint64     `json:"max_grants"`
	MaxSecrets     uint64     `json:"max_secrets"`
	// SGXSupported says whether this node was built to verify SGX evidence.
	SGXSupported bool `json:"sgx_supported"`
}

// Attestation is a runner's TEE Verifier record:
// GET /v1/tee/attestations/{addr}.
type Attestation struct {
	Runner          types.Address `json:"runner"`
	Backend         string        `json:"backend"` // "sgx" or "SIMULATION"
	UniqueID        types.Bytes   `json:"unique_id"`
	SignerID        types.Bytes   `json:"signer_id"`
	ProductID       uint64        `json:"product_id"`
	SecurityVersion uint64        `json:"security_version"`
	Debug           bool          `json:"debug"`
	TCB             string        `json:"tcb"`
	ResultKey       types.Bytes   `json:"result_key"`
	SealKey         types.Bytes   `json:"seal_key"`
	EvidenceHash    types.Hash    `json:"evidence_hash"`
	PolicyID        types.Hash    `json:"policy_id"`
	VerifiedAt      uint64        `json:"verified_at"`
	ExpiresAt       uint64        `json:"expires_at"`
	// Valid: in force at Height — not expired, made under the chain's
	// current policy, binding the runner's registered result key.
	Valid  bool   `json:"valid"`
	Height uint64 `json:"height"`
}

// ResultAttestation is a runner's per-job evidence record:
// items of GET /v1/tee/jobs/{id}.
type ResultAttestation struct {
	JobID        types.Hash    `json:"job_id"`
	Runner       types.Address `json:"runner"`
	ResultHash   types.Hash    `json:"result_hash"`
	UniqueID     types.Bytes   `json:"unique_id"`
	EvidenceHash types.Hash    `json:"evidence_hash"`
	Height       uint64        `json:"height"`
}

// Secret is a Secrets Manager record: GET /v1/secrets/{owner}/{name} (with
// ciphertext, owner key and grants) and the items of GET /v1/secrets/{owner}
// (without them). Everything here is public: the secret itself is only
// readable with a sealed data key.
type Secret struct {
	Owner      types.Address `json:"owner"`
	Name       string        `json:"name"`
	Version    uint64        `json:"version"`
	Policy     TEEPolicy     `json:"policy"`
	PolicyID   types.Hash    `json:"policy_id"`
	Ciphertext types.Bytes   `json:"ciphertext,omitempty"`
	OwnerKey   types.Bytes   `json:"owner_key,omitempty"`
	Grants     uint64        `json:"grants"`
	GrantList  []SecretGrant `json:"grant_list,omitempty"`
	CreatedAt  uint64        `json:"created_at"`
	UpdatedAt  uint64        `json:"updated_at"`
}

// SecretGrant is a runner's sealed copy of a secret's data key:
// GET /v1/secrets/{owner}/{name}/grants/{runner} and GET /v1/tee/grants/{runner}.
type SecretGrant struct {
	Owner     types.Address `json:"owner"`
	Name      string        `json:"name"`
	Version   uint64        `json:"version"`
	Runner    types.Address `json:"runner"`
	SealKey   types.Bytes   `json:"seal_key"`
	SealedKey types.Bytes   `json:"sealed_key"`
	UniqueID  types.Bytes   `json:"unique_id"`
	GrantedAt uint64        `json:"granted_at"`
}
