package attest

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// SimulationTag opens every simulated report, so that no one can mistake one
// for hardware evidence.
const SimulationTag = "SIMULATION"

const simDomain = "cowboy-attest-sim-v1:"

// SimReport is the quote of simulated evidence: the canonical CBOR array
// ["SIMULATION", unique_id, signer_id, product_id, security_version, debug,
// tcb, platform_key(32), signature(64)]. The signature is Ed25519 by
// platform_key over "cowboy-attest-sim-v1:" || report_data(64) || CBOR of
// the array with an empty signature.
//
// A simulated report proves only that someone holding platform_key signed
// it: there is no enclave and no hardware root of trust. It lets devnets and
// tests exercise the whole attestation path (registration, the tee_required
// filter, secret release) without SGX hardware.
type SimReport struct {
	_               struct{}    `cbor:",toarray"`
	Tag             string      `json:"tag"`
	UniqueID        types.Bytes `json:"unique_id"`
	SignerID        types.Bytes `json:"signer_id"`
	ProductID       uint64      `json:"product_id"`
	SecurityVersion uint64      `json:"security_version"`
	Debug           bool        `json:"debug"`
	TCB             TCBStatus   `json:"tcb"`
	PlatformKey     types.Bytes `json:"platform_key"`
	Signature       types.Bytes `json:"signature"`
}

func (r *SimReport) message(reportData []byte) ([]byte, error) {
	u := *r
	u.Signature = types.Bytes{}
	b, err := codec.Marshal(&u)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(simDomain), reportData...), b...), nil
}

// SimOptions are the claims a simulated enclave reports. The zero value
// reports a production (non-debug), up-to-date enclave whose unique and
// signer ids are derived from the platform key.
type SimOptions struct {
	UniqueID        []byte // 32 bytes; default Keccak256("sim-unique" || platform key)
	SignerID        []byte // 32 bytes; default Keccak256("sim-signer" || platform key)
	ProductID       uint16
	SecurityVersion uint16
	Debug           bool
	TCB             TCBStatus
}

// Simulation is the simulation Attester: it signs SimReports with a local
// Ed25519 key. Every policy without AllowSimulation refuses its evidence.
type Simulation struct {
	key ed25519.PrivateKey
	rep SimReport
}

// NewSimulation returns a simulation attester signing with key.
func NewSimulation(key ed25519.PrivateKey, o SimOptions) (*Simulation, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("attest: simulation key is %d bytes, want %d", len(key), ed25519.PrivateKeySize)
	}
	pub := key.Public().(ed25519.PublicKey)
	u, s := o.UniqueID, o.SignerID
	if u == nil {
		h := types.Keccak256([]byte("sim-unique"), pub)
		u = h[:]
	}
	if s == nil {
		h := types.Keccak256([]byte("sim-signer"), pub)
		s = h[:]
	}
	if len(u) != MeasurementSize || len(s) != MeasurementSize {
		return nil, fmt.Errorf("attest: simulated unique and signer ids are %d bytes", MeasurementSize)
	}
	return &Simulation{key: key, rep: SimReport{Tag: SimulationTag, UniqueID: append(types.Bytes{}, u...), SignerID: append(types.Bytes{}, s...),
		ProductID: uint64(o.ProductID), SecurityVersion: uint64(o.SecurityVersion), Debug: o.Debug, TCB: o.TCB,
		PlatformKey: append(types.Bytes{}, pub...)}}, nil
}

// Backend is BackendSimulation.
func (s *Simulation) Backend() Backend { return BackendSimulation }

// Measurement is the unique id the simulated enclave reports.
func (s *Simulation) Measurement() []byte { return append([]byte(nil), s.rep.UniqueID...) }

// Attest signs a SimReport over reportData.
func (s *Simulation) Attest(ctx context.Context, reportData ReportData) (*Evidence, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := s.rep
	msg, err := r.message(reportData[:])
	if err != nil {
		return nil, fmt.Errorf("attest: simulation: %w", err)
	}
	r.Signature = ed25519.Sign(s.key, msg)
	q, err := codec.Marshal(&r)
	if err != nil {
		return nil, fmt.Errorf("attest: simulation: %w", err)
	}
	return &Evidence{Version: Version, Backend: BackendSimulation, ReportData: append(types.Bytes{}, reportData[:]...), Quote: q}, nil
}

// SimulationVerifier authenticates simulated evidence: the report's
// signature by its own platform key. Any key is accepted — simulation has no
// root of trust, which is why only dev policies admit it.
type SimulationVerifier struct{}

// Verify checks the SimReport's shape and signature.
func (SimulationVerifier) Verify(e *Evidence) (*Claims, error) {
	if e.Backend != BackendSimulation {
		return nil, fmt.Errorf("%w: %s evidence given to the simulation verifier", ErrBadEvidence, e.Backend)
	}
	var r SimReport
	if err := codec.Unmarshal(e.Quote, &r); err != nil {
		return nil, fmt.Errorf("%w: simulated report: %v", ErrBadEvidence, err)
	}
	switch {
	case r.Tag != SimulationTag:
		return nil, fmt.Errorf("%w: simulated report without the %s tag", ErrBadEvidence, SimulationTag)
	case len(r.UniqueID) != MeasurementSize || len(r.SignerID) != MeasurementSize:
		return nil, fmt.Errorf("%w: simulated ids must be %d bytes", ErrBadEvidence, MeasurementSize)
	case len(r.PlatformKey) != ed25519.PublicKeySize || len(r.Signature) != ed25519.SignatureSize:
		return nil, fmt.Errorf("%w: simulated report key or signature has the wrong size", ErrBadEvidence)
	case r.ProductID > 0xffff || r.SecurityVersion > 0xffff || r.TCB > TCBUnknown:
		return nil, fmt.Errorf("%w: simulated report field out of range", ErrBadEvidence)
	case len(e.ReportData) != ReportDataSize:
		return nil, fmt.Errorf("%w: report data is %d bytes", ErrBadEvidence, len(e.ReportData))
	}
	msg, err := r.message(e.ReportData)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEvidence, err)
	}
	if !ed25519.Verify(ed25519.PublicKey(r.PlatformKey), msg, r.Signature) {
		return nil, fmt.Errorf("%w: simulated report signature does not verify", ErrBadEvidence)
	}
	return &Claims{Backend: BackendSimulation, UniqueID: r.UniqueID, SignerID: r.SignerID, ProductID: r.ProductID,
		SecurityVersion: r.SecurityVersion, Debug: r.Debug, TCB: r.TCB, ReportData: append(types.Bytes{}, e.ReportData...)}, nil
}
