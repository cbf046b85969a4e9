package attest_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func sim(t testing.TB, o attest.SimOptions) *attest.Simulation {
	t.Helper()
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	s, err := attest.NewSimulation(k, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func evidence(t testing.TB, a attest.Attester, rd attest.ReportData) []byte {
	t.Helper()
	e, err := a.Attest(context.Background(), rd)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSimulationRoundTrip(t *testing.T) {
	s := sim(t, attest.SimOptions{ProductID: 7, SecurityVersion: 3})
	runner := types.Address{1}
	rk, _, _ := ed25519.GenerateKey(rand.Reader)
	sk, _ := attest.GenerateSealKey(rand.Reader)
	rd := attest.ReportDataForKey(runner, rk, sk.PublicKey().Bytes())
	ev := evidence(t, s, rd)
	dev := attest.DevPolicy()
	c, err := attest.Check(&dev, ev, rd)
	if err != nil {
		t.Fatal(err)
	}
	if c.Backend != attest.BackendSimulation || !bytes.Equal(c.UniqueID, s.Measurement()) || c.ProductID != 7 || c.SecurityVersion != 3 || c.Debug {
		t.Fatalf("claims %+v", c)
	}
	// Canonical encoding round trip, and the SIMULATION tag is visible in the bytes.
	e, err := attest.DecodeEvidence(ev)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := e.Encode()
	if !bytes.Equal(again, ev) || !bytes.Contains(ev, []byte(attest.SimulationTag)) || e.Backend.String() != "SIMULATION" {
		t.Fatalf("encoding: %x", ev)
	}
	// A pinned dev policy matching the measurement also passes.
	pinned := attest.Policy{UniqueID: s.Measurement(), AllowSimulation: true}
	if _, err := attest.Check(&pinned, ev, rd); err != nil {
		t.Fatal(err)
	}
	other := attest.Policy{UniqueID: make([]byte, 32), AllowSimulation: true}
	if _, err := attest.Check(&other, ev, rd); !errors.Is(err, attest.ErrPolicy) {
		t.Fatalf("other measurement: %v", err)
	}
}

func TestTamperedEvidence(t *testing.T) {
	s := sim(t, attest.SimOptions{})
	rd := attest.ReportDataForResult(types.Address{2}, types.Hash{3}, types.Hash{4})
	dev := attest.DevPolicy()
	e, _ := s.Attest(context.Background(), rd)

	mutate := map[string]func(e *attest.Evidence){
		"report data": func(e *attest.Evidence) { e.ReportData[0] ^= 1 },
		"quote byte":  func(e *attest.Evidence) { e.Quote[len(e.Quote)-1] ^= 1 },
		"claims": func(e *attest.Evidence) {
			var r attest.SimReport
			if err := codec.Unmarshal(e.Quote, &r); err != nil {
				t.Fatal(err)
			}
			r.SecurityVersion = 99 // signed by the same key, but the signature covers the claims
			e.Quote = codec.MustMarshal(&r)
		},
		"tag": func(e *attest.Evidence) {
			var r attest.SimReport
			codec.Unmarshal(e.Quote, &r)
			r.Tag = "HARDWARE"
			e.Quote = codec.MustMarshal(&r)
		},
		"version": func(e *attest.Evidence) { e.Version = 2 },
		"backend": func(e *attest.Evidence) { e.Backend = 9 },
	}
	for name, f := range mutate {
		c := *e
		c.ReportData = bytes.Clone(e.ReportData)
		c.Quote = bytes.Clone(e.Quote)
		f(&c)
		b, _ := c.Encode()
		if _, err := attest.Check(&dev, b, rd); !errors.Is(err, attest.ErrBadEvidence) && !errors.Is(err, attest.ErrReportData) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Non-canonical and oversized encodings.
	good, _ := e.Encode()
	if _, err := attest.DecodeEvidence(append(good, 0)); !errors.Is(err, attest.ErrBadEvidence) {
		t.Fatalf("trailing byte: %v", err)
	}
	if _, err := attest.DecodeEvidence(make([]byte, attest.MaxEvidenceBytes+1)); !errors.Is(err, attest.ErrBadEvidence) {
		t.Fatalf("oversized: %v", err)
	}
}

func TestWrongReportData(t *testing.T) {
	s := sim(t, attest.SimOptions{})
	runner := types.Address{5}
	rk, _, _ := ed25519.GenerateKey(rand.Reader)
	sk, _ := attest.GenerateSealKey(rand.Reader)
	rd := attest.ReportDataForKey(runner, rk, sk.PublicKey().Bytes())
	ev := evidence(t, s, rd)
	dev := attest.DevPolicy()
	rk2, _, _ := ed25519.GenerateKey(rand.Reader)
	for name, want := range map[string]attest.ReportData{
		"other runner":     attest.ReportDataForKey(types.Address{6}, rk, sk.PublicKey().Bytes()),
		"other result key": attest.ReportDataForKey(runner, rk2, sk.PublicKey().Bytes()),
		"other seal key":   attest.ReportDataForKey(runner, rk, make([]byte, 32)),
		"result binding":   attest.ReportDataForResult(runner, types.Hash{}, types.Hash{}),
	} {
		if _, err := attest.Check(&dev, ev, want); !errors.Is(err, attest.ErrReportData) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Result bindings differ by job, result and runner.
	a := attest.ReportDataForResult(runner, types.Hash{1}, types.Hash{2})
	for _, b := range []attest.ReportData{attest.ReportDataForResult(runner, types.Hash{1}, types.Hash{3}),
		attest.ReportDataForResult(runner, types.Hash{4}, types.Hash{2}), attest.ReportDataForResult(types.Address{9}, types.Hash{1}, types.Hash{2})} {
		if a == b {
			t.Fatal("result binding collision")
		}
	}
}

func TestPolicyMatrix(t *testing.T) {
	uid := bytes.Repeat([]byte{0xaa}, 32)
	sid := bytes.Repeat([]byte{0xbb}, 32)
	base := attest.Claims{Backend: attest.BackendSGX, UniqueID: uid, SignerID: sid, ProductID: 3, SecurityVersion: 5, TCB: attest.TCBUpToDate}
	cases := []struct {
		name   string
		policy attest.Policy
		claims func(c *attest.Claims)
		ok     bool
	}{
		{"unique id match", attest.Policy{UniqueID: uid}, nil, true},
		{"unique id mismatch", attest.Policy{UniqueID: sid}, nil, false},
		{"signer+product+svn", attest.Policy{SignerID: sid, ProductID: 3, MinSecurityVersion: 5}, nil, true},
		{"svn below minimum", attest.Policy{SignerID: sid, ProductID: 3, MinSecurityVersion: 6}, nil, false},
		{"wrong product", attest.Policy{SignerID: sid, ProductID: 4}, nil, false},
		{"wrong signer", attest.Policy{SignerID: uid, ProductID: 3}, nil, false},
		{"debug refused", attest.Policy{UniqueID: uid}, func(c *attest.Claims) { c.Debug = true }, false},
		{"debug allowed", attest.Policy{UniqueID: uid, AllowDebug: true}, func(c *attest.Claims) { c.Debug = true }, true},
		{"outdated refused", attest.Policy{UniqueID: uid}, func(c *attest.Claims) { c.TCB = attest.TCBOutOfDate }, false},
		{"sw hardening refused", attest.Policy{UniqueID: uid}, func(c *attest.Claims) { c.TCB = attest.TCBSWHardeningNeeded }, false},
		{"outdated allowed", attest.Policy{UniqueID: uid, AllowOutdatedTCB: true}, func(c *attest.Claims) { c.TCB = attest.TCBOutOfDate }, true},
		{"revoked always refused", attest.Policy{UniqueID: uid, AllowOutdatedTCB: true}, func(c *attest.Claims) { c.TCB = attest.TCBRevoked }, false},
		{"simulation under production policy", attest.Policy{UniqueID: uid, AllowDebug: true, AllowOutdatedTCB: true},
			func(c *attest.Claims) { c.Backend = attest.BackendSimulation }, false},
		{"simulation under dev policy", attest.DevPolicy(), func(c *attest.Claims) { c.Backend = attest.BackendSimulation; c.Debug = true }, true},
	}
	for _, tc := range cases {
		c := base
		if tc.claims != nil {
			tc.claims(&c)
		}
		if err := tc.policy.Validate(); err != nil {
			t.Fatalf("%s: policy invalid: %v", tc.name, err)
		}
		err := tc.policy.Check(&c)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, attest.ErrPolicy)) {
			t.Errorf("%s: got %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	// Shapes: a production policy must pin an id; product/svn need a signer.
	for _, p := range []attest.Policy{{}, {AllowDebug: true}, {UniqueID: uid[:31]}, {ProductID: 1, UniqueID: uid}, {SignerID: sid, MinSecurityVersion: 1 << 16}} {
		if err := p.Validate(); !errors.Is(err, attest.ErrPolicy) {
			t.Errorf("policy %+v: %v", p, err)
		}
	}
	// End to end: simulated evidence under every non-dev policy is refused
	// before verification, whatever its claims.
	s := sim(t, attest.SimOptions{UniqueID: uid, SignerID: sid, ProductID: 3, SecurityVersion: 5})
	rd := attest.ReportDataForResult(types.Address{1}, types.Hash{1}, types.Hash{1})
	ev := evidence(t, s, rd)
	for _, p := range []attest.Policy{{UniqueID: uid}, {SignerID: sid, ProductID: 3}, {UniqueID: uid, AllowDebug: true, AllowOutdatedTCB: true}} {
		_, err := attest.Check(&p, ev, rd)
		if !errors.Is(err, attest.ErrPolicy) || !strings.Contains(err.Error(), "SIMULATION") {
			t.Errorf("policy %+v accepted simulation: %v", p, err)
		}
	}
	// Policy encoding and id.
	p := attest.Policy{SignerID: sid, ProductID: 3, MinSecurityVersion: 2}
	b, _ := p.Encode()
	q, err := attest.DecodePolicy(b)
	if err != nil || q.ID() != p.ID() {
		t.Fatalf("policy round trip %v", err)
	}
}

func TestSGXWithoutSupport(t *testing.T) {
	if attest.SGXSupported {
		t.Skip("built with SGX support")
	}
	e := &attest.Evidence{Version: attest.Version, Backend: attest.BackendSGX, ReportData: make([]byte, 64), Quote: []byte{1, 2, 3}}
	b, _ := e.Encode()
	p := attest.Policy{UniqueID: make([]byte, 32)}
	if _, err := attest.Check(&p, b, attest.ReportData{}); !errors.Is(err, attest.ErrNoSGX) || !strings.Contains(err.Error(), "built without SGX support") {
		t.Fatalf("sgx without support: %v", err)
	}
	if _, err := attest.NewSGX(); !errors.Is(err, attest.ErrNoSGX) {
		t.Fatal(err)
	}
}

func TestSealing(t *testing.T) {
	owner, runner := types.Address{1}, types.Address{2}
	enc, _ := attest.GenerateSealKey(rand.Reader)
	dek, ct, err := attest.EncryptSecret(rand.Reader, []byte("api-key-123"), attest.SecretAAD(owner, "openai"))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := attest.Seal(rand.Reader, enc.PublicKey().Bytes(), dek, attest.GrantAAD(owner, "openai", runner, enc.PublicKey().Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := attest.OpenSecret(enc, owner, "openai", runner, sealed, ct)
	if err != nil || string(pt) != "api-key-123" {
		t.Fatalf("open: %q %v", pt, err)
	}
	other, _ := attest.GenerateSealKey(rand.Reader)
	for name, f := range map[string]func() ([]byte, error){
		"other key": func() ([]byte, error) { return attest.OpenSecret(other, owner, "openai", runner, sealed, ct) },
		"other runner": func() ([]byte, error) {
			return attest.OpenSecret(enc, owner, "openai", types.Address{3}, sealed, ct)
		},
		"other name": func() ([]byte, error) { return attest.OpenSecret(enc, owner, "anthropic", runner, sealed, ct) },
		"tampered ct": func() ([]byte, error) {
			c := bytes.Clone(ct)
			c[len(c)-1] ^= 1
			return attest.OpenSecret(enc, owner, "openai", runner, sealed, c)
		},
		"truncated box": func() ([]byte, error) { return attest.OpenSecret(enc, owner, "openai", runner, sealed[:10], ct) },
	} {
		if _, err := f(); !errors.Is(err, attest.ErrSeal) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Derived owner keys are stable and label-separated.
	seed := bytes.Repeat([]byte{7}, 32)
	a, _ := attest.SealKeyFromSeed(seed, "owner")
	b, _ := attest.SealKeyFromSeed(seed, "owner")
	c, _ := attest.SealKeyFromSeed(seed, "other")
	if !a.Equal(b) || a.Equal(c) {
		t.Fatal("derived seal keys")
	}
}

func BenchmarkVerifySimulation(b *testing.B) {
	s := sim(b, attest.SimOptions{})
	rd := attest.ReportDataForResult(types.Address{1}, types.Hash{2}, types.Hash{3})
	ev := evidence(b, s, rd)
	dev := attest.DevPolicy()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := attest.Check(&dev, ev, rd); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEd25519Verify is the baseline: one plain Ed25519 verification of
// a message of the same size as a simulated report's signed message.
func BenchmarkEd25519Verify(b *testing.B) {
	pub, k, _ := ed25519.GenerateKey(rand.Reader)
	msg := make([]byte, 300)
	sig := ed25519.Sign(k, msg)
	b.ReportAllocs()
	for b.Loop() {
		if !ed25519.Verify(pub, msg, sig) {
			b.Fatal("verify")
		}
	}
}

// BenchmarkSimulationVsEd25519 interleaves a full Check of simulated
// evidence with a plain Ed25519 verification, so that both see the same
// machine load, and reports their time ratio.
func BenchmarkSimulationVsEd25519(b *testing.B) {
	s := sim(b, attest.SimOptions{})
	rd := attest.ReportDataForResult(types.Address{1}, types.Hash{2}, types.Hash{3})
	ev := evidence(b, s, rd)
	dev := attest.DevPolicy()
	pub, k, _ := ed25519.GenerateKey(rand.Reader)
	msg := make([]byte, 300)
	sig := ed25519.Sign(k, msg)
	var tSim, tEd time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := attest.Check(&dev, ev, rd); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if !ed25519.Verify(pub, msg, sig) {
			b.Fatal("verify")
		}
		tSim, tEd = tSim+t1.Sub(t0), tEd+time.Since(t1)
	}
	b.ReportMetric(float64(tSim)/float64(b.N), "sim-ns/op")
	b.ReportMetric(float64(tEd)/float64(b.N), "ed25519-ns/op")
	b.ReportMetric(float64(tSim)/float64(tEd), "ratio")
}
