package joblane

import (
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
)

func TestSpecFromArgs(t *testing.T) {
	s, err := specFromArgs(map[any]any{"job_type": uint64(job.JobTypeHTTP), "input": "https://x", "max_price": uint64(100),
		"handler": "on_result", "runners": uint64(3), "required_domains": []any{"b.example", "a.example", "b.example"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxPrice.Cmp(big.NewInt(100)) != 0 || s.Callback.Handler != "on_result" || s.Verification.Runners != 3 ||
		string(s.Input) != "https://x" || len(s.RequiredDomains) != 2 || s.RequiredDomains[0] != "a.example" {
		t.Fatalf("%+v", s)
	}
	if s.TimeoutBlocks != 20 || s.ResultSchema.MaxReturnBytes != 4096 {
		t.Fatalf("defaults: %+v", s)
	}
	for name, bad := range map[string]map[string]any{
		"unknown field":     {"colour": "red"},
		"runners too large": {"runners": uint64(256)},
		"tee_required":      {"tee_required": "yes"},
		"callback_actor":    {"callback_actor": []byte{1, 2}},
		"spec beside":       {"spec": []byte{0x80}, "tip": uint64(1)},
	} {
		if _, err := specFromArgs(bad); err == nil {
			t.Errorf("%s: accepted %v", name, bad)
		}
	}
}

func TestReceiptHashes(t *testing.T) {
	id := [32]byte{1}
	if JobCallbackReceiptHash(id, "verified", 5) == JobCallbackReceiptHash(id, "failed", 5) ||
		JobCallbackReceiptHash(id, "verified", 5) == JobSweepReceiptHash(5) {
		t.Fatal("job lane receipt hashes collide")
	}
}
