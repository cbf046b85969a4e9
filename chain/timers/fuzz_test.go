package timers

import (
	"bytes"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// FuzzDecodeTimer: whatever decodes re-encodes to the same bytes, and
// decoding never panics.
func FuzzDecodeTimer(f *testing.F) {
	gba := addr(9)
	for _, tm := range []Timer{
		{ID: types.Hash{1}, Owner: addr(1), Handler: "tick", Target: 5, Deposit: big.NewInt(0)},
		{ID: types.Hash{2}, Owner: addr(2), Handler: "h", Data: []byte{0x82, 0x01, 0x02}, Target: 1 << 40, Interval: 7,
			Deposit: new(big.Int).Lsh(big.NewInt(1), 80), GBA: &gba, Deferrals: 3, CreatedAt: 4},
	} {
		b, err := tm.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x8a})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		tm, err := DecodeTimer(b)
		if err != nil {
			return
		}
		again, err := tm.Encode()
		if err != nil {
			t.Fatalf("decoded record does not encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip changed bytes:\n%x\n%x", b, again)
		}
		if _, err := DecodeTimer(again); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzDecodeBid: same for a GBA's answer, which is untrusted.
func FuzzDecodeBid(f *testing.F) {
	b, _ := (&Bid{CyclesLimit: 1, MaxFeePerCycle: 2, TipPerCycle: 3}).Encode()
	f.Add(b)
	f.Fuzz(func(t *testing.T, in []byte) {
		bid, err := DecodeBid(in)
		if err != nil {
			return
		}
		again, err := bid.Encode()
		if err != nil || !bytes.Equal(again, in) {
			t.Fatalf("bid round trip: %x -> %x (%v)", in, again, err)
		}
	})
}

// FuzzQueueOps runs short seeded op streams (schedules, cancels,
// reschedules, fires, defers) from fuzzed seeds and start heights against
// the reference model, with the full layout check.
func FuzzQueueOps(f *testing.F) {
	f.Add(uint64(1), uint32(1))
	f.Add(uint64(9), uint32(EpochLength-2))
	f.Add(uint64(5), uint32(RingSlots*1000-1))
	f.Fuzz(func(t *testing.T, seed uint64, start uint32) {
		runOps(t, seed, uint64(start)+1, 300, true)
	})
}
