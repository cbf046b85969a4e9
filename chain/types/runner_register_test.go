package types

import (
	"bytes"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
)

// The endpoint is an optional trailing element: registrations without it
// keep the original 12-element encoding, with it they have 13, and an
// explicitly empty endpoint is not canonical.
func TestRunnerRegisterEndpointEncoding(t *testing.T) {
	base := RunnerRegister{ResultKey: make(Bytes, 32), JobTypes: []uint64{2}, RateBase: big.NewInt(1), MaxConcurrentJobs: 4}
	old := runnerRegisterV1{Kind: KindRunnerRegister, ResultKey: base.ResultKey, JobTypes: base.JobTypes, RateBase: base.RateBase, MaxConcurrentJobs: 4}
	oldBytes, err := codec.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	b, err := EncodeInstruction(&base)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, oldBytes) {
		t.Fatalf("without endpoint the encoding changed:\n%x\n%x", b, oldBytes)
	}
	in, err := DecodeInstruction(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := in.(*RunnerRegister); got.Endpoint != "" || got.MaxConcurrentJobs != 4 {
		t.Fatalf("decoded %+v", got)
	}

	with := base
	with.Endpoint = "http://127.0.0.1:7700"
	b2, err := EncodeInstruction(&with)
	if err != nil {
		t.Fatal(err)
	}
	in2, err := DecodeInstruction(b2)
	if err != nil {
		t.Fatal(err)
	}
	if got := in2.(*RunnerRegister); got.Endpoint != with.Endpoint || got.RateBase.Int64() != 1 {
		t.Fatalf("decoded %+v", got)
	}

	empty := runnerRegisterV2{Kind: KindRunnerRegister, ResultKey: base.ResultKey, JobTypes: base.JobTypes, MaxConcurrentJobs: 4}
	eb, err := codec.Marshal(empty)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeInstruction(eb); err == nil {
		t.Fatal("an explicitly empty endpoint decoded")
	}
}
