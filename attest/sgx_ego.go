//go:build ego

package attest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/edgelesssys/ego/attestation"
	"github.com/edgelesssys/ego/eclient"
	"github.com/edgelesssys/ego/enclave"
)

// SGXSupported reports whether this binary verifies (and, inside an EGo
// enclave, produces) SGX evidence.
const SGXSupported = true

// SGX is the Intel SGX Attester. It works only inside an EGo enclave
// (`ego run`); elsewhere Attest fails with the enclave runtime's error.
type SGX struct{}

// NewSGX returns the SGX attester.
func NewSGX() (*SGX, error) { return &SGX{}, nil }

// Backend is BackendSGX.
func (*SGX) Backend() Backend { return BackendSGX }

// Attest asks the enclave runtime for a remote report binding reportData.
func (*SGX) Attest(ctx context.Context, reportData ReportData) (*Evidence, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q, err := enclave.GetRemoteReport(reportData[:])
	if err != nil {
		return nil, fmt.Errorf("attest: sgx remote report: %w", err)
	}
	return &Evidence{Version: Version, Backend: BackendSGX, ReportData: append(types.Bytes{}, reportData[:]...), Quote: q}, nil
}

type sgxVerifier struct{}

// Verify checks the quote's signature chain up to Intel's root with the Open
// Enclave host verifier and converts the report into claims. An out-of-date
// TCB is not an error here: it is reported in Claims.TCB for the policy.
func (sgxVerifier) Verify(e *Evidence) (*Claims, error) {
	if e.Backend != BackendSGX {
		return nil, fmt.Errorf("%w: %s evidence given to the SGX verifier", ErrBadEvidence, e.Backend)
	}
	rep, err := eclient.VerifyRemoteReport(e.Quote)
	if err != nil && !errors.Is(err, attestation.ErrTCBLevelInvalid) {
		return nil, fmt.Errorf("%w: sgx quote: %v", ErrBadEvidence, err)
	}
	return sgxClaims(e, rep)
}

func sgxClaims(e *Evidence, rep attestation.Report) (*Claims, error) {
	if len(rep.Data) < ReportDataSize || string(rep.Data[:ReportDataSize]) != string(e.ReportData) {
		return nil, fmt.Errorf("%w: the quote binds other report data than the evidence declares", ErrBadEvidence)
	}
	if len(rep.UniqueID) != MeasurementSize || len(rep.SignerID) != MeasurementSize {
		return nil, fmt.Errorf("%w: sgx measurement sizes %d/%d", ErrBadEvidence, len(rep.UniqueID), len(rep.SignerID))
	}
	var prod uint64
	if len(rep.ProductID) >= 2 {
		prod = uint64(binary.LittleEndian.Uint16(rep.ProductID)) // ISVPRODID, little-endian in OE's product_id
	}
	tcb := TCBStatus(rep.TCBStatus)
	if tcb > TCBUnknown {
		tcb = TCBUnknown
	}
	return &Claims{Backend: BackendSGX, UniqueID: append(types.Bytes{}, rep.UniqueID...), SignerID: append(types.Bytes{}, rep.SignerID...),
		ProductID: prod, SecurityVersion: uint64(rep.SecurityVersion), Debug: rep.Debug, TCB: tcb,
		ReportData: append(types.Bytes{}, rep.Data[:ReportDataSize]...)}, nil
}
