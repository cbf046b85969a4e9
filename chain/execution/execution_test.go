package execution_test

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"path/filepath"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// run applies the same blocks to a fresh store and returns the roots and
// encoded receipts of every block.
func run(t *testing.T, g *genesis.Genesis, blocks [][]*types.Tx) ([]types.Hash, [][]byte) {
	t.Helper()
	st := openStore(t)
	if _, err := st.Commit(g.State(), func(root types.Hash) (*types.Block, []*types.Receipt, error) { return g.Block(root), nil, nil }); err != nil {
		t.Fatal(err)
	}
	ex, err := execution.New(execution.Config{ChainID: g.ChainID, Fees: g.Fees})
	if err != nil {
		t.Fatal(err)
	}
	var roots []types.Hash
	var rcpts [][]byte
	for i, txs := range blocks {
		var res *execution.Result
		var head *types.Header
		if err := st.View(func(v *store.View) error {
			head = v.Head()
			res, err = ex.Apply(context.Background(), v, execution.BlockEnv{Height: head.Height + 1, Timestamp: uint64(i + 1), Proposer: g.Proposer()}, txs, execution.Verify)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		raw := make([]types.Bytes, len(txs))
		for j, tx := range txs {
			raw[j] = tx.Encode()
		}
		blk, err := st.Commit(res.Writes, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
			return &types.Block{Header: types.Header{ChainID: g.ChainID, Height: head.Height + 1, ParentHash: head.Hash(), StateRoot: root,
				TxRoot: types.TxRoot(raw), ReceiptsRoot: types.ReceiptsRoot(res.Receipts), Proposer: g.Proposer()}, Txs: raw}, res.Receipts, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, blk.Header.StateRoot)
		rcpts = append(rcpts, codec.MustMarshal(res.Receipts))
	}
	return roots, rcpts
}

func TestTwoDataDirsAgree(t *testing.T) {
	faucet, _ := crypto.HexToECDSA("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	val := types.Address{0x0a, 0x11}
	g := genesis.Dev(1, val, types.PubkeyToAddress(faucet.PublicKey))
	var blocks [][]*types.Tx
	nonce := uint64(0)
	for b := 0; b < 5; b++ {
		var txs []*types.Tx
		for i := 0; i < 20; i++ {
			to := types.Address{byte(b), byte(i), 0x77}
			tx, _ := types.NewTx(types.TxData{ChainID: g.ChainID, Nonce: nonce, To: &to, Value: big.NewInt(int64(i + 1)),
				CyclesLimit: 15_000, MaxFeePerCycle: 2e9, MaxFeePerCell: 2e9, TipPerCycle: uint64(i)})
			s, _ := types.SignTx(tx, faucet)
			txs = append(txs, s)
			nonce++
		}
		blocks = append(blocks, txs)
	}
	r1, c1 := run(t, g, blocks)
	r2, c2 := run(t, g, blocks)
	for i := range r1 {
		if r1[i] != r2[i] || !bytes.Equal(c1[i], c2[i]) {
			t.Fatalf("block %d differs between data directories", i+1)
		}
	}
	// Verify mode refuses a block with an invalid transaction (nonce reuse).
	st, _ := store.Open(filepath.Join(t.TempDir(), "d.db"))
	defer st.Close()
	st.Commit(g.State(), func(root types.Hash) (*types.Block, []*types.Receipt, error) { return g.Block(root), nil, nil })
	ex, _ := execution.New(execution.Config{ChainID: g.ChainID, Fees: fees.Default()})
	st.View(func(v *store.View) error {
		_, err := ex.Apply(context.Background(), v, execution.BlockEnv{Height: 1}, []*types.Tx{blocks[0][0], blocks[0][0]}, execution.Verify)
		if !errors.Is(err, types.ErrNonceTooLow) {
			t.Fatalf("verify mode: %v", err)
		}
		res, err := ex.Apply(context.Background(), v, execution.BlockEnv{Height: 1}, []*types.Tx{blocks[0][0], blocks[0][0]}, execution.Build)
		if err != nil || len(res.Included) != 1 || len(res.Rejected) != 1 {
			t.Fatalf("build mode: %v", err)
		}
		return nil
	})
}
