package sdk_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestTEEAndSecrets drives the TEE Verifier and the Secrets Manager through
// a real node's HTTP API: a runner registers with TEE support and attests
// (simulation backend, admitted by the devnet policy), an owner stores a
// secret and grants it, and the runner opens it with its enclave key.
func TestTEEAndSecrets(t *testing.T) {
	_, c := setup(t)
	runnerKey, _ := crypto.GenerateKey()
	ownerKey, _ := crypto.GenerateKey()
	runner, owner := types.PubkeyToAddress(runnerKey.PublicKey), types.PubkeyToAddress(ownerKey.PublicKey)
	for _, a := range []types.Address{runner, owner} {
		h, err := c.Chain().Faucet(ctx(t), a, sdk.MustCBY("100"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Chain().WaitForReceipt(ctx(t), h); err != nil {
			t.Fatal(err)
		}
	}
	wait := func(tx *types.Tx, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Chain().WaitForReceipt(ctx(t), tx.Hash())
		if err != nil {
			t.Fatal(err)
		}
		if r.Receipt.Status != "success" {
			t.Fatalf("%s: %s", tx.Hash(), r.Receipt.Error)
		}
	}
	p, err := c.TEE().Params(ctx(t))
	if err != nil || !p.Policy.AllowSimulation || p.AttestationTTL == 0 {
		t.Fatalf("devnet TEE params %+v %v", p, err)
	}

	// The runner's enclave: result key, seal key, simulated attester.
	resultPub, _, _ := ed25519.GenerateKey(rand.Reader)
	seal, _ := attest.GenerateSealKey(rand.Reader)
	_, platform, _ := ed25519.GenerateKey(rand.Reader)
	sim, _ := attest.NewSimulation(platform, attest.SimOptions{})
	wait(c.Account(runnerKey).Runners().Register(ctx(t), &types.RunnerRegister{ResultKey: types.Bytes(resultPub), JobTypes: []uint64{uint64(job.JobTypeHTTP)},
		TEE: true, RateBase: big.NewInt(1), MaxConcurrentJobs: 1}, sdk.MustCBY("20"), sdk.TxOptions{}))
	if _, err := c.TEE().Attestation(ctx(t), runner); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("attestation before attesting: %v", err)
	}
	wait(c.Account(runnerKey).TEE().SubmitAttestation(ctx(t), sim, resultPub, seal.PublicKey().Bytes(), sdk.TxOptions{}))
	a, err := c.TEE().Attestation(ctx(t), runner)
	if err != nil || !a.Valid || a.Backend != "SIMULATION" || string(a.UniqueID) != string(sim.Measurement()) {
		t.Fatalf("attestation %+v %v", a, err)
	}

	pol := attest.Policy{UniqueID: sim.Measurement(), AllowSimulation: true}
	wait(c.Account(ownerKey).Secrets().Put(ctx(t), "llm-key", pol, []byte("sk-test-123"), sdk.TxOptions{}))
	wait(c.Account(ownerKey).Secrets().GrantTo(ctx(t), "llm-key", runner, sdk.TxOptions{}))
	pt, err := c.Secrets().Open(ctx(t), seal, runner, owner, "llm-key")
	if err != nil || string(pt) != "sk-test-123" {
		t.Fatalf("open: %q %v", pt, err)
	}
	// Another enclave key cannot open the grant.
	other, _ := attest.GenerateSealKey(rand.Reader)
	if _, err := c.Secrets().Open(ctx(t), other, runner, owner, "llm-key"); !errors.Is(err, attest.ErrSeal) {
		t.Fatalf("foreign key: %v", err)
	}
	ss, err := c.Secrets().List(ctx(t), owner)
	if err != nil || len(ss) != 1 || ss[0].Grants != 1 || len(ss[0].Ciphertext) != 0 {
		t.Fatalf("list %+v %v", ss, err)
	}
	gs, err := c.Secrets().RunnerGrants(ctx(t), runner)
	if err != nil || len(gs) != 1 || gs[0].Owner != owner {
		t.Fatalf("runner grants %+v %v", gs, err)
	}
	// A secret whose policy the runner does not meet is refused client-side.
	wait(c.Account(ownerKey).Secrets().Put(ctx(t), "strict", attest.Policy{UniqueID: make([]byte, 32)}, []byte("x"), sdk.TxOptions{}))
	if _, err := c.Account(ownerKey).Secrets().GrantTo(ctx(t), "strict", runner, sdk.TxOptions{}); !errors.Is(err, attest.ErrPolicy) {
		t.Fatalf("strict grant: %v", err)
	}
	wait(c.Account(ownerKey).Secrets().Revoke(ctx(t), "llm-key", runner, sdk.TxOptions{}))
	if _, err := c.Secrets().Grant(ctx(t), owner, "llm-key", runner); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("revoked grant: %v", err)
	}
	wait(c.Account(ownerKey).Secrets().Delete(ctx(t), "llm-key", sdk.TxOptions{}))
	if _, err := c.Secrets().Get(ctx(t), owner, "llm-key"); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("deleted secret: %v", err)
	}
}
