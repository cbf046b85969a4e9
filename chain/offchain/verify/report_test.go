package verify

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func TestReportSigningMessagePreimage(t *testing.T) {
	jid, res := types.Hash{3}, []byte(`{"a":1}`)
	rep := &Report{Usage: job.Usage{Tokens: 1, WallTimeMs: 2, MemoryBytes: 3}, Fault: FaultExternalFault, ProgressBps: 0x0102}
	m := SigningMessageReport(jid, rs[0].addr, res, nil, rep)
	rh, eh := types.Keccak256(res), types.Keccak256(nil)
	want := append([]byte("cowboy-result-v2:"), jid[:]...)
	want = append(append(append(want, rs[0].addr[:]...), rh[:]...), eh[:]...)
	want = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(want, 1), 2), 3)
	want = append(want, 5, 0x02, 0x01)
	if !bytes.Equal(m, want) {
		t.Fatalf("v2 message\n got %x\nwant %x", m, want)
	}
	if bytes.Equal(m[:17], SigningMessage(jid, rs[0].addr, res, nil)[:17]) {
		t.Fatal("v1 and v2 share a domain")
	}
}

func TestCheckRevealWithReport(t *testing.T) {
	spec := specFor(job.ModeNone, 1)
	jid := spec.JobID
	rep := Report{Usage: job.Usage{Tokens: 10, WallTimeMs: 1500}}
	sig := SignReport(rs[0].key, jid, rs[0].addr, []byte(`{"a":1}`), nil, &rep)
	r := Reveal{Runner: rs[0].addr, Result: []byte(`{"a":1}`), Signature: sig, Report: &rep}
	c := Commitment(r.Result, r.Signature)
	pub := rs[0].key.Public().(ed25519.PublicKey)
	if err := CheckReveal(jid, &r, c, pub); err != nil {
		t.Fatal(err)
	}
	// Every field of the report is signed; dropping it is detected too.
	for name, mut := range map[string]func(*Report){
		"tokens":   func(p *Report) { p.Usage.Tokens++ },
		"wall":     func(p *Report) { p.Usage.WallTimeMs-- },
		"memory":   func(p *Report) { p.Usage.MemoryBytes = 1 },
		"fault":    func(p *Report) { p.Fault = FaultActorFault },
		"progress": func(p *Report) { p.Fault, p.ProgressBps = FaultImpossibleJob, 1 },
	} {
		bad := rep
		mut(&bad)
		r2 := r
		r2.Report = &bad
		if err := CheckReveal(jid, &r2, c, pub); !errors.Is(err, ErrBadReveal) {
			t.Fatalf("%s: want ErrBadReveal, got %v", name, err)
		}
	}
	r3 := r
	r3.Report = nil
	if err := CheckReveal(jid, &r3, c, pub); !errors.Is(err, ErrBadReveal) {
		t.Fatalf("report dropped: %v", err)
	}
	// Out-of-range reports are refused even when signed.
	for _, bad := range []Report{{Fault: 9}, {Fault: FaultNone, ProgressBps: 1}, {Fault: FaultImpossibleJob, ProgressBps: 10_001}} {
		sig := SignReport(rs[0].key, jid, rs[0].addr, r.Result, nil, &bad)
		rb := Reveal{Runner: rs[0].addr, Result: r.Result, Signature: sig, Report: &bad}
		if err := CheckReveal(jid, &rb, Commitment(rb.Result, sig), pub); !errors.Is(err, ErrBadReveal) {
			t.Fatalf("report %+v: %v", bad, err)
		}
	}
	// The report round-trips through the canonical encoding.
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeReveal(b)
	if err != nil || back.Report == nil || *back.Report != rep {
		t.Fatalf("round trip %+v %v", back, err)
	}
}

// A fault report carries no result: even mode None, which accepts any
// result within size, must not accept (and so pay) it as one.
func TestFaultReportIsNeverAResult(t *testing.T) {
	for _, mode := range []job.VerificationMode{job.ModeNone, job.ModeEconomicBond, job.ModeMajorityVote} {
		spec := specFor(mode, 1)
		rep := Report{Usage: job.Usage{WallTimeMs: 10}, Fault: FaultExternalFault, ProgressBps: 5000}
		sig := SignReport(rs[0].key, spec.JobID, rs[0].addr, nil, nil, &rep)
		r := Reveal{Runner: rs[0].addr, Signature: sig, Report: &rep}
		in := Input{
			Spec:        spec,
			Commitments: []job.Commitment{{Runner: rs[0].addr, Hash: Commitment(nil, sig)}},
			Keys:        map[types.Address]ed25519.PublicKey{rs[0].addr: rs[0].key.Public().(ed25519.PublicKey)},
			Reveals:     []Reveal{r},
		}
		out, err := Verify(in)
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if out.Accepted || len(out.Invalid) != 1 {
			t.Fatalf("%v: fault report accepted=%v invalid=%v", mode, out.Accepted, out.Invalid)
		}
	}
}
