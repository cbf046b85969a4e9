package sdk_test

import (
	"crypto/ecdsa"
	"errors"
	"math/big"
	"sync"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// Concurrent submissions through one account's handles take consecutive
// nonces: none is refused for reusing a nonce, and all are included.
func TestAccountSequencesConcurrentNonces(t *testing.T) {
	_, c := setup(t)
	key := funded(t, c)
	const n = 8
	acct := c.Account(key)
	txs := make([]*types.Tx, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := acct
			if i%2 == 1 {
				a = c.Account(key) // another handle for the same key shares the lock
			}
			txs[i], errs[i] = a.Transfer(ctx(t), types.Address{0x50, byte(i)}, big.NewInt(int64(i+1)), sdk.TxOptions{})
		}()
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for i := 0; i < n; i++ {
		if errs[i] != nil {
			t.Fatalf("transfer %d: %v", i, errs[i])
		}
		if seen[txs[i].Nonce()] {
			t.Fatalf("nonce %d used twice", txs[i].Nonce())
		}
		seen[txs[i].Nonce()] = true
	}
	for i := uint64(0); i < n; i++ {
		if !seen[i] {
			t.Fatalf("nonces %v: %d missing", seen, i)
		}
	}
	for i, tx := range txs {
		r, err := c.Chain().WaitForReceipt(ctx(t), tx.Hash())
		if err != nil || sdk.ReceiptErr(r.Receipt) != nil {
			t.Fatalf("transfer %d: %v %+v", i, err, r)
		}
	}
}

// With TxOptions.Wait an account method returns a failed receipt as an
// error that matches its code's exported sentinel.
func TestAccountWaitMapsReceiptCodes(t *testing.T) {
	_, c := setup(t)
	key := funded(t, c)
	var err error
	acct := c.Account(key)
	_, err = acct.Tokens().Transfer(ctx(t), types.Hash{0x77}, types.Address{0x51}, big.NewInt(1), sdk.TxOptions{Wait: true})
	var re *sdk.ReceiptError
	if !errors.Is(err, sdk.ErrNoSuchToken) || !errors.As(err, &re) {
		t.Fatalf("transfer of an unknown token: %v", err)
	}
	_, err = acct.Gov().Vote(ctx(t), 4242, 1, sdk.TxOptions{Wait: true})
	if !errors.Is(err, sdk.ErrNoSuchProposal) || errors.Is(err, sdk.ErrNoSuchToken) {
		t.Fatalf("vote on an unknown proposal: %v", err)
	}
	// Without Wait the same call only submits: no receipt, no error.
	tx, err := acct.Gov().Vote(ctx(t), 4242, 1, sdk.TxOptions{})
	if err != nil || tx == nil {
		t.Fatalf("vote without wait: %v", err)
	}
	r, err := c.Chain().WaitForReceipt(ctx(t), tx.Hash())
	if err != nil || !errors.Is(sdk.ReceiptErr(r.Receipt), sdk.ErrNoSuchProposal) {
		t.Fatalf("receipt of the unwaited vote: %v %+v", err, r)
	}
}

// funded returns a new key the faucet has paid 10 CBY.
func funded(t *testing.T, c *sdk.Client) *ecdsa.PrivateKey {
	t.Helper()
	key, _ := crypto.GenerateKey()
	h, err := c.Chain().Faucet(ctx(t), types.PubkeyToAddress(key.PublicKey), sdk.MustCBY("10"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chain().WaitForReceipt(ctx(t), h); err != nil {
		t.Fatal(err)
	}
	return key
}
