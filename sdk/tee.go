package sdk

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// TEEParams returns the chain's TEE policy and Secrets Manager limits
// (GET /v1/tee/params).
func (c *Client) TEEParams(ctx context.Context) (*apitypes.TEEParams, error) {
	var out apitypes.TEEParams
	return &out, c.do(ctx, http.MethodGet, "/v1/tee/params", nil, &out)
}

// Attestation returns a runner's TEE Verifier record; Valid says whether it
// is in force (GET /v1/tee/attestations/{addr}).
func (c *Client) Attestation(ctx context.Context, runner types.Address) (*apitypes.Attestation, error) {
	var out apitypes.Attestation
	return &out, c.do(ctx, http.MethodGet, "/v1/tee/attestations/"+runner.String(), nil, &out)
}

// ResultAttestations returns a job's per-job evidence records
// (GET /v1/tee/jobs/{id}).
func (c *Client) ResultAttestations(ctx context.Context, jobID types.Hash) ([]apitypes.ResultAttestation, error) {
	var out []apitypes.ResultAttestation
	return out, c.do(ctx, http.MethodGet, "/v1/tee/jobs/"+jobID.String(), nil, &out)
}

// RunnerGrants returns every secret granted to runner (GET /v1/tee/grants/{runner}).
func (c *Client) RunnerGrants(ctx context.Context, runner types.Address) ([]apitypes.SecretGrant, error) {
	var out []apitypes.SecretGrant
	return out, c.do(ctx, http.MethodGet, "/v1/tee/grants/"+runner.String(), nil, &out)
}

// Secrets lists an owner's secrets without their ciphertext
// (GET /v1/secrets/{owner}).
func (c *Client) Secrets(ctx context.Context, owner types.Address) ([]apitypes.Secret, error) {
	var out []apitypes.Secret
	return out, c.do(ctx, http.MethodGet, "/v1/secrets/"+owner.String(), nil, &out)
}

// Secret returns a secret with its ciphertext, the owner's sealed data key
// and its grants (GET /v1/secrets/{owner}/{name}).
func (c *Client) Secret(ctx context.Context, owner types.Address, name string) (*apitypes.Secret, error) {
	var out apitypes.Secret
	return &out, c.do(ctx, http.MethodGet, "/v1/secrets/"+owner.String()+"/"+url.PathEscape(name), nil, &out)
}

// SecretGrant returns runner's grant of a secret
// (GET /v1/secrets/{owner}/{name}/grants/{runner}).
func (c *Client) SecretGrant(ctx context.Context, owner types.Address, name string, runner types.Address) (*apitypes.SecretGrant, error) {
	var out apitypes.SecretGrant
	return &out, c.do(ctx, http.MethodGet, "/v1/secrets/"+owner.String()+"/"+url.PathEscape(name)+"/grants/"+runner.String(), nil, &out)
}

// SubmitAttestation has a produce evidence binding the runner's account
// (key), its registered Ed25519 result key and its enclave X25519 seal key,
// and submits it to the TEE Verifier (tee_attest). The runner must be
// registered with TEE support and resultKey must be its registered key.
func (c *Client) SubmitAttestation(ctx context.Context, key *ecdsa.PrivateKey, a attest.Attester, resultKey ed25519.PublicKey, sealKey []byte, o TxOptions) (*types.Tx, error) {
	self := types.PubkeyToAddress(key.PublicKey)
	e, err := a.Attest(ctx, attest.ReportDataForKey(self, resultKey, sealKey))
	if err != nil {
		return nil, err
	}
	b, err := e.Encode()
	if err != nil {
		return nil, err
	}
	return c.sendSystem(ctx, key, types.TEEVerifierAddress, nil, &types.TEEAttest{Evidence: b, SealKey: bytes.Clone(sealKey)}, o)
}

// SubmitResultAttestation records per-job evidence that the runner's enclave
// produced resultHash (Keccak256 of the result bytes) for jobID.
func (c *Client) SubmitResultAttestation(ctx context.Context, key *ecdsa.PrivateKey, a attest.Attester, jobID, resultHash types.Hash, o TxOptions) (*types.Tx, error) {
	self := types.PubkeyToAddress(key.PublicKey)
	e, err := a.Attest(ctx, attest.ReportDataForResult(self, jobID, resultHash))
	if err != nil {
		return nil, err
	}
	b, err := e.Encode()
	if err != nil {
		return nil, err
	}
	return c.sendSystem(ctx, key, types.TEEVerifierAddress, nil, &types.TEEAttestResult{JobID: jobID, ResultHash: resultHash, Evidence: b}, o)
}

// OwnerSealKey is the X25519 key an account seals its own copy of its
// secrets' data keys to, derived from the account key so that no other
// state is needed to grant later.
func OwnerSealKey(key *ecdsa.PrivateKey) (*ecdh.PrivateKey, error) {
	return attest.SealKeyFromSeed(crypto.FromECDSA(key), "secrets-owner")
}

// PutSecret encrypts plaintext under a fresh data key, seals the data key
// to the owner, and stores the secret (secret_put). Replacing an existing
// secret drops its grants; grant again with GrantSecret.
func (c *Client) PutSecret(ctx context.Context, key *ecdsa.PrivateKey, name string, policy attest.Policy, plaintext []byte, o TxOptions) (*types.Tx, error) {
	owner := types.PubkeyToAddress(key.PublicKey)
	pb, err := policy.Encode()
	if err != nil {
		return nil, err
	}
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	osk, err := OwnerSealKey(key)
	if err != nil {
		return nil, err
	}
	dek, ct, err := attest.EncryptSecret(rand.Reader, plaintext, attest.SecretAAD(owner, name))
	if err != nil {
		return nil, err
	}
	ok, err := attest.Seal(rand.Reader, osk.PublicKey().Bytes(), dek, attest.GrantAAD(owner, name, owner, osk.PublicKey().Bytes()))
	if err != nil {
		return nil, err
	}
	return c.sendSystem(ctx, key, types.SecretsManagerAddress, nil, &types.SecretPut{Name: name, Policy: pb, Ciphertext: ct, OwnerKey: ok}, o)
}

// ErrNotAttested is returned by GrantSecret for a runner without an
// attestation in force.
var ErrNotAttested = errors.New("runner has no attestation in force")

// GrantSecret releases the owner's secret name to runner: it recovers the
// data key from the owner's sealed copy, checks the runner's attestation
// (in force, satisfying the secret's policy) and seals the data key to the
// runner's attested enclave key (secret_grant). The chain repeats the
// checks, so a node lying about the attestation cannot redirect the key.
func (c *Client) GrantSecret(ctx context.Context, key *ecdsa.PrivateKey, name string, runner types.Address, o TxOptions) (*types.Tx, error) {
	owner := types.PubkeyToAddress(key.PublicKey)
	sec, err := c.Secret(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	osk, err := OwnerSealKey(key)
	if err != nil {
		return nil, err
	}
	dek, err := attest.Open(osk, sec.OwnerKey, attest.GrantAAD(owner, name, owner, osk.PublicKey().Bytes()))
	if err != nil {
		return nil, fmt.Errorf("open the owner's data key of %q: %w", name, err)
	}
	a, err := c.Attestation(ctx, runner)
	if err != nil {
		return nil, fmt.Errorf("attestation of %s: %w", runner, err)
	}
	if !a.Valid {
		return nil, fmt.Errorf("%w: %s (expires_at %d, height %d)", ErrNotAttested, runner, a.ExpiresAt, a.Height)
	}
	pol := policyFromJSON(sec.Policy)
	claims := &attest.Claims{UniqueID: a.UniqueID, SignerID: a.SignerID, ProductID: a.ProductID, SecurityVersion: a.SecurityVersion, Debug: a.Debug}
	claims.Backend, claims.TCB = backendFromName(a.Backend), tcbFromName(a.TCB)
	if err := pol.Check(claims); err != nil {
		return nil, fmt.Errorf("runner %s: %w", runner, err)
	}
	sealed, err := attest.Seal(rand.Reader, a.SealKey, dek, attest.GrantAAD(owner, name, runner, a.SealKey))
	if err != nil {
		return nil, err
	}
	return c.sendSystem(ctx, key, types.SecretsManagerAddress, nil, &types.SecretGrant{Name: name, Runner: runner, SealKey: a.SealKey, SealedKey: sealed}, o)
}

// RevokeSecret removes runner's grant of the owner's secret name. A runner
// that already read the secret keeps what it read: rotate the secret too.
func (c *Client) RevokeSecret(ctx context.Context, key *ecdsa.PrivateKey, name string, runner types.Address, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.SecretsManagerAddress, nil, &types.SecretRevoke{Name: name, Runner: runner}, o)
}

// DeleteSecret deletes the owner's secret name with all its grants.
func (c *Client) DeleteSecret(ctx context.Context, key *ecdsa.PrivateKey, name string, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.SecretsManagerAddress, nil, &types.SecretDelete{Name: name}, o)
}

// OpenSecret is the runner side: fetch the secret and runner's grant and
// open it with the enclave's seal key. Call it inside the enclave.
func (c *Client) OpenSecret(ctx context.Context, sealKey *ecdh.PrivateKey, runner, owner types.Address, name string) ([]byte, error) {
	sec, err := c.Secret(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	g, err := c.SecretGrant(ctx, owner, name, runner)
	if err != nil {
		return nil, err
	}
	return attest.OpenSecret(sealKey, owner, name, runner, g.SealedKey, sec.Ciphertext)
}

// policyFromJSON converts the API's policy form.
func policyFromJSON(p apitypes.TEEPolicy) attest.Policy {
	return attest.Policy{UniqueID: p.UniqueID, SignerID: p.SignerID, ProductID: p.ProductID, MinSecurityVersion: p.MinSecurityVersion,
		AllowDebug: p.AllowDebug, AllowOutdatedTCB: p.AllowOutdatedTCB, AllowSimulation: p.AllowSimulation}
}

func backendFromName(s string) attest.Backend {
	for _, b := range []attest.Backend{attest.BackendSGX, attest.BackendSimulation} {
		if b.String() == s {
			return b
		}
	}
	return 0
}

func tcbFromName(s string) attest.TCBStatus {
	for t := attest.TCBUpToDate; t <= attest.TCBUnknown; t++ {
		if t.String() == s {
			return t
		}
	}
	return attest.TCBUnknown
}
