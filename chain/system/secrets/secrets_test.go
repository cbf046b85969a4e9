package secrets_test

import (
	"bytes"
	"crypto/ecdh"
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

// noRunners is a registry without runners or jobs.
type noRunners struct{}

func (noRunners) Runner(state.Reader, types.Address) (*tee.Runner, error) { return nil, nil }
func (noRunners) Committee(state.Reader, types.Hash) ([]types.Address, bool, error) {
	return nil, false, nil
}

// The Secrets Manager as a module: put, replace (version bump), grant to a
// non-runner refused, revoke of a missing grant refused, delete; codes and
// typed events.
func TestSecretsModule(t *testing.T) {
	p := tee.New(tee.Params{}, tee.DevChainID, noRunners{}).Params()
	m := secrets.New(p, noRunners{})
	c := systemtest.New()
	owner := types.Address{0x01}
	sm := types.SecretsManagerAddress
	run := func(in types.Instruction) *systemtest.Result {
		t.Helper()
		r, err := c.Run(m, owner, sm, nil, in)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	dek, ct, err := attest.EncryptSecret(bytes.NewReader(bytes.Repeat([]byte{1}, 64)), []byte("v1"), attest.SecretAAD(owner, "k"))
	if err != nil {
		t.Fatal(err)
	}
	seal, _ := ecdh.X25519().NewPrivateKey(bytes.Repeat([]byte{2}, 32))
	ok, err := attest.Seal(bytes.NewReader(bytes.Repeat([]byte{3}, 64)), seal.PublicKey().Bytes(), dek, attest.GrantAAD(owner, "k", owner, seal.PublicKey().Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	pol := codec.MustMarshal(p.Policy)
	if r := run(&types.SecretPut{Name: "k/../x", Policy: pol, Ciphertext: ct, OwnerKey: ok}); r.Code() != system.CodeInvalidSecretName {
		t.Fatalf("bad name: %v", r.Err)
	}
	for v := uint64(1); v <= 2; v++ {
		r := run(&types.SecretPut{Name: "k", Policy: pol, Ciphertext: ct, OwnerKey: ok})
		if r.Err != nil || len(r.Events) != 1 || r.Events[0].Topic != secrets.TopicSecretPut {
			t.Fatalf("put %d: %v %+v", v, r.Err, r.Events)
		}
		if s, err := secrets.ReadSecret(c.State, owner, "k"); err != nil || s.Version != v {
			t.Fatalf("secret %+v: %v", s, err)
		}
	}
	if r := run(&types.SecretGrant{Name: "k", Runner: types.Address{0x09}, SealKey: seal.PublicKey().Bytes(), SealedKey: ok}); r.Code() != system.CodeNotARunner {
		t.Fatalf("grant to a non-runner: %v", r.Err)
	}
	if r := run(&types.SecretRevoke{Name: "k", Runner: types.Address{0x09}}); r.Code() != system.CodeNoSuchGrant {
		t.Fatalf("revoke of no grant: %v", r.Err)
	}
	if r := run(&types.SecretDelete{Name: "k"}); r.Err != nil || r.Events[0].Topic != secrets.TopicSecretDeleted {
		t.Fatalf("delete: %v", r.Err)
	}
	if s, err := secrets.ReadSecret(c.State, owner, "k"); err != nil || s != nil {
		t.Fatalf("after delete %+v: %v", s, err)
	}
	if r := run(&types.SecretDelete{Name: "k"}); r.Code() != system.CodeNoSuchSecret {
		t.Fatalf("second delete: %v", r.Err)
	}
}
