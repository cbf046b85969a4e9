package tee_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/sha256"
	"testing"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/secrets"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// registry is a fixed Runner Registry and Job Dispatcher.
type registry struct {
	runners map[types.Address]*tee.Runner
	jobs    map[types.Hash][]types.Address
}

func (r registry) Runner(_ state.Reader, a types.Address) (*tee.Runner, error) {
	return r.runners[a], nil
}
func (r registry) Committee(_ state.Reader, id types.Hash) ([]types.Address, bool, error) {
	c, ok := r.jobs[id]
	return c, ok, nil
}

func seed(label string) []byte { h := sha256.Sum256([]byte(label)); return h[:] }

// The TEE Verifier and the Secrets Manager as modules: a runner attests
// with simulated evidence on the dev chain, proves a job result, and an
// owner's secret is granted to it; refusals carry their codes.
func TestVerifierAndSecretsModules(t *testing.T) {
	runner, other, owner := types.Address{0x01}, types.Address{0x02}, types.Address{0x03}
	ed := ed25519.NewKeyFromSeed(seed("ed"))
	seal, err := ecdh.X25519().NewPrivateKey(seed("seal"))
	if err != nil {
		t.Fatal(err)
	}
	att, err := attest.NewSimulation(ed25519.NewKeyFromSeed(seed("platform")), attest.SimOptions{UniqueID: bytes.Repeat([]byte{0xe1}, 32), SecurityVersion: 2})
	if err != nil {
		t.Fatal(err)
	}
	job := types.Hash{0x0b}
	reg := registry{runners: map[types.Address]*tee.Runner{
		runner: {Address: runner, Active: true, TEE: true, ResultKey: ed.Public().(ed25519.PublicKey)},
		other:  {Address: other, Active: true, TEE: false, ResultKey: ed.Public().(ed25519.PublicKey)},
	}, jobs: map[types.Hash][]types.Address{job: {runner}}}
	m := tee.New(tee.Params{}, tee.DevChainID, reg)
	if !m.Params().Policy.AllowSimulation {
		t.Fatal("the dev chain id does not get the dev policy")
	}
	sm := secrets.New(m.Params(), reg)
	c := systemtest.New()
	run := func(mod system.Module, from, to types.Address, in types.Instruction) *systemtest.Result {
		t.Helper()
		r, err := c.Run(mod, from, to, nil, in)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ev, err := att.Attest(context.Background(), attest.ReportDataForKey(runner, ed.Public().(ed25519.PublicKey), seal.PublicKey().Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	evb, _ := ev.Encode()
	tv := types.TEEVerifierAddress
	if r := run(m, other, tv, &types.TEEAttest{Evidence: evb, SealKey: seal.PublicKey().Bytes()}); r.Code() != system.CodeNoTEESupport {
		t.Fatalf("runner without TEE support: %v", r.Err)
	}
	if r := run(m, owner, tv, &types.TEEAttest{Evidence: evb, SealKey: seal.PublicKey().Bytes()}); r.Code() != system.CodeNotARunner {
		t.Fatalf("not a runner: %v", r.Err)
	}
	r := run(m, runner, tv, &types.TEEAttest{Evidence: evb, SealKey: seal.PublicKey().Bytes()})
	if r.Err != nil || len(r.Events) != 1 || r.Events[0].Topic != tee.TopicAttestationVerified || r.Cycles < tee.AttestSimCycles {
		t.Fatalf("attest: %v %+v cycles %d", r.Err, r.Events, r.Cycles)
	}
	policy := m.Params().Policy
	if ok, err := tee.Attested(c.State, runner, ed.Public().(ed25519.PublicKey), c.Env.Height, &policy); err != nil || !ok {
		t.Fatalf("attested %v %v", ok, err)
	}
	// Per-job evidence binds the result hash; only the committee may send it.
	h := types.Keccak256([]byte("42"))
	rev, err := att.Attest(context.Background(), attest.ReportDataForResult(runner, job, h))
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := rev.Encode()
	if r := run(m, runner, tv, &types.TEEAttestResult{JobID: types.Hash{0xff}, ResultHash: h, Evidence: rb}); r.Code() != system.CodeNoSuchJob {
		t.Fatalf("unknown job: %v", r.Err)
	}
	if r := run(m, runner, tv, &types.TEEAttestResult{JobID: job, ResultHash: h, Evidence: rb}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if ok, err := tee.ResultAttested(c.State, job, runner, h); err != nil || !ok {
		t.Fatalf("result attested %v %v", ok, err)
	}
	// A secret, then a grant to the attested runner.
	dek, ct, err := attest.EncryptSecret(bytes.NewReader(bytes.Repeat([]byte{7}, 64)), []byte("s3cret"), attest.SecretAAD(owner, "api-key"))
	if err != nil {
		t.Fatal(err)
	}
	ownerSeal, _ := ecdh.X25519().NewPrivateKey(seed("owner"))
	ok, err := attest.Seal(bytes.NewReader(bytes.Repeat([]byte{8}, 64)), ownerSeal.PublicKey().Bytes(), dek, attest.GrantAAD(owner, "api-key", owner, ownerSeal.PublicKey().Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	pol := codec.MustMarshal(m.Params().Policy)
	smAddr := types.SecretsManagerAddress
	if r := run(sm, owner, smAddr, &types.SecretPut{Name: "bad name!", Policy: pol, Ciphertext: ct, OwnerKey: ok}); r.Code() != system.CodeInvalidSecretName {
		t.Fatalf("bad name: %v", r.Err)
	}
	if r := run(sm, owner, smAddr, &types.SecretPut{Name: "api-key", Policy: pol, Ciphertext: ct, OwnerKey: ok}); r.Err != nil {
		t.Fatal(r.Err)
	}
	sealed, err := attest.Seal(bytes.NewReader(bytes.Repeat([]byte{9}, 64)), seal.PublicKey().Bytes(), dek, attest.GrantAAD(owner, "api-key", runner, seal.PublicKey().Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if r := run(sm, owner, smAddr, &types.SecretGrant{Name: "api-key", Runner: other, SealKey: seal.PublicKey().Bytes(), SealedKey: sealed}); r.Code() != system.CodeNotAttested {
		t.Fatalf("grant to an unattested runner: %v", r.Err)
	}
	r = run(sm, owner, smAddr, &types.SecretGrant{Name: "api-key", Runner: runner, SealKey: seal.PublicKey().Bytes(), SealedKey: sealed})
	if r.Err != nil || len(r.Events) != 1 || r.Events[0].Topic != secrets.TopicSecretGranted {
		t.Fatalf("grant: %v %+v", r.Err, r.Events)
	}
	if g, err := secrets.ReadSecretGrant(c.State, owner, "api-key", runner); err != nil || g == nil || !bytes.Equal(g.SealedKey, sealed) {
		t.Fatalf("grant record %+v: %v", g, err)
	}
	// The stateless check: value is refused, and so is the wrong target.
	if _, err := c.Run(sm, owner, tv, nil, &types.SecretDelete{Name: "api-key"}); err == nil {
		t.Fatal("secret_delete to the TEE Verifier accepted")
	}
}
