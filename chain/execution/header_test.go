package execution_test

import (
	"bytes"
	"crypto/ecdsa"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// BlockEncoded hashes each receipt from the one encoding it hands to the
// store: the roots must be exactly those of types.ReceiptsRoot and
// types.TxRoot (consensus), including receipts whose error texts the hash
// leaves out, and the encodings exactly codec.Marshal's.
func TestBlockEncodedMatchesRoots(t *testing.T) {
	one := uint64(1)
	to := types.Address{7}
	receipts := []*types.Receipt{
		{TxHash: types.Hash{1}, Status: types.ReceiptSuccess, CyclesUsed: 21000, FeePaid: big.NewInt(5), Burned: big.NewInt(4), Tip: big.NewInt(1)},
		{TxHash: types.Hash{2}, Status: types.ReceiptFailed, Error: "insufficient balance", Code: 3, FeePaid: big.NewInt(9)},
		{TxHash: types.Hash{3}, Status: types.ReceiptSuccess, Created: &to, Return: types.Bytes{1, 2},
			Events:   []types.Event{{Emitter: to, Topic: "t", Data: types.Bytes{0xa0}}},
			Messages: []types.MessageRecord{{To: to, Handler: "h", Value: big.NewInt(1), Parent: -1}}},
		{TxHash: types.Hash{4}, Status: types.ReceiptFailed, Code: 5, FailedMessage: &one,
			Messages: []types.MessageRecord{{To: to, Handler: "a", Parent: -1}, {To: to, Handler: "b", Status: types.ReceiptFailed, Error: "boom", Code: 7}}},
		{TxHash: types.Hash{5}, Status: types.ReceiptSuccess, Messages: []types.MessageRecord{}},
	}
	var txs []*types.Tx
	for i := range 3 {
		key, _ := ecdsa.GenerateKey(crypto.S256(), bytes.NewReader(bytes.Repeat([]byte{byte(i + 1)}, 64)))
		tx, err := types.NewTx(types.TxData{ChainID: 9, Nonce: uint64(i), To: &to, Value: big.NewInt(1),
			CyclesLimit: fees.TransferCycles, MaxFeePerCycle: 10, MaxFeePerCell: 10})
		if err != nil {
			t.Fatal(err)
		}
		if tx, err = types.SignTx(tx, key); err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
	}
	res := &execution.Result{Included: txs, Receipts: receipts}
	parent := &types.Header{ChainID: 9, Height: 4}
	env := execution.BlockEnv{Height: 5, Timestamp: 5000}
	b, encoded := res.BlockEncoded(9, parent, env, types.Hash{0xaa})
	if b.Header.ReceiptsRoot != types.ReceiptsRoot(receipts) {
		t.Fatalf("receipts root %s, types.ReceiptsRoot gives %s", b.Header.ReceiptsRoot, types.ReceiptsRoot(receipts))
	}
	if want := types.TxRoot(b.Txs); b.Header.TxRoot != want || want == (types.Hash{}) {
		t.Fatalf("tx root %s, types.TxRoot gives %s", b.Header.TxRoot, want)
	}
	if len(encoded) != len(receipts) {
		t.Fatalf("%d encodings for %d receipts", len(encoded), len(receipts))
	}
	for i, r := range receipts {
		if want := codec.MustMarshal(r); !bytes.Equal(encoded[i], want) {
			t.Fatalf("receipt %d encoded as %x, codec gives %x", i, encoded[i], want)
		}
	}
	if res.Block(9, parent, env, types.Hash{0xaa}).Hash() != b.Hash() {
		t.Fatal("Block and BlockEncoded disagree")
	}
}
