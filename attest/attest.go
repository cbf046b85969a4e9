// Package attest owns Cowboy's TEE attestation: the evidence format the TEE
// Verifier (0x…05) records, the policy evidence is judged against, the
// report-data bindings (a runner's keys at registration, a job's result),
// the Attester and Verifier backends (Intel SGX through EGo, behind the
// `ego` build tag, and a clearly marked simulation backend for devnets), and
// the sealing scheme the Secrets Manager (0x…04) uses to release secrets
// only to attested enclaves.
//
// The chain (chain/execution) and the runner daemon both use this package,
// so the evidence encoding and every check exist once. Verification is pure
// CPU work over its inputs; only the SGX backend's quote check consults the
// platform's attestation collateral (see docs/TEE.md).
package attest

import (
	"context"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Version is the evidence format version.
const Version = 1

// MaxEvidenceBytes bounds an encoded Evidence (an SGX DCAP quote with its
// certificate chain is about 5 KiB).
const MaxEvidenceBytes = 16 * 1024

// ReportDataSize is the size of the data an enclave report binds.
const ReportDataSize = 64

// ReportData is the 64 bytes an enclave report binds (SGX REPORTDATA).
type ReportData [ReportDataSize]byte

// Backend names the TEE technology that produced evidence.
type Backend uint8

// Backends.
const (
	// BackendSGX is an Intel SGX remote report (Open Enclave format, as
	// produced by EGo's enclave.GetRemoteReport).
	BackendSGX Backend = 1
	// BackendSimulation is a simulated report signed by a local Ed25519
	// key. It proves nothing about the hardware; only dev policies accept it.
	BackendSimulation Backend = 2
)

func (b Backend) String() string {
	switch b {
	case BackendSGX:
		return "sgx"
	case BackendSimulation:
		return "SIMULATION"
	}
	return fmt.Sprintf("backend(%d)", uint8(b))
}

// Errors. Every failure of Verify, Check and Open wraps one of them.
var (
	// ErrBadEvidence: the evidence is malformed or its signature/quote does
	// not verify.
	ErrBadEvidence = errors.New("attest: invalid evidence")
	// ErrReportData: the evidence is authentic but binds other data than
	// expected (another key, job or result).
	ErrReportData = errors.New("attest: report data mismatch")
	// ErrPolicy: the evidence is authentic but its claims violate the policy.
	ErrPolicy = errors.New("attest: policy violation")
	// ErrNoSGX: this binary was built without SGX support (`-tags ego`).
	ErrNoSGX = errors.New("attest: built without SGX support (rebuild with -tags ego and the EGo/Open Enclave libraries)")
	// ErrSeal: a sealed box or secret ciphertext does not open.
	ErrSeal = errors.New("attest: cannot open sealed data")
)

// Evidence is what an Attester produces and the TEE Verifier checks. It is
// the canonical CBOR array [version, backend, report_data(64), quote]; the
// quote is backend specific: the raw Open Enclave remote report for SGX, the
// canonical CBOR SimReport for the simulation backend.
type Evidence struct {
	_          struct{}    `cbor:",toarray"`
	Version    uint64      `json:"version"`
	Backend    Backend     `json:"backend"`
	ReportData types.Bytes `json:"report_data"`
	Quote      types.Bytes `json:"quote"`
}

// Encode returns the canonical encoding.
func (e *Evidence) Encode() ([]byte, error) { return codec.Marshal(e) }

// Hash is Keccak256 of the canonical encoding.
func (e *Evidence) Hash() types.Hash {
	b, err := e.Encode()
	if err != nil {
		return types.Hash{}
	}
	return types.Keccak256(b)
}

// DecodeEvidence decodes canonical evidence and checks its shape.
func DecodeEvidence(b []byte) (*Evidence, error) {
	if len(b) == 0 || len(b) > MaxEvidenceBytes {
		return nil, fmt.Errorf("%w: %d bytes (1..%d)", ErrBadEvidence, len(b), MaxEvidenceBytes)
	}
	var e Evidence
	if err := codec.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEvidence, err)
	}
	if e.Version != Version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrBadEvidence, e.Version, Version)
	}
	if len(e.ReportData) != ReportDataSize {
		return nil, fmt.Errorf("%w: report data is %d bytes, want %d", ErrBadEvidence, len(e.ReportData), ReportDataSize)
	}
	if len(e.Quote) == 0 {
		return nil, fmt.Errorf("%w: empty quote", ErrBadEvidence)
	}
	return &e, nil
}

// TCBStatus is the platform's trusted computing base level as judged by the
// attestation collateral. Numbering follows EGo's tcbstatus package.
type TCBStatus uint8

// TCB levels.
const (
	TCBUpToDate TCBStatus = iota
	TCBOutOfDate
	TCBRevoked
	TCBConfigurationNeeded
	TCBOutOfDateConfigurationNeeded
	TCBSWHardeningNeeded
	TCBConfigurationAndSWHardeningNeeded
	TCBUnknown
)

func (s TCBStatus) String() string {
	names := [...]string{"UpToDate", "OutOfDate", "Revoked", "ConfigurationNeeded", "OutOfDateConfigurationNeeded",
		"SWHardeningNeeded", "ConfigurationAndSWHardeningNeeded", "Unknown"}
	if int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("tcb(%d)", uint8(s))
}

// Claims are what authentic evidence says about the enclave that produced it.
type Claims struct {
	_               struct{}    `cbor:",toarray"`
	Backend         Backend     `json:"backend"`
	UniqueID        types.Bytes `json:"unique_id"` // MRENCLAVE: the measurement of the enclave code
	SignerID        types.Bytes `json:"signer_id"` // MRSIGNER: hash of the enclave signing key
	ProductID       uint64      `json:"product_id"`
	SecurityVersion uint64      `json:"security_version"` // ISVSVN
	Debug           bool        `json:"debug"`
	TCB             TCBStatus   `json:"tcb"`
	ReportData      types.Bytes `json:"report_data"`
}

// Attester produces evidence inside an enclave.
type Attester interface {
	// Backend is the technology the evidence comes from.
	Backend() Backend
	// Attest returns evidence binding reportData.
	Attest(ctx context.Context, reportData ReportData) (*Evidence, error)
}

// Verifier authenticates evidence of one backend and returns its claims. It
// does not apply a policy and does not compare report data; Check does both.
type Verifier interface {
	Verify(e *Evidence) (*Claims, error)
}

// VerifierFor returns the built-in verifier of backend b: the simulation
// verifier, or the SGX verifier (which fails with ErrNoSGX unless this
// binary was built with `-tags ego`).
func VerifierFor(b Backend) (Verifier, error) {
	switch b {
	case BackendSimulation:
		return SimulationVerifier{}, nil
	case BackendSGX:
		return sgxVerifier{}, nil
	}
	return nil, fmt.Errorf("%w: unknown backend %d", ErrBadEvidence, uint8(b))
}

// Check is the whole verification of encoded evidence: decode, authenticate
// with the built-in verifier of its backend, compare the bound report data
// with want, and apply the policy. It returns the claims on success.
func Check(p *Policy, evidence []byte, want ReportData) (*Claims, error) {
	e, err := DecodeEvidence(evidence)
	if err != nil {
		return nil, err
	}
	return CheckEvidence(p, e, want)
}

// CheckEvidence is Check on decoded evidence.
func CheckEvidence(p *Policy, e *Evidence, want ReportData) (*Claims, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	// The policy's refusal of simulation comes first: a production node
	// never spends work on (or reports details of) simulated evidence.
	if e.Backend == BackendSimulation && !p.AllowSimulation {
		return nil, fmt.Errorf("%w: SIMULATION evidence is refused by every non-dev policy", ErrPolicy)
	}
	v, err := VerifierFor(e.Backend)
	if err != nil {
		return nil, err
	}
	c, err := v.Verify(e)
	if err != nil {
		return nil, err
	}
	if string(c.ReportData) != string(want[:]) {
		return nil, fmt.Errorf("%w: evidence binds %x…, want %x…", ErrReportData, c.ReportData[:8], want[:8])
	}
	if err := p.Check(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Domain separators of the report-data bindings.
const (
	keyDomain    = "cowboy-attest-key-v1:"
	resultDomain = "cowboy-attest-result-v1:"
	modelDomain  = "cowboy-attest-result-model-v1:"
)

// ReportDataForKey is what a runner's enclave binds at registration:
// SHA-512("cowboy-attest-key-v1:" || runner(20) || result_key(32) ||
// seal_key(32)). runner is the runner's account, resultKey the Ed25519 key
// that signs its results and sealKey the X25519 public key secrets are
// sealed to; both private keys are generated inside the enclave and never
// leave it.
func ReportDataForKey(runner types.Address, resultKey, sealKey []byte) ReportData {
	h := sha512.New()
	h.Write([]byte(keyDomain))
	h.Write(runner[:])
	h.Write(resultKey)
	h.Write(sealKey)
	var out ReportData
	copy(out[:], h.Sum(nil))
	return out
}

// ReportDataForResult is what an enclave binds for one job's result:
// SHA-512("cowboy-attest-result-v1:" || runner(20) || job_id(32) ||
// result_hash(32)), result_hash being Keccak256(result_bytes) as the Result
// Verifier computes it.
func ReportDataForResult(runner types.Address, jobID, resultHash types.Hash) ReportData {
	h := sha512.New()
	h.Write([]byte(resultDomain))
	h.Write(runner[:])
	h.Write(jobID[:])
	h.Write(resultHash[:])
	var out ReportData
	copy(out[:], h.Sum(nil))
	return out
}

// ReportDataForResultModel is what an enclave binds for one job's result
// produced by a registry model (spec 002 §5.1): SHA-512(
// "cowboy-attest-result-model-v1:" || runner(20) || job_id(32) ||
// result_hash(32) || model_id(32)), model_id being the registry id of the
// weights, architecture, tokenizer and license the enclave loaded.
func ReportDataForResultModel(runner types.Address, jobID, resultHash, modelID types.Hash) ReportData {
	h := sha512.New()
	h.Write([]byte(modelDomain))
	h.Write(runner[:])
	h.Write(jobID[:])
	h.Write(resultHash[:])
	h.Write(modelID[:])
	var out ReportData
	copy(out[:], h.Sum(nil))
	return out
}

func le8(v uint64) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return b[:]
}
