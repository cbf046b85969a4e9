package sdk

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"errors"
	"net/http"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// TEEService is the client's service for the TEE Verifier: attestation
// parameters, runners' attestations and per-result attestations; signed
// attestation submissions (/v1/tee).
type TEEService struct{ c *Client }

// TEE returns the service for the TEE Verifier.
func (c *Client) TEE() *TEEService { return &TEEService{c: c} }

// AccountTEE is the TEE service bound to an account: its transaction
// methods sign with the account's key and submit as Account describes
// (nonces, fees, waiting); its reads are those of TEEService.
type AccountTEE struct {
	*TEEService
	a *Account
}

// TEE returns the TEE service bound to a.
func (a *Account) TEE() *AccountTEE { return &AccountTEE{TEEService: a.c.TEE(), a: a} }

// OwnerSealKey is the X25519 key an account seals its own copy of its
// secrets' data keys to, derived from the account key so that no other
// state is needed to grant later.
func OwnerSealKey(key *ecdsa.PrivateKey) (*ecdh.PrivateKey, error) {
	return attest.SealKeyFromSeed(crypto.FromECDSA(key), "secrets-owner")
}

// ErrNotAttested is returned by GrantSecret for a runner without an
// attestation in force.
var ErrNotAttested = errors.New("runner has no attestation in force")

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

// Params returns the chain's TEE policy and Secrets Manager limits
// (GET /v1/tee/params).
func (s *TEEService) Params(ctx context.Context) (*apitypes.TEEParams, error) {
	var out apitypes.TEEParams
	return &out, s.c.do(ctx, http.MethodGet, "/v1/tee/params", nil, &out)
}

// Attestation returns a runner's TEE Verifier record; Valid says whether it
// is in force (GET /v1/tee/attestations/{addr}).
func (s *TEEService) Attestation(ctx context.Context, runner types.Address) (*apitypes.Attestation, error) {
	var out apitypes.Attestation
	return &out, s.c.do(ctx, http.MethodGet, "/v1/tee/attestations/"+runner.String(), nil, &out)
}

// ResultAttestations returns a job's per-job evidence records
// (GET /v1/tee/jobs/{id}).
func (s *TEEService) ResultAttestations(ctx context.Context, jobID types.Hash) ([]apitypes.ResultAttestation, error) {
	var out []apitypes.ResultAttestation
	return out, s.c.do(ctx, http.MethodGet, "/v1/tee/jobs/"+jobID.String(), nil, &out)
}

// SubmitAttestation has a produce evidence binding the runner's account
// (key), its registered Ed25519 result key and its enclave X25519 seal key,
// and submits it to the TEE Verifier (tee_attest). The runner must be
// registered with TEE support and resultKey must be its registered key.
func (s *AccountTEE) SubmitAttestation(ctx context.Context, a attest.Attester, resultKey ed25519.PublicKey, sealKey []byte, o TxOptions) (*types.Tx, error) {
	self := s.a.addr
	e, err := a.Attest(ctx, attest.ReportDataForKey(self, resultKey, sealKey))
	if err != nil {
		return nil, err
	}
	b, err := e.Encode()
	if err != nil {
		return nil, err
	}
	return s.a.sendSystem(ctx, types.TEEVerifierAddress, nil, &types.TEEAttest{Evidence: b, SealKey: bytes.Clone(sealKey)}, o)
}

// SubmitResultAttestation records per-job evidence that the runner's enclave
// produced resultHash (Keccak256 of the result bytes) for jobID.
func (s *AccountTEE) SubmitResultAttestation(ctx context.Context, a attest.Attester, jobID, resultHash types.Hash, o TxOptions) (*types.Tx, error) {
	self := s.a.addr
	e, err := a.Attest(ctx, attest.ReportDataForResult(self, jobID, resultHash))
	if err != nil {
		return nil, err
	}
	b, err := e.Encode()
	if err != nil {
		return nil, err
	}
	return s.a.sendSystem(ctx, types.TEEVerifierAddress, nil, &types.TEEAttestResult{JobID: jobID, ResultHash: resultHash, Evidence: b}, o)
}
