package execution_test

import (
	"bytes"
	"math/big"
	"slices"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// BenchmarkCanonicalOrder measures the block's seed order over 5,000
// transactions from 500 senders (10 nonces each) against sorting the same
// transactions by hash, in the same run:
//
//	go test -run XXX -bench CanonicalOrder -benchtime 200x ./chain/execution
func BenchmarkCanonicalOrder(b *testing.B) {
	to := types.Address{0xbe, 0xef}
	var txs []*types.Tx
	for _, k := range fundedKeys(500) {
		for n := uint64(0); n < 10; n++ {
			tx, _ := types.NewTx(types.TxData{ChainID: 1, Nonce: n, To: &to, Value: big.NewInt(1), CyclesLimit: 1})
			s, err := types.SignTx(tx, k)
			if err != nil {
				b.Fatal(err)
			}
			s.Sender() // recovered once, as in a block that passed the stateless checks
			txs = append(txs, s)
		}
	}
	seed := types.Keccak256([]byte("seed"))
	b.Run("canonical", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := execution.CanonicalOrder(txs, seed); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline-sort-by-hash", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c := slices.Clone(txs)
			slices.SortFunc(c, func(x, y *types.Tx) int { hx, hy := x.Hash(), y.Hash(); return bytes.Compare(hx[:], hy[:]) })
		}
	})
}
