//go:build ego

package attest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/edgelesssys/ego/attestation"
	"github.com/edgelesssys/ego/attestation/tcbstatus"
)

// TestSGXClaims checks the conversion of a verified EGo report into claims
// and the policy decisions on them (the quote check itself needs SGX
// collateral and runs only on hardware; build with -tags ego,ego_mock_eclient
// elsewhere).
func TestSGXClaims(t *testing.T) {
	rd := bytes.Repeat([]byte{7}, ReportDataSize)
	prod := make([]byte, 16)
	binary.LittleEndian.PutUint16(prod, 3)
	rep := attestation.Report{Data: rd, SecurityVersion: 5, UniqueID: bytes.Repeat([]byte{1}, 32), SignerID: bytes.Repeat([]byte{2}, 32),
		ProductID: prod, TCBStatus: tcbstatus.UpToDate}
	e := &Evidence{Version: Version, Backend: BackendSGX, ReportData: rd, Quote: []byte{1}}
	c, err := sgxClaims(e, rep)
	if err != nil || c.ProductID != 3 || c.SecurityVersion != 5 || c.TCB != TCBUpToDate || c.Backend != BackendSGX {
		t.Fatalf("claims %+v %v", c, err)
	}
	p := Policy{SignerID: rep.SignerID, ProductID: 3, MinSecurityVersion: 5}
	if err := p.Check(c); err != nil {
		t.Fatal(err)
	}
	rep.Debug, rep.TCBStatus = true, tcbstatus.OutOfDate
	c, _ = sgxClaims(e, rep)
	if err := p.Check(c); !errors.Is(err, ErrPolicy) {
		t.Fatalf("debug/outdated accepted: %v", err)
	}
	other := *e
	other.ReportData = make([]byte, ReportDataSize)
	if _, err := sgxClaims(&other, rep); !errors.Is(err, ErrBadEvidence) {
		t.Fatalf("report data mismatch: %v", err)
	}
}
