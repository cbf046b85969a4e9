package attest_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"testing"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// FuzzDecodeEvidence: whatever decodes re-encodes to the same bytes, and
// Check never panics on it.
func FuzzDecodeEvidence(f *testing.F) {
	s, _ := attest.NewSimulation(ed25519.NewKeyFromSeed(make([]byte, 32)), attest.SimOptions{})
	e, _ := s.Attest(context.Background(), attest.ReportData{1})
	good, _ := e.Encode()
	f.Add(good)
	f.Add([]byte{0x84, 0x01, 0x01, 0x40, 0x40})
	dev := attest.DevPolicy()
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := attest.DecodeEvidence(b)
		if err != nil {
			return
		}
		again, err := ev.Encode()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("round trip: %x → %x (%v)", b, again, err)
		}
		_, _ = attest.Check(&dev, b, attest.ReportData{1})
	})
}

// FuzzDecodePolicy: decoded policies are valid and re-encode identically.
func FuzzDecodePolicy(f *testing.F) {
	p := attest.Policy{SignerID: make([]byte, 32), ProductID: 1, MinSecurityVersion: 2}
	b, _ := p.Encode()
	f.Add(b)
	d := attest.DevPolicy()
	b, _ = d.Encode()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := attest.DecodePolicy(b)
		if err != nil {
			return
		}
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		again := codec.MustMarshal(q)
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip: %x → %x", b, again)
		}
		_ = q.Check(&attest.Claims{Backend: attest.BackendSGX, UniqueID: types.Bytes(make([]byte, 32))})
	})
}
