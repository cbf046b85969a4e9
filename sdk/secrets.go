package sdk

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// SecretsService is the client's service for the Secrets Manager: sealed
// secrets, their grants to attested runners, and opening a granted secret;
// signed put, grant, revoke and delete (/v1/secrets).
type SecretsService struct{ c *Client }

// Secrets returns the service for the Secrets Manager.
func (c *Client) Secrets() *SecretsService { return &SecretsService{c: c} }

// AccountSecrets is the Secrets service bound to an account: its transaction
// methods sign with the account's key and submit as Account describes
// (nonces, fees, waiting); its reads are those of SecretsService.
type AccountSecrets struct {
	*SecretsService
	a *Account
}

// Secrets returns the Secrets service bound to a.
func (a *Account) Secrets() *AccountSecrets {
	return &AccountSecrets{SecretsService: a.c.Secrets(), a: a}
}

// RunnerGrants returns every secret granted to runner (GET /v1/tee/grants/{runner}).
func (s *SecretsService) RunnerGrants(ctx context.Context, runner types.Address) ([]apitypes.SecretGrant, error) {
	var out []apitypes.SecretGrant
	return out, s.c.do(ctx, http.MethodGet, "/v1/tee/grants/"+runner.String(), nil, &out)
}

// List lists an owner's secrets without their ciphertext
// (GET /v1/secrets/{owner}).
func (s *SecretsService) List(ctx context.Context, owner types.Address) ([]apitypes.Secret, error) {
	var out []apitypes.Secret
	return out, s.c.do(ctx, http.MethodGet, "/v1/secrets/"+owner.String(), nil, &out)
}

// Get returns a secret with its ciphertext, the owner's sealed data key
// and its grants (GET /v1/secrets/{owner}/{name}).
func (s *SecretsService) Get(ctx context.Context, owner types.Address, name string) (*apitypes.Secret, error) {
	var out apitypes.Secret
	return &out, s.c.do(ctx, http.MethodGet, "/v1/secrets/"+owner.String()+"/"+url.PathEscape(name), nil, &out)
}

// Grant returns runner's grant of a secret
// (GET /v1/secrets/{owner}/{name}/grants/{runner}).
func (s *SecretsService) Grant(ctx context.Context, owner types.Address, name string, runner types.Address) (*apitypes.SecretGrant, error) {
	var out apitypes.SecretGrant
	return &out, s.c.do(ctx, http.MethodGet, "/v1/secrets/"+owner.String()+"/"+url.PathEscape(name)+"/grants/"+runner.String(), nil, &out)
}

// Put encrypts plaintext under a fresh data key, seals the data key
// to the owner, and stores the secret (secret_put). Replacing an existing
// secret drops its grants; grant again with GrantSecret.
func (s *AccountSecrets) Put(ctx context.Context, name string, policy attest.Policy, plaintext []byte, o TxOptions) (*types.Tx, error) {
	owner := s.a.addr
	pb, err := policy.Encode()
	if err != nil {
		return nil, err
	}
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	osk, err := OwnerSealKey(s.a.key)
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
	return s.a.sendSystem(ctx, types.SecretsManagerAddress, nil, &types.SecretPut{Name: name, Policy: pb, Ciphertext: ct, OwnerKey: ok}, o)
}

// GrantTo releases the owner's secret name to runner: it recovers the
// data key from the owner's sealed copy, checks the runner's attestation
// (in force, satisfying the secret's policy) and seals the data key to the
// runner's attested enclave key (secret_grant). The chain repeats the
// checks, so a node lying about the attestation cannot redirect the key.
func (s *AccountSecrets) GrantTo(ctx context.Context, name string, runner types.Address, o TxOptions) (*types.Tx, error) {
	owner := s.a.addr
	sec, err := s.c.Secrets().Get(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	osk, err := OwnerSealKey(s.a.key)
	if err != nil {
		return nil, err
	}
	dek, err := attest.Open(osk, sec.OwnerKey, attest.GrantAAD(owner, name, owner, osk.PublicKey().Bytes()))
	if err != nil {
		return nil, fmt.Errorf("open the owner's data key of %q: %w", name, err)
	}
	a, err := s.c.TEE().Attestation(ctx, runner)
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
	return s.a.sendSystem(ctx, types.SecretsManagerAddress, nil, &types.SecretGrant{Name: name, Runner: runner, SealKey: a.SealKey, SealedKey: sealed}, o)
}

// Revoke removes runner's grant of the owner's secret name. A runner
// that already read the secret keeps what it read: rotate the secret too.
func (s *AccountSecrets) Revoke(ctx context.Context, name string, runner types.Address, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.SecretsManagerAddress, nil, &types.SecretRevoke{Name: name, Runner: runner}, o)
}

// Delete deletes the owner's secret name with all its grants.
func (s *AccountSecrets) Delete(ctx context.Context, name string, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.SecretsManagerAddress, nil, &types.SecretDelete{Name: name}, o)
}

// Open is the runner side: fetch the secret and runner's grant and
// open it with the enclave's seal key. Call it inside the enclave.
func (s *SecretsService) Open(ctx context.Context, sealKey *ecdh.PrivateKey, runner, owner types.Address, name string) ([]byte, error) {
	sec, err := s.c.Secrets().Get(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	g, err := s.c.Secrets().Grant(ctx, owner, name, runner)
	if err != nil {
		return nil, err
	}
	return attest.OpenSecret(sealKey, owner, name, runner, g.SealedKey, sec.Ciphertext)
}
