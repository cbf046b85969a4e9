package verify

import (
	"bytes"
	"slices"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// FuzzVerify feeds arbitrary result bytes from four signing runners through
// MajorityVote and StructuredMatch. Verify must not panic, must partition the
// committed runners into Agreed / Dissented / Missing, and must not depend on
// the order of the reveals.
func FuzzVerify(f *testing.F) {
	f.Add([]byte(`{"k":1,"p":2.5}`), []byte(`{"k":1.0,"p":2.4}`), []byte(`{"k":"x"}`), []byte(`[]`), uint8(0))
	f.Add([]byte(`{"k":{"a":[1,2]},"p":-1}`), []byte(`{"k":{"a":[1,2.0]},"p":1e400}`), []byte(`{"p":"1"}`), []byte(`nul`), uint8(1))
	f.Fuzz(func(t *testing.T, a, b, c, d []byte, mode uint8) {
		var spec *job.JobSpec
		if mode%2 == 0 {
			spec = specFor(job.ModeMajorityVote, 4)
			spec.Verification.VoteField = "/k"
		} else {
			spec = specFor(job.ModeStructuredMatch, 4)
			spec.Verification.QuorumBps = 5000
			spec.Verification.Checks = []job.Check{
				{Kind: job.CheckJSONSchema, Schema: []byte(`{"type":"object"}`)},
				{Kind: job.CheckNumericRange, Field: "/p", Min: "-10", Max: "10"},
				{Kind: job.CheckFieldMajority, Field: "/k"},
				{Kind: job.CheckNumericTolerance, Field: "/p", Tolerance: "0.5"},
			}
		}
		spec.ResultSchema.MaxReturnBytes = 4096
		in := build(spec, []result{{rs[0], string(a), nil}, {rs[1], string(b), nil}, {rs[2], string(c), nil}, {rs[3], string(d), nil}})
		o1, err := Verify(in)
		if err != nil {
			t.Fatalf("honest reveals rejected: %v", err)
		}
		rev := slices.Clone(in.Reveals)
		slices.Reverse(rev)
		in.Reveals = rev
		o2, err := Verify(in)
		if err != nil {
			t.Fatal(err)
		}
		if o1.Accepted != o2.Accepted || !bytes.Equal(o1.Result, o2.Result) || !slices.Equal(o1.Agreed, o2.Agreed) || !slices.Equal(o1.Dissented, o2.Dissented) {
			t.Fatal("outcome depends on reveal order")
		}
		all := append(slices.Clone(o1.Agreed), o1.Dissented...)
		slices.SortFunc(all, cmpAddr)
		if !slices.Equal(all, addrs(rs[0], rs[1], rs[2], rs[3])) {
			t.Fatalf("not a partition: %v", all)
		}
		if o1.Accepted && (len(o1.Agreed) < spec.Verification.Quorum() || o1.ResultHash != types.Keccak256(o1.Result)) {
			t.Fatal("accepted below quorum or wrong hash")
		}
	})
}
