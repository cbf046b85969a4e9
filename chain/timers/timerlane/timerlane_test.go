package timerlane

import (
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/timers"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func TestDecodeTimerArgs(t *testing.T) {
	a, err := decodeTimerArgs(map[any]any{"height": uint64(9), "handler": "tick", "data": []byte{0x01}, "gba": nil})
	if err != nil || a.Height != 9 || a.Handler != "tick" || string(a.Data) != "\x01" || a.GBA != nil {
		t.Fatalf("%+v %v", a, err)
	}
	for _, bad := range []any{
		map[string]any{"height": "9"},
		map[string]any{"handler": 3},
		map[string]any{"data": "x"},
		map[any]any{1: "x"},
		[]any{1},
	} {
		if _, err := decodeTimerArgs(bad); err == nil {
			t.Errorf("accepted %v", bad)
		}
	}
}

// A Gas Bidding Agent may answer with the canonical Bid array or a map.
func TestDecodeBid(t *testing.T) {
	want := timers.Bid{CyclesLimit: 10, CellsLimit: 2, MaxFeePerCycle: 5, MaxFeePerCell: 4, TipPerCycle: 1, TipPerCell: 1}
	enc, err := want.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := decodeBid(enc); !ok || got != want {
		t.Fatalf("array: %+v %v", got, ok)
	}
	m := codec.MustMarshal(map[string]uint64{"cycles_limit": 10, "cells_limit": 2, "max_fee_per_cycle": 5,
		"max_fee_per_cell": 4, "tip_per_cycle": 1, "tip_per_cell": 1})
	if got, ok := decodeBid(m); !ok || got != want {
		t.Fatalf("map: %+v %v", got, ok)
	}
	if _, ok := decodeBid([]byte("not cbor")); ok {
		t.Fatal("garbage decoded as a bid")
	}
}

// Timer receipts have hashes no transaction can have, distinct per timer,
// height and kind.
func TestReceiptHashes(t *testing.T) {
	a, b := types.Hash{1}, types.Hash{2}
	if TimerReceiptHash(a, 5) == TimerReceiptHash(b, 5) || TimerReceiptHash(a, 5) == TimerReceiptHash(a, 6) ||
		TimerReceiptHash(a, 5) == TimerDeferralsHash(5) {
		t.Fatal("timer receipt hashes collide")
	}
}
