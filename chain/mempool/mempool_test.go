package mempool

import (
	"crypto/ecdsa"
	"errors"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

var bf = fees.Basefees{Cycle: 10, Cell: 10}

func mk(t *testing.T, key *ecdsa.PrivateKey, nonce, maxFee, tip uint64) *types.Tx {
	t.Helper()
	to := types.Address{0xee, 1}
	tx, _ := types.NewTx(types.TxData{ChainID: 1, Nonce: nonce, To: &to, Value: big.NewInt(1),
		CyclesLimit: fees.TransferCycles, MaxFeePerCycle: maxFee, MaxFeePerCell: 10, TipPerCycle: tip})
	s, err := types.SignTx(tx, key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rich() AccountState { return AccountState{Nonce: 0, Balance: big.NewInt(1e18)} }

func TestSelectOrdersByFeeKeepingNonces(t *testing.T) {
	p := New(Config{})
	a, _ := crypto.GenerateKey()
	b, _ := crypto.GenerateKey()
	// a pays little for nonce 0 and a lot for nonce 1; b pays medium.
	txs := []*types.Tx{mk(t, a, 0, 20, 1), mk(t, a, 1, 100, 90), mk(t, b, 0, 50, 40)}
	for _, tx := range txs {
		if _, err := p.Add(tx, nil, rich(), bf); err != nil {
			t.Fatal(err)
		}
	}
	got, err := p.Select(func(types.Address) (uint64, error) { return 0, nil }, bf, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []*types.Tx{txs[2], txs[0], txs[1]}
	for i := range want {
		if got[i].Hash() != want[i].Hash() {
			t.Fatalf("position %d: got nonce %d", i, got[i].Nonce())
		}
	}
	// A gap stops the sender's run.
	p.Remove(txs[0].Hash())
	got, _ = p.Select(func(types.Address) (uint64, error) { return 0, nil }, bf, 10)
	if len(got) != 1 || got[0].Hash() != txs[2].Hash() {
		t.Fatalf("gap not respected: %d selected", len(got))
	}
}

func TestLimitsAndEviction(t *testing.T) {
	p := New(Config{MaxPerAccount: 2, MaxTotal: 3})
	a, _ := crypto.GenerateKey()
	b, _ := crypto.GenerateKey()
	c, _ := crypto.GenerateKey()
	for n := uint64(0); n < 2; n++ {
		if _, err := p.Add(mk(t, a, n, 20, 1), nil, rich(), bf); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Add(mk(t, a, 2, 20, 1), nil, rich(), bf); !errors.Is(err, ErrAccountFull) {
		t.Fatalf("account limit: %v", err)
	}
	if _, err := p.Add(mk(t, b, 0, 30, 5), nil, rich(), bf); err != nil {
		t.Fatal(err)
	}
	// Pool full: a cheap newcomer is refused, a rich one evicts the cheapest tail (a's nonce 1).
	if _, err := p.Add(mk(t, c, 0, 11, 0), nil, rich(), bf); !errors.Is(err, ErrPoolFull) {
		t.Fatalf("pool full: %v", err)
	}
	dropped, err := p.Add(mk(t, c, 0, 90, 80), nil, rich(), bf)
	if err != nil || dropped == nil || *dropped != mk(t, a, 1, 20, 1).Hash() {
		t.Fatalf("eviction: %v %v", dropped, err)
	}
	// Balance must cover every earlier pending transaction too.
	poor := AccountState{Balance: fees.MaxCost(mk(t, b, 0, 30, 5))}
	if _, err := p.Add(mk(t, b, 1, 30, 5), nil, poor, bf); !errors.Is(err, ErrInsufficient) {
		t.Fatalf("cumulative balance: %v", err)
	}
	if err := p.Prune(func(types.Address) (uint64, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	if p.Len() != 0 {
		t.Fatalf("%d left after prune", p.Len())
	}
}
