package node_test

import (
	"crypto/ecdsa"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/mempool"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

func transferTx(t *testing.T, d *nodetest.Devnet, key *ecdsa.PrivateKey, nonce uint64, to types.Address, value *big.Int, tip uint64) *types.Tx {
	t.Helper()
	var bf fees.Basefees
	if err := d.Node.Store().View(func(v *store.View) error {
		var err error
		bf, err = execution.Basefees(v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	tx, err := types.NewTx(types.TxData{ChainID: d.Node.Genesis().ChainID, Nonce: nonce, To: &to, Value: value,
		CyclesLimit: fees.TransferCycles, MaxFeePerCycle: 3*bf.Cycle + tip, MaxFeePerCell: 3 * bf.Cell, TipPerCycle: tip})
	if err != nil {
		t.Fatal(err)
	}
	s, err := types.SignTx(tx, key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func balance(t *testing.T, d *nodetest.Devnet, a types.Address) *big.Int {
	t.Helper()
	var b *big.Int
	if err := d.Node.Store().View(func(v *store.View) error {
		acc, err := state.ReadAccount(v, a)
		b = acc.Balance
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return b
}

func audit(t *testing.T, d *nodetest.Devnet) *node.Supply {
	t.Helper()
	var s *node.Supply
	if err := d.Node.Store().View(func(v *store.View) (err error) {
		s, err = node.AuditSupply(v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTransfersConserveSupply sends random transfers between random
// accounts and checks the supply law, fees, tips and nonces at every height.
func TestTransfersConserveSupply(t *testing.T) {
	d := nodetest.New(t)
	faucet := types.PubkeyToAddress(d.Faucet.PublicKey)
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]*ecdsa.PrivateKey, 5)
	nonces := make([]uint64, len(keys))
	var fnonce uint64
	for i := range keys {
		keys[i], _ = crypto.GenerateKey()
		tx := transferTx(t, d, d.Faucet, fnonce, types.PubkeyToAddress(keys[i].PublicKey), big.NewInt(1e18), 2)
		fnonce++
		if _, err := d.Node.SubmitTx(tx.Encode()); err != nil {
			t.Fatal(err)
		}
	}
	valBefore := balance(t, d, d.Validator)
	d.Produce(t)
	audit(t, d)
	tips := new(big.Int)
	for h := 0; h < 20; h++ {
		for k := 0; k < 10; k++ {
			i, j := rng.IntN(len(keys)), rng.IntN(len(keys))
			tx := transferTx(t, d, keys[i], nonces[i], types.PubkeyToAddress(keys[j].PublicKey), big.NewInt(rng.Int64N(1e15)), uint64(rng.IntN(5)))
			if _, err := d.Node.SubmitTx(tx.Encode()); err != nil {
				t.Fatalf("submit: %v", err)
			}
			nonces[i]++
		}
		blk := d.Produce(t)
		if len(blk.Txs) != 10 {
			t.Fatalf("height %d: %d txs included, want 10", blk.Header.Height, len(blk.Txs))
		}
		s := audit(t, d)
		if s.Burned.Sign() <= 0 {
			t.Fatal("nothing burned")
		}
		if err := d.Node.Store().View(func(v *store.View) error {
			rs, err := v.Receipts(blk.Header.Height)
			for _, r := range rs {
				if r.Status != types.ReceiptSuccess || r.CyclesUsed != fees.TransferCycles {
					t.Fatalf("receipt %+v", r)
				}
				want := fees.Settle(mustDecode(t, blk, r.TxHash), fees.Basefees{Cycle: blk.Header.BasefeeCycle, Cell: blk.Header.BasefeeCell}, r.CyclesUsed, r.CellsUsed)
				if want.Fee.Cmp(r.FeePaid) != 0 || want.Tip.Cmp(r.Tip) != 0 {
					t.Fatalf("fee %s/%s tip %s/%s", r.FeePaid, want.Fee, r.Tip, want.Tip)
				}
				tips.Add(tips, r.Tip)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// The validator earned exactly the tips of the random transfers (plus the funding block's).
	got := new(big.Int).Sub(balance(t, d, d.Validator), valBefore)
	if got.Cmp(tips) < 0 {
		t.Fatalf("validator earned %s, tips were %s", got, tips)
	}
	_ = faucet
}

func mustDecode(t *testing.T, b *types.Block, h types.Hash) *types.Tx {
	for _, raw := range b.Txs {
		if types.Keccak256(raw) == h {
			tx, err := types.DecodeTx(raw)
			if err != nil {
				t.Fatal(err)
			}
			return tx
		}
	}
	t.Fatalf("tx %s not in block", h)
	return nil
}

func TestSubmitRejections(t *testing.T) {
	d := nodetest.New(t)
	poor, _ := crypto.GenerateKey()
	to := types.PubkeyToAddress(poor.PublicKey)
	ok := transferTx(t, d, d.Faucet, 0, to, big.NewInt(1), 1)
	if _, err := d.Node.SubmitTx(ok.Encode()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		tx   func() []byte
		want error
	}{
		{"duplicate", func() []byte { return ok.Encode() }, mempool.ErrAlreadyKnown},
		{"underpriced replacement", func() []byte { return transferTx(t, d, d.Faucet, 0, to, big.NewInt(2), 1).Encode() }, mempool.ErrUnderpriced},
		{"nonce gap", func() []byte { return transferTx(t, d, d.Faucet, 1000, to, big.NewInt(1), 1).Encode() }, types.ErrNonceGap},
		{"insufficient balance", func() []byte { return transferTx(t, d, poor, 0, to, big.NewInt(1), 1).Encode() }, types.ErrInsufficientBalance},
		{"garbage", func() []byte { return []byte{0xff, 0x00} }, types.ErrMalformedTx},
		{"wrong chain", func() []byte {
			tx, _ := types.NewTx(types.TxData{ChainID: 99, To: &to, CyclesLimit: fees.TransferCycles})
			s, _ := types.SignTx(tx, d.Faucet)
			return s.Encode()
		}, types.ErrWrongChainID},
		{"unsigned", func() []byte {
			tx, _ := types.NewTx(types.TxData{ChainID: d.Node.Genesis().ChainID, To: &to, CyclesLimit: fees.TransferCycles})
			return tx.Encode()
		}, types.ErrMissingSignature},
		{"limits above maxima", func() []byte {
			tx, _ := types.NewTx(types.TxData{ChainID: d.Node.Genesis().ChainID, To: &to, CyclesLimit: 1 << 40})
			s, _ := types.SignTx(tx, d.Faucet)
			return s.Encode()
		}, types.ErrLimitsExceeded},
		{"to reserved", func() []byte {
			r := types.TreasuryAddress
			tx, _ := types.NewTx(types.TxData{ChainID: d.Node.Genesis().ChainID, To: &r, CyclesLimit: fees.TransferCycles, MaxFeePerCycle: 1e12})
			s, _ := types.SignTx(tx, d.Faucet)
			return s.Encode()
		}, types.ErrReservedAddress},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := d.Node.SubmitTx(c.tx())
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	// A higher-paying replacement wins, and only it is included.
	d0 := transferTx(t, d, d.Faucet, 0, to, big.NewInt(3), 10).Data()
	d0.MaxFeePerCycle *= 2
	d0.Signature = nil
	unsigned, _ := types.NewTx(d0)
	better, _ := types.SignTx(unsigned, d.Faucet)
	if _, err := d.Node.SubmitTx(better.Encode()); err != nil {
		t.Fatal(err)
	}
	blk := d.Produce(t)
	if len(blk.Txs) != 1 || types.Keccak256(blk.Txs[0]) != better.Hash() {
		t.Fatal("replacement not included")
	}
	if balance(t, d, to).Int64() != 3 {
		t.Fatal("replacement value not applied")
	}
	// The node keeps producing and nothing was lost.
	d.Produce(t)
	audit(t, d)
}

func TestRestartKeepsChain(t *testing.T) {
	d := nodetest.New(t)
	to := types.Address{0xaa}
	for i := 0; i < 3; i++ {
		tx := transferTx(t, d, d.Faucet, uint64(i), to, big.NewInt(7), 1)
		if _, err := d.Node.SubmitTx(tx.Encode()); err != nil {
			t.Fatal(err)
		}
		d.Produce(t)
	}
	head, _ := d.Node.Store().Head()
	d.Reopen(t)
	h2, _ := d.Node.Store().Head()
	if h2.Hash() != head.Hash() {
		t.Fatal("head changed across restart")
	}
	if balance(t, d, to).Int64() != 21 {
		t.Fatal("balance lost")
	}
	d.Produce(t)
	audit(t, d)
}

// A transaction whose fee cap is below the basefee waits in the pool, and
// is included once the basefee falls to it.
func TestLowFeeCapWaits(t *testing.T) {
	d := nodetest.New(t)
	to := types.Address{0xab}
	var bf fees.Basefees
	d.Node.Store().View(func(v *store.View) (err error) { bf, err = execution.Basefees(v); return })
	tx, _ := types.NewTx(types.TxData{ChainID: d.Node.Genesis().ChainID, To: &to, Value: big.NewInt(9),
		CyclesLimit: fees.TransferCycles, MaxFeePerCycle: bf.Cycle * 6 / 10, MaxFeePerCell: bf.Cell})
	s, _ := types.SignTx(tx, d.Faucet)
	if _, err := d.Node.SubmitTx(s.Encode()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if blk := d.Produce(t); len(blk.Txs) != 0 {
			t.Fatalf("included at block %d with a fee cap below the basefee", blk.Header.Height)
		}
		if d.Node.Pool().Len() != 1 {
			t.Fatal("waiting transaction dropped")
		}
	}
	for i := 0; i < 10 && d.Node.Pool().Len() > 0; i++ {
		d.Produce(t)
	}
	if balance(t, d, to).Int64() != 9 {
		t.Fatal("not included after the basefee fell")
	}
}
