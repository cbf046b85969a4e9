package node_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

const benchBatch = 1000

// BenchmarkTransferPipeline measures transfers through the full node: each
// iteration submits 1,000 pre-signed transfers over the HTTP API (SDK),
// produces blocks until all are included (execution, state root, bbolt
// commit with fsync), and fetches every receipt over HTTP. Reported as
// transfers per second.
func BenchmarkTransferPipeline(b *testing.B) {
	d := nodetest.New(b)
	srv := d.Serve(b, 0)
	c := sdk.New(srv.URL)
	ctx := context.Background()
	senders := make([]*ecdsa.PrivateKey, 50)
	nonces := make([]uint64, len(senders))
	for i := range senders {
		senders[i], _ = crypto.GenerateKey()
		if _, err := d.Node.Faucet(types.PubkeyToAddress(senders[i].PublicKey), sdk.MustCBY("1000")); err != nil {
			b.Fatal(err)
		}
	}
	d.Produce(b)
	chainID := d.Node.Genesis().ChainID
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		txs := make([]*types.Tx, 0, benchBatch)
		for k := 0; k < benchBatch; k++ {
			i := k % len(senders)
			to := types.Address{0xbe, byte(k), byte(k >> 8)}
			tx, _ := types.NewTx(types.TxData{ChainID: chainID, Nonce: nonces[i], To: &to, Value: big.NewInt(1),
				CyclesLimit: fees.TransferCycles, MaxFeePerCycle: 1e11, MaxFeePerCell: 1e11, TipPerCycle: 1})
			s, _ := types.SignTx(tx, senders[i])
			txs = append(txs, s)
			nonces[i]++
		}
		b.StartTimer()
		for _, tx := range txs {
			// Decode the wire form again, as a fresh client submission would.
			fresh, _ := types.DecodeTx(tx.Encode())
			if _, err := c.Chain().Submit(ctx, fresh); err != nil {
				b.Fatal(err)
			}
		}
		included := 0
		for included < benchBatch {
			blk := d.Produce(b)
			included += len(blk.Txs)
		}
		for _, tx := range txs {
			r, err := c.Chain().Tx(ctx, tx.Hash())
			if err != nil || r.Receipt == nil {
				b.Fatalf("receipt: %v", err)
			}
		}
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "tx/s")
}

// BenchmarkEcrecoverBaseline is the floor every transfer pays once:
// recovering the sender of 1,000 signed transactions.
func BenchmarkEcrecoverBaseline(b *testing.B) {
	key, _ := crypto.GenerateKey()
	to := types.Address{1}
	raws := make([][]byte, benchBatch)
	for k := range raws {
		tx, _ := types.NewTx(types.TxData{ChainID: 1, Nonce: uint64(k), To: &to, CyclesLimit: fees.TransferCycles})
		s, _ := types.SignTx(tx, key)
		raws[k] = s.Encode()
	}
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		for _, raw := range raws {
			tx, _ := types.DecodeTx(raw)
			if _, err := tx.Sender(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "tx/s")
}
