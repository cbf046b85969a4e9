package execution_test

import (
	"bytes"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs/joblane"
	registry "github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// FuzzOffchainRecords: every stored off-chain record type decodes only
// canonical bytes, and re-encodes what it decoded byte for byte.
func FuzzOffchainRecords(f *testing.F) {
	seeds := []any{
		&registry.Delegation{Delegator: types.Address{1}, Amount: big.NewInt(5), Since: 7},
		&registry.Tranche{Owner: types.Address{1}, Runner: types.Address{2}, Amount: new(big.Int).Lsh(big.NewInt(1), 100), Release: 9},
		&jobs.PendingCallback{JobID: types.Hash{3}, Status: "verified", Actor: types.Address{4}, Handler: "cb", Payload: types.Bytes{0x80}, QueuedAt: 2},
		&[]joblane.CallbackDelivery{{Status: "failed", Height: 3, OK: false, Error: "x", Hash: types.Hash{5}}},
		&joblane.CallbackStats{Delivered: 3, Failed: 1},
		&registry.Runner{Address: types.Address{6}, Stake: big.NewInt(1), Delegated: big.NewInt(2), CommissionBps: 500, Status: 1},
	}
	for i, s := range seeds {
		f.Add(uint8(i), codec.MustMarshal(s))
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		var v any
		switch kind % 6 {
		case 0:
			v = &registry.Delegation{}
		case 1:
			v = &registry.Tranche{}
		case 2:
			v = &jobs.PendingCallback{}
		case 3:
			v = &[]joblane.CallbackDelivery{}
		case 4:
			v = &joblane.CallbackStats{}
		default:
			v = &registry.Runner{}
		}
		if err := codec.Unmarshal(data, v); err != nil {
			return
		}
		b, err := codec.Marshal(v)
		if err != nil {
			t.Fatalf("re-encode %T: %v", v, err)
		}
		if !bytes.Equal(b, data) {
			t.Fatalf("%T: decoded %x, re-encoded %x", v, data, b)
		}
	})
}
