package mempool

import (
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// BenchmarkRefuseUnderChurn is a node's mempool under overload: full at
// its admission limit with 1,024 senders' transfers at the going fee,
// other validators' transactions still arriving (AddRelayed), and each
// of them followed by a client's transaction refused at the door
// (Refuses, node.refusedEarly). One op is one relayed admission plus one
// refusal. Before the eviction candidates were kept up between scans,
// every refusal after an admission scanned all senders:
//
//	go test -run XXX -bench RefuseUnderChurn ./chain/mempool
func BenchmarkRefuseUnderChurn(b *testing.B) {
	const senders = 1024
	p := New(Config{MaxTotal: 1 << 20, MaxPerAccount: 1 << 20, MaxNonceGap: 1 << 20})
	ks := keys(senders + 1) // the last one is the refused client's
	next := make([]uint64, senders+1)
	to := types.Address{0xee, 2}
	mkTx := func(i int) *types.Tx {
		tx, _ := types.NewTx(types.TxData{ChainID: 1, Nonce: next[i], To: &to, Value: big.NewInt(1),
			CyclesLimit: fees.TransferCycles, MaxFeePerCycle: 20, MaxFeePerCell: 10, TipPerCycle: 1})
		s, err := types.SignTx(tx, ks[i])
		if err != nil {
			b.Fatal(err)
		}
		next[i]++
		return s
	}
	for i := range senders {
		if _, err := p.Add(mkTx(i), nil, rich(), bf); err != nil {
			b.Fatal(err)
		}
	}
	p.SetLimit(senders)
	// Signing is not what is measured: pre-sign the churn.
	relayed := make([]*types.Tx, 0, 4096)
	for k := range cap(relayed) {
		relayed = append(relayed, mkTx(k%senders))
	}
	refused := mkTx(senders)
	b.ResetTimer()
	for i := range b.N {
		if i%len(relayed) == 0 && i > 0 {
			b.StopTimer()
			for k := range relayed {
				relayed[k] = mkTx(k % senders)
			}
			b.StartTimer()
		}
		if _, err := p.AddRelayed(relayed[i%len(relayed)], nil, rich(), bf); err != nil {
			b.Fatal(err)
		}
		if !p.Refuses(refused, nil, bf) {
			b.Fatalf("op %d: a full pool at the going fee took a client's transaction", i)
		}
	}
}
