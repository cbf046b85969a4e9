package heal

import (
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/system/storage"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/wire"
)

// stripeFixture: 4 stripes of 2+1 shards over relays 1..5, and the
// on-chain placement the writer committed for it (relay 5 left out).
func stripeFixture(t *testing.T) (*wire.StripeMap, *Placement) {
	t.Helper()
	sm := &wire.StripeMap{Volume: [32]byte{0xaa}, Version: 3, K: 2, M: 1}
	for s := range 4 {
		st := wire.Stripe{ShardSize: 4096}
		for i := range 3 {
			st.Shards = append(st.Shards, wire.StripeShard{ID: [32]byte{byte(s), byte(i), 1}, Hash: [32]byte{byte(s), byte(i), 2},
				Relay: [20]byte{byte(1 + (s+i)%5)}})
		}
		sm.Stripes = append(sm.Stripes, st)
	}
	by, err := leaves(sm)
	if err != nil {
		t.Fatal(err)
	}
	pl := &Placement{Version: 3, Sums: map[[20]byte]challenge.Summary{}}
	for r, ls := range by {
		if r == ([20]byte{5}) {
			continue
		}
		sum, err := challenge.Summarize(ls)
		if err != nil {
			t.Fatal(err)
		}
		pl.Sums[r] = sum
	}
	return sm, pl
}

// The instruction the repairer builds is one the Storage Manager accepts:
// proved against the commitment's summary, unproved for a relay the
// commitment left out or a shard moved before.
func TestRepairInstructionPassesChainCheck(t *testing.T) {
	sm, pl := stripeFixture(t)
	by, err := CheckMap(sm, pl)
	if err != nil {
		t.Fatal(err)
	}
	chainPl := &storage.Placement{Version: pl.Version}
	for r, s := range pl.Sums {
		chainPl.Relays = append(chainPl.Relays, types.RelayPlacement{Relay: r, Bytes: s.Bytes, Count: s.Count, ShardsRoot: s.ShardsRoot})
	}
	to := [20]byte{9}
	proved, unproved := 0, 0
	for si := range sm.Stripes {
		st := &sm.Stripes[si]
		for i, sh := range st.Shards {
			rp, err := RepairInstruction(sm, st, i, sh.Relay, to, by, pl, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rp.LeafPath) > 0 {
				proved++
			} else {
				unproved++
			}
			if code, msg := storage.CheckRepair(chainPl, nil, true, true, false, true, rp); code != 0 {
				t.Fatalf("stripe %d shard %d from %x: %d %s", si, i, sh.Relay[:1], code, msg)
			}
			// A forged hash fails the proof (if any).
			bad := *rp
			bad.ShardHash[0] ^= 1
			if code, _ := storage.CheckRepair(chainPl, nil, true, true, false, true, &bad); len(rp.LeafPath) > 0 && code == 0 {
				t.Fatal("a forged leaf passed")
			}
		}
	}
	if proved == 0 || unproved == 0 {
		t.Fatalf("proved %d, unproved %d: both paths must be covered", proved, unproved)
	}
	// A shard moved before moves on from its new holder without a proof.
	st := &sm.Stripes[0]
	moved := map[[32]byte]Move{st.Shards[0].ID: {Origin: st.Shards[0].Relay, Holder: to}}
	rp, err := RepairInstruction(sm, st, 0, to, [20]byte{8}, by, pl, moved)
	if err != nil || len(rp.LeafPath) != 0 {
		t.Fatalf("second move: %+v %v", rp, err)
	}
	mv := &storage.Moved{Origin: st.Shards[0].Relay, Holder: to, Hash: st.Shards[0].Hash, Size: 4096}
	if code, msg := storage.CheckRepair(chainPl, mv, true, true, false, true, rp); code != 0 {
		t.Fatalf("second move: %d %s", code, msg)
	}
}

// A stripe map that does not match the on-chain placement is not used.
func TestCheckMapRejectsMismatch(t *testing.T) {
	sm, pl := stripeFixture(t)
	sm.Stripes[1].Shards[0].Hash[0] ^= 1
	if _, err := CheckMap(sm, pl); !errors.Is(err, ErrStripeMap) {
		t.Fatalf("tampered map: %v", err)
	}
	sm, pl = stripeFixture(t)
	pl.Version++
	if _, err := CheckMap(sm, pl); !errors.Is(err, ErrStripeMap) {
		t.Fatalf("other version: %v", err)
	}
}
