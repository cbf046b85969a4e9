package tee

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// DevChainID is the chain id of `cowboyd --dev` genesis files. A chain with
// this id and no configured TEE policy uses attest.DevPolicy (simulation
// admitted); any other chain without a policy refuses all evidence.
const DevChainID = 7357

// Params are the TEE Verifier (0x…05) and Secrets Manager (0x…04)
// parameters. Zero fields take the defaults.
type Params struct {
	// Policy is the chain's TEE policy: evidence that does not satisfy it is
	// refused. The zero policy means "none configured": every attestation
	// fails, except on the dev chain id, which gets attest.DevPolicy.
	Policy attest.Policy
	// AttestationTTL is how many blocks a verified attestation stays valid
	// (the runner re-attests before): 86,400 (a day of 1-second blocks).
	AttestationTTL uint64
	// MaxSecretBytes bounds a secret's ciphertext: 16 KiB.
	MaxSecretBytes uint64
	// MaxGrants bounds the runners one secret is granted to: 64.
	MaxGrants uint64
	// MaxSecrets bounds the secrets of one owner: 256.
	MaxSecrets uint64
}

func (p *Params) fill(chainID uint64) {
	if p.Policy.IsZero() && chainID == DevChainID {
		p.Policy = attest.DevPolicy()
	}
	if p.AttestationTTL == 0 {
		p.AttestationTTL = 86_400
	}
	if p.MaxSecretBytes == 0 {
		p.MaxSecretBytes = 16 * 1024
	}
	if p.MaxGrants == 0 {
		p.MaxGrants = 64
	}
	if p.MaxSecrets == 0 {
		p.MaxSecrets = 256
	}
}

// Execution costs of the TEE instructions beyond their intrinsic cost. Each
// also pays one cell per byte it stores.
const (
	// AttestSimCycles verifies simulated evidence (CBOR decoding and one
	// Ed25519 verification, ~60 µs).
	AttestSimCycles = 50_000
	// AttestSGXCycles verifies an SGX quote (certificate chain, ECDSA
	// signatures and collateral, a few milliseconds).
	AttestSGXCycles = 2_000_000
)

// Attestation is the TEE Verifier's record of a runner's verified evidence.
type Attestation struct {
	_               struct{}      `cbor:",toarray"`
	Runner          types.Address `json:"runner"`
	Backend         uint8         `json:"backend"` // attest.Backend
	UniqueID        types.Bytes   `json:"unique_id"`
	SignerID        types.Bytes   `json:"signer_id"`
	ProductID       uint64        `json:"product_id"`
	SecurityVersion uint64        `json:"security_version"`
	Debug           bool          `json:"debug"`
	TCB             uint8         `json:"tcb"` // attest.TCBStatus
	ResultKey       types.Bytes   `json:"result_key"`
	SealKey         types.Bytes   `json:"seal_key"`
	EvidenceHash    types.Hash    `json:"evidence_hash"`
	PolicyID        types.Hash    `json:"policy_id"`
	VerifiedAt      uint64        `json:"verified_at"`
	ExpiresAt       uint64        `json:"expires_at"`
}

// Claims are the recorded claims, for policy checks.
func (a *Attestation) Claims() *attest.Claims {
	return &attest.Claims{Backend: attest.Backend(a.Backend), UniqueID: a.UniqueID, SignerID: a.SignerID, ProductID: a.ProductID,
		SecurityVersion: a.SecurityVersion, Debug: a.Debug, TCB: attest.TCBStatus(a.TCB)}
}

// Current reports whether the attestation is in force at height for a
// runner whose registered result key is resultKey under the chain policy
// policyID: not expired, made under that policy, binding that key.
func (a *Attestation) Current(height uint64, resultKey []byte, policyID types.Hash) bool {
	return a != nil && height <= a.ExpiresAt && a.PolicyID == policyID && bytes.Equal(a.ResultKey, resultKey)
}

// ResultAttestation is a recorded per-job evidence: the runner's enclave
// bound ResultHash as its result of JobID.
type ResultAttestation struct {
	_            struct{}      `cbor:",toarray"`
	JobID        types.Hash    `json:"job_id"`
	Runner       types.Address `json:"runner"`
	ResultHash   types.Hash    `json:"result_hash"`
	UniqueID     types.Bytes   `json:"unique_id"`
	EvidenceHash types.Hash    `json:"evidence_hash"`
	Height       uint64        `json:"height"`
}

func teeKey(parts ...[]byte) []byte { return system.Key(types.TEEVerifierAddress, parts...) }

// AttestationKey is the state key of a runner's attestation.
func AttestationKey(runner types.Address) []byte { return teeKey([]byte("att/"), runner[:]) }

// AttestationPrefix prefixes every attestation record.
func AttestationPrefix() []byte { return teeKey([]byte("att/")) }

// ResultAttestationKey is the state key of a runner's per-job evidence.
func ResultAttestationKey(jobID types.Hash, runner types.Address) []byte {
	return teeKey([]byte("job/"), jobID[:], runner[:])
}

// ResultAttestationPrefix prefixes a job's per-job evidence records.
func ResultAttestationPrefix(jobID types.Hash) []byte { return teeKey([]byte("job/"), jobID[:]) }

// ResultModelKey is the state key of the registry model a runner's
// per-job evidence binds (written only for evidence with a model hash).
func ResultModelKey(jobID types.Hash, runner types.Address) []byte {
	return teeKey([]byte("jobmodel/"), jobID[:], runner[:])
}

// ResultModel returns the model id runner's recorded per-job evidence for
// jobID binds; ok is false when its evidence binds none (or is absent).
func ResultModel(r state.Reader, jobID types.Hash, runner types.Address) (types.Hash, bool, error) {
	b, ok, err := r.Get(ResultModelKey(jobID, runner))
	if err != nil || !ok {
		return types.Hash{}, false, err
	}
	h, err := types.BytesToHash(b)
	return h, err == nil, err
}

// ReadAttestation decodes a runner's attestation (nil if absent).
func ReadAttestation(r state.Reader, runner types.Address) (*Attestation, error) {
	return system.Get[Attestation](r, AttestationKey(runner), "decode attestation %s", runner)
}

// ReadResultAttestations returns a job's per-job evidence records in
// runner order.
func ReadResultAttestations(r state.Reader, jobID types.Hash) ([]ResultAttestation, error) {
	var out []ResultAttestation
	err := r.Scan(ResultAttestationPrefix(jobID), func(_, v []byte) error {
		var ra ResultAttestation
		if err := codec.Unmarshal(v, &ra); err != nil {
			return fmt.Errorf("decode result attestation: %w", err)
		}
		out = append(out, ra)
		return nil
	})
	return out, err
}

// Attested reports whether runner has an attestation in force at
// height under the chain policy p that binds its registered result key:
// what the Job Dispatcher's tee_required filter demands beyond the
// runner's declared TEE support.
func Attested(r state.Reader, runner types.Address, resultKey []byte, height uint64, p *attest.Policy) (bool, error) {
	a, err := ReadAttestation(r, runner)
	if err != nil {
		return false, err
	}
	return a.Current(height, resultKey, p.ID()), nil
}

// ResultAttested reports whether runner recorded per-job evidence that its
// enclave produced resultHash for job jobID. The Result Verifier can require
// it of every agreeing runner of a Deterministic (TEE) job.
func ResultAttested(r state.Reader, jobID types.Hash, runner types.Address, resultHash types.Hash) (bool, error) {
	b, ok, err := r.Get(ResultAttestationKey(jobID, runner))
	if err != nil || !ok {
		return false, err
	}
	var ra ResultAttestation
	if err := codec.Unmarshal(b, &ra); err != nil {
		return false, fmt.Errorf("decode result attestation: %w", err)
	}
	return ra.ResultHash == resultHash, nil
}

// CheckResultEvidence verifies per-job evidence of runner under policy p:
// authentic, binding attest.ReportDataForResult(runner, jobID, resultHash),
// satisfying p, and produced by the same enclave build (unique id) as the
// runner's attestation a. It returns the evidence's claims.
func CheckResultEvidence(p *attest.Policy, a *Attestation, runner types.Address, jobID, resultHash types.Hash, evidence []byte) (*attest.Claims, error) {
	return checkResultEvidence(p, a, evidence, attest.ReportDataForResult(runner, jobID, resultHash))
}

// CheckResultModelEvidence is CheckResultEvidence for evidence that also
// binds the registry model the enclave ran
// (attest.ReportDataForResultModel).
func CheckResultModelEvidence(p *attest.Policy, a *Attestation, runner types.Address, jobID, resultHash, modelID types.Hash, evidence []byte) (*attest.Claims, error) {
	return checkResultEvidence(p, a, evidence, attest.ReportDataForResultModel(runner, jobID, resultHash, modelID))
}

func checkResultEvidence(p *attest.Policy, a *Attestation, evidence []byte, rd attest.ReportData) (*attest.Claims, error) {
	c, err := attest.Check(p, evidence, rd)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(c.UniqueID, a.UniqueID) || attest.Backend(a.Backend) != c.Backend {
		return nil, fmt.Errorf("%w: per-job evidence from enclave %x, the runner attested %x", attest.ErrPolicy, []byte(c.UniqueID), []byte(a.UniqueID))
	}
	return c, nil
}

// evidenceCycles is the verification charge of encoded evidence, judged
// from its backend byte before decoding (malformed evidence pays the
// simulation rate and fails).
func evidenceCycles(evidence []byte) uint64 {
	if e, err := attest.DecodeEvidence(evidence); err == nil && e.Backend == attest.BackendSGX {
		return AttestSGXCycles
	}
	return AttestSimCycles
}

func (x *txCtx) teeAttest(from types.Address, in *types.TEEAttest) error {
	p := &x.m.p
	if err := x.Charge(evidenceCycles(in.Evidence), 0); err != nil {
		return err
	}
	if len(in.SealKey) != attest.SealKeySize {
		return system.Failf(system.CodeInvalidSealKey, "InvalidSealKey: an X25519 public key is %d bytes", attest.SealKeySize)
	}
	rn, err := x.m.activeRunner(x.State(), from)
	if err != nil {
		return err
	}
	if !rn.TEE {
		return system.Failf(system.CodeNoTEESupport, "NoTEESupport: %s did not declare TEE support at registration", from)
	}
	if p.Policy.IsZero() {
		return system.Failf(system.CodeNoTEEPolicy, "NoTEEPolicy: this chain has no TEE policy configured, so it accepts no evidence")
	}
	ev, err := attest.DecodeEvidence(in.Evidence)
	if err != nil {
		return system.Failf(system.CodeInvalidEvidence, "InvalidEvidence: %v", err)
	}
	c, err := attest.CheckEvidence(&p.Policy, ev, attest.ReportDataForKey(from, rn.ResultKey, in.SealKey))
	if err != nil {
		return system.Failf(system.CodeAttestationRefused, "AttestationRefused: %v", err)
	}
	a := &Attestation{Runner: from, Backend: uint8(c.Backend), UniqueID: c.UniqueID, SignerID: c.SignerID, ProductID: c.ProductID,
		SecurityVersion: c.SecurityVersion, Debug: c.Debug, TCB: uint8(c.TCB), ResultKey: slices.Clone(rn.ResultKey),
		SealKey: slices.Clone(in.SealKey), EvidenceHash: types.Keccak256(in.Evidence), PolicyID: p.Policy.ID(),
		VerifiedAt: x.Env().Height, ExpiresAt: x.Env().Height + p.AttestationTTL}
	b := codec.MustMarshal(a)
	if err := x.Charge(0, uint64(len(b))); err != nil {
		return err
	}
	x.State().Set(AttestationKey(from), b)
	x.Emit(types.TEEVerifierAddress, &AttestationVerifiedEvent{Runner: from, Backend: c.Backend.String(), UniqueID: c.UniqueID, SignerID: c.SignerID, SecurityVersion: c.SecurityVersion, ExpiresAt: a.ExpiresAt})
	return nil
}

func (x *txCtx) teeAttestResult(from types.Address, in *types.TEEAttestResult) error {
	if err := x.Charge(evidenceCycles(in.Evidence), 0); err != nil {
		return err
	}
	rn, err := x.m.activeRunner(x.State(), from)
	if err != nil {
		return err
	}
	p := &x.m.p.Policy
	a, err := ReadAttestation(x.State(), from)
	if err != nil {
		return err
	}
	if !a.Current(x.Env().Height, rn.ResultKey, p.ID()) {
		return system.Failf(system.CodeNotAttested, "NotAttested: %s has no attestation in force", from)
	}
	committee, ok, err := x.m.reg.Committee(x.State(), in.JobID)
	if err != nil {
		return err
	}
	if !ok {
		return system.Failf(system.CodeNoSuchJob, "NoSuchJob: job %s does not exist", in.JobID)
	}
	if !slices.Contains(committee, from) {
		return system.Failf(system.CodeNotInCommittee, "NotInCommittee: %s is not on the committee of job %s", from, in.JobID)
	}
	check := func() (*attest.Claims, error) {
		return CheckResultEvidence(p, a, from, in.JobID, in.ResultHash, in.Evidence)
	}
	if in.ModelHash != (types.Hash{}) {
		check = func() (*attest.Claims, error) {
			return CheckResultModelEvidence(p, a, from, in.JobID, in.ResultHash, in.ModelHash, in.Evidence)
		}
	}
	if _, err := check(); err != nil {
		return system.Failf(system.CodeAttestationRefused, "AttestationRefused: %v", err)
	}
	if in.ModelHash != (types.Hash{}) {
		// The enclave's word on the model it ran: the Result Verifier
		// counts the result only if it is the job's model, and slashes
		// the runner if it is not (report_wrong_model).
		// The first model recorded stands, so that a runner cannot erase
		// evidence of a wrong model before it is reported.
		if prev, ok, err := ResultModel(x.State(), in.JobID, from); err != nil {
			return err
		} else if ok && prev != in.ModelHash {
			return system.Failf(system.CodeWrongModel, "WrongModel: %s's evidence for job %s binds model %s already", from, in.JobID, prev)
		}
		if err := x.Charge(0, types.HashLength); err != nil {
			return err
		}
		x.State().Set(ResultModelKey(in.JobID, from), in.ModelHash[:])
	}
	ra := &ResultAttestation{JobID: in.JobID, Runner: from, ResultHash: in.ResultHash, UniqueID: a.UniqueID,
		EvidenceHash: types.Keccak256(in.Evidence), Height: x.Env().Height}
	b := codec.MustMarshal(ra)
	if err := x.Charge(0, uint64(len(b))); err != nil {
		return err
	}
	x.State().Set(ResultAttestationKey(in.JobID, from), b)
	x.Emit(types.TEEVerifierAddress, &ResultAttestedEvent{JobID: in.JobID, Runner: from, ResultHash: in.ResultHash})
	return nil
}
