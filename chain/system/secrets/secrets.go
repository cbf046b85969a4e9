package secrets

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Execution costs of the Secrets Manager instructions beyond their
// intrinsic cost; stored bytes pay one cell each on top.
const (
	SecretPutCycles    = 20_000 // decode and validate the policy, write the record
	SecretGrantCycles  = 20_000 // policy check against the runner's attestation
	SecretRemoveCycles = 5_000  // revoke/delete, plus SecretPerGrantCycles per grant removed
	// SecretPerGrantCycles is charged per grant a put or delete removes.
	SecretPerGrantCycles = 2_000
)

// SecretNameRE is the shape of a secret name.
var SecretNameRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Secret is a Secrets Manager (0x…04) record: the ciphertext of a secret
// under its data key, and that data key sealed to the owner (docs/TEE.md).
// Nobody can read it without a sealed copy of the data key; copies exist
// only for the owner and for granted runners whose attested enclave key
// satisfied Policy.
type Secret struct {
	_          struct{}      `cbor:",toarray"`
	Owner      types.Address `json:"owner"`
	Name       string        `json:"name"`
	Version    uint64        `json:"version"`
	Policy     attest.Policy `json:"policy"`
	Ciphertext types.Bytes   `json:"ciphertext"`
	OwnerKey   types.Bytes   `json:"owner_key"` // data key sealed to the owner's X25519 key
	Grants     uint64        `json:"grants"`
	CreatedAt  uint64        `json:"created_at"`
	UpdatedAt  uint64        `json:"updated_at"`
}

// SecretGrant is a granted runner's copy of a secret's data key, sealed to
// the X25519 key its attestation binds.
type SecretGrant struct {
	_         struct{}      `cbor:",toarray"`
	Owner     types.Address `json:"owner"`
	Name      string        `json:"name"`
	Version   uint64        `json:"version"`
	Runner    types.Address `json:"runner"`
	SealKey   types.Bytes   `json:"seal_key"`
	SealedKey types.Bytes   `json:"sealed_key"`
	UniqueID  types.Bytes   `json:"unique_id"` // the enclave measurement attested at grant time
	GrantedAt uint64        `json:"granted_at"`
}

func secKey(parts ...[]byte) []byte { return system.Key(types.SecretsManagerAddress, parts...) }

// nameKey is the length-prefixed name, so one name is never a key prefix
// of another.
func nameKey(name string) []byte { return append([]byte{byte(len(name))}, name...) }

// SecretKey is the state key of a secret.
func SecretKey(owner types.Address, name string) []byte {
	return secKey([]byte("sec/"), owner[:], nameKey(name))
}

// SecretPrefix prefixes an owner's secrets.
func SecretPrefix(owner types.Address) []byte { return secKey([]byte("sec/"), owner[:]) }

// SecretGrantKey is the state key of a runner's grant of a secret.
func SecretGrantKey(owner types.Address, name string, runner types.Address) []byte {
	return secKey([]byte("grant/"), owner[:], nameKey(name), runner[:])
}

// SecretGrantPrefix prefixes a secret's grants.
func SecretGrantPrefix(owner types.Address, name string) []byte {
	return secKey([]byte("grant/"), owner[:], nameKey(name))
}

// runnerGrantKey indexes grants by runner, so a runner finds its secrets.
func runnerGrantKey(runner, owner types.Address, name string) []byte {
	return secKey([]byte("rgrant/"), runner[:], owner[:], nameKey(name))
}

// RunnerGrantPrefix prefixes the grant index of a runner.
func RunnerGrantPrefix(runner types.Address) []byte { return secKey([]byte("rgrant/"), runner[:]) }

func secretCountKey(owner types.Address) []byte { return secKey([]byte("count/"), owner[:]) }

// ReadSecret decodes a secret (nil if absent).
func ReadSecret(r state.Reader, owner types.Address, name string) (*Secret, error) {
	return system.Get[Secret](r, SecretKey(owner, name), "decode secret %s/%s", owner, name)
}

// ListSecrets returns an owner's secrets in name-length, then name order.
func ListSecrets(r state.Reader, owner types.Address) ([]*Secret, error) {
	var out []*Secret
	err := r.Scan(SecretPrefix(owner), func(_, v []byte) error {
		var s Secret
		if err := codec.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("decode secret: %w", err)
		}
		out = append(out, &s)
		return nil
	})
	return out, err
}

// ReadSecretGrant decodes a runner's grant (nil if absent).
func ReadSecretGrant(r state.Reader, owner types.Address, name string, runner types.Address) (*SecretGrant, error) {
	return system.Get[SecretGrant](r, SecretGrantKey(owner, name, runner), "decode grant")
}

// ListSecretGrants returns a secret's grants in runner order.
func ListSecretGrants(r state.Reader, owner types.Address, name string) ([]*SecretGrant, error) {
	var out []*SecretGrant
	err := r.Scan(SecretGrantPrefix(owner, name), func(_, v []byte) error {
		var g SecretGrant
		if err := codec.Unmarshal(v, &g); err != nil {
			return fmt.Errorf("decode grant: %w", err)
		}
		out = append(out, &g)
		return nil
	})
	return out, err
}

// ListRunnerGrants returns every grant made to runner, by owner then name.
func ListRunnerGrants(r state.Reader, runner types.Address) ([]*SecretGrant, error) {
	var keys [][]byte
	prefix := RunnerGrantPrefix(runner)
	if err := r.Scan(prefix, func(k, _ []byte) error {
		rest := k[len(prefix):]
		if len(rest) < types.AddressLength+1 || int(rest[types.AddressLength])+types.AddressLength+1 != len(rest) {
			return fmt.Errorf("malformed runner grant index key %x", k)
		}
		keys = append(keys, slices.Clone(rest))
		return nil
	}); err != nil {
		return nil, err
	}
	var out []*SecretGrant
	for _, k := range keys {
		owner, _ := types.BytesToAddress(k[:types.AddressLength])
		g, err := ReadSecretGrant(r, owner, string(k[types.AddressLength+1:]), runner)
		if err != nil {
			return nil, err
		}
		if g != nil {
			out = append(out, g)
		}
	}
	return out, nil
}

func (x *txCtx) secretCount(owner types.Address) (uint64, error) {
	b, ok, err := x.State().Get(secretCountKey(owner))
	if err != nil || !ok {
		return 0, err
	}
	if len(b) != 8 {
		return 0, fmt.Errorf("secret count of %s: %d bytes", owner, len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

func (x *txCtx) setSecretCount(owner types.Address, n uint64) {
	if n == 0 {
		x.State().Delete(secretCountKey(owner))
		return
	}
	x.State().Set(secretCountKey(owner), system.BE8(n))
}

func checkSecretName(name string) error {
	if !SecretNameRE.MatchString(name) {
		return system.Failf(system.CodeInvalidSecretName, "InvalidSecretName: names are 1..64 characters of [A-Za-z0-9._-]")
	}
	return nil
}

// dropGrants deletes every grant of a secret (and the runner index).
func (x *txCtx) dropGrants(owner types.Address, name string) (int, error) {
	grants, err := ListSecretGrants(x.State(), owner, name)
	if err != nil {
		return 0, err
	}
	if err := x.Charge(uint64(len(grants))*SecretPerGrantCycles, 0); err != nil {
		return 0, err
	}
	for _, g := range grants {
		x.State().Delete(SecretGrantKey(owner, name, g.Runner))
		x.State().Delete(runnerGrantKey(g.Runner, owner, name))
	}
	return len(grants), nil
}

func (x *txCtx) secretPut(from types.Address, in *types.SecretPut) error {
	p := &x.m.p
	if err := x.Charge(SecretPutCycles, 0); err != nil {
		return err
	}
	if err := checkSecretName(in.Name); err != nil {
		return err
	}
	pol, err := attest.DecodePolicy(in.Policy)
	if err != nil {
		return system.Failf(system.CodeInvalidPolicy, "InvalidPolicy: %v", err)
	}
	if n := uint64(len(in.Ciphertext)); n < attest.SecretOverhead || n > p.MaxSecretBytes {
		return system.Failf(system.CodeInvalidCiphertext, "InvalidCiphertext: %d bytes (%d..%d)", n, attest.SecretOverhead, p.MaxSecretBytes)
	}
	if len(in.OwnerKey) != attest.SealOverhead+attest.DEKSize {
		return system.Failf(system.CodeInvalidOwnerKey, "InvalidOwnerKey: the sealed data key is %d bytes", attest.SealOverhead+attest.DEKSize)
	}
	s, err := ReadSecret(x.State(), from, in.Name)
	if err != nil {
		return err
	}
	if s == nil {
		n, err := x.secretCount(from)
		if err != nil {
			return err
		}
		if n >= p.MaxSecrets {
			return system.Failf(system.CodeTooManySecrets, "TooManySecrets: %s already holds %d secrets", from, n)
		}
		x.setSecretCount(from, n+1)
		s = &Secret{Owner: from, Name: in.Name, CreatedAt: x.Env().Height}
	} else {
		// A new version has a new data key: the old grants cannot open it.
		if _, err := x.dropGrants(from, in.Name); err != nil {
			return err
		}
	}
	s.Version++
	s.Policy, s.Ciphertext, s.OwnerKey = *pol, slices.Clone(in.Ciphertext), slices.Clone(in.OwnerKey)
	s.Grants, s.UpdatedAt = 0, x.Env().Height
	b := codec.MustMarshal(s)
	if err := x.Charge(0, uint64(len(b))); err != nil {
		return err
	}
	x.State().Set(SecretKey(from, in.Name), b)
	x.Emit(types.SecretsManagerAddress, &SecretPutEvent{Owner: from, Name: in.Name, Version: s.Version, PolicyID: pol.ID()})
	return nil
}

func (x *txCtx) ownedSecret(from types.Address, name string) (*Secret, error) {
	if err := checkSecretName(name); err != nil {
		return nil, err
	}
	s, err := ReadSecret(x.State(), from, name)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, system.Failf(system.CodeNoSuchSecret, "NoSuchSecret: %s has no secret %q", from, name)
	}
	return s, nil
}

func (x *txCtx) secretGrant(from types.Address, in *types.SecretGrant) error {
	p := &x.m.p
	if err := x.Charge(SecretGrantCycles, 0); err != nil {
		return err
	}
	s, err := x.ownedSecret(from, in.Name)
	if err != nil {
		return err
	}
	rn, err := x.m.reg.Runner(x.State(), in.Runner)
	if err != nil {
		return err
	}
	if rn == nil || !rn.Active {
		return system.Failf(system.CodeNotARunner, "NotARunner: %s is not an active runner", in.Runner)
	}
	a, err := tee.ReadAttestation(x.State(), in.Runner)
	if err != nil {
		return err
	}
	if !a.Current(x.Env().Height, rn.ResultKey, p.Policy.ID()) {
		return system.Failf(system.CodeNotAttested, "NotAttested: %s has no attestation in force", in.Runner)
	}
	if err := s.Policy.Check(a.Claims()); err != nil {
		return system.Failf(system.CodePolicyMismatch, "PolicyMismatch: runner %s does not satisfy the secret's policy: %v", in.Runner, err)
	}
	if !bytes.Equal(in.SealKey, a.SealKey) {
		return system.Failf(system.CodeStaleSealKey, "StaleSealKey: %s's attested seal key is %s", in.Runner, a.SealKey)
	}
	if len(in.SealedKey) != attest.SealOverhead+attest.DEKSize {
		return system.Failf(system.CodeInvalidSealedKey, "InvalidSealedKey: the sealed data key is %d bytes", attest.SealOverhead+attest.DEKSize)
	}
	old, err := ReadSecretGrant(x.State(), from, in.Name, in.Runner)
	if err != nil {
		return err
	}
	if old == nil {
		if s.Grants >= p.MaxGrants {
			return system.Failf(system.CodeTooManyGrants, "TooManyGrants: secret %q is granted to %d runners", in.Name, s.Grants)
		}
		s.Grants++
		x.State().Set(SecretKey(from, in.Name), codec.MustMarshal(s))
	}
	g := &SecretGrant{Owner: from, Name: in.Name, Version: s.Version, Runner: in.Runner, SealKey: slices.Clone(in.SealKey),
		SealedKey: slices.Clone(in.SealedKey), UniqueID: slices.Clone(a.UniqueID), GrantedAt: x.Env().Height}
	b := codec.MustMarshal(g)
	if err := x.Charge(0, uint64(len(b))); err != nil {
		return err
	}
	x.State().Set(SecretGrantKey(from, in.Name, in.Runner), b)
	x.State().Set(runnerGrantKey(in.Runner, from, in.Name), []byte{1})
	x.Emit(types.SecretsManagerAddress, &SecretGrantedEvent{Owner: from, Name: in.Name, Version: s.Version, Runner: in.Runner})
	return nil
}

func (x *txCtx) secretRevoke(from types.Address, in *types.SecretRevoke) error {
	if err := x.Charge(SecretRemoveCycles, 0); err != nil {
		return err
	}
	s, err := x.ownedSecret(from, in.Name)
	if err != nil {
		return err
	}
	g, err := ReadSecretGrant(x.State(), from, in.Name, in.Runner)
	if err != nil {
		return err
	}
	if g == nil {
		return system.Failf(system.CodeNoSuchGrant, "NoSuchGrant: secret %q is not granted to %s", in.Name, in.Runner)
	}
	x.State().Delete(SecretGrantKey(from, in.Name, in.Runner))
	x.State().Delete(runnerGrantKey(in.Runner, from, in.Name))
	s.Grants--
	x.State().Set(SecretKey(from, in.Name), codec.MustMarshal(s))
	x.Emit(types.SecretsManagerAddress, &SecretRevokedEvent{Owner: from, Name: in.Name, Runner: in.Runner})
	return nil
}

func (x *txCtx) secretDelete(from types.Address, in *types.SecretDelete) error {
	if err := x.Charge(SecretRemoveCycles, 0); err != nil {
		return err
	}
	if _, err := x.ownedSecret(from, in.Name); err != nil {
		return err
	}
	if _, err := x.dropGrants(from, in.Name); err != nil {
		return err
	}
	x.State().Delete(SecretKey(from, in.Name))
	n, err := x.secretCount(from)
	if err != nil {
		return err
	}
	x.setSecretCount(from, n-min(n, 1))
	x.Emit(types.SecretsManagerAddress, &SecretDeletedEvent{Owner: from, Name: in.Name})
	return nil
}
