//go:build !ego

package attest

import (
	"context"
)

// SGXSupported reports whether this binary verifies (and, inside an EGo
// enclave, produces) SGX evidence. Build with `-tags ego` for SGX support.
const SGXSupported = false

// SGX is the Intel SGX Attester; this build has no SGX support.
type SGX struct{}

// NewSGX fails with ErrNoSGX: this binary was built without `-tags ego`.
func NewSGX() (*SGX, error) { return nil, ErrNoSGX }

// Backend is BackendSGX.
func (*SGX) Backend() Backend { return BackendSGX }

// Attest fails with ErrNoSGX.
func (*SGX) Attest(context.Context, ReportData) (*Evidence, error) { return nil, ErrNoSGX }

type sgxVerifier struct{}

// Verify fails with ErrNoSGX: SGX evidence cannot be checked by this build.
func (sgxVerifier) Verify(*Evidence) (*Claims, error) { return nil, ErrNoSGX }
