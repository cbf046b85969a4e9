package e2e

import (
	"context"
	"encoding/json"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/cowboy-foundation/cowboy/sdk/keystore"
)

// TestDevnetTransfersSurviveKill runs cowboyd --dev as a real process,
// funds a key from the faucet, sends 100 transfers (80 through the SDK, 20
// through the CLI), checks balances, burned fees and tips, kills the node
// with SIGKILL, restarts it and checks that nothing was lost.
func TestDevnetTransfersSurviveKill(t *testing.T) {
	home := t.TempDir()
	cliHome := t.TempDir()
	d := startNode(t, filepath.Join(home, "node"), freePort(t), 200*time.Millisecond)
	c := d.client()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Keys: alice in the CLI keystore (used by both paths), bob and carol receive.
	cli(t, d, cliHome, "keys", "new", "alice", "--light-kdf")
	ks, err := keystore.Open(filepath.Join(cliHome, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	aliceKey, err := ks.Unlock("alice", "e2e")
	if err != nil {
		t.Fatal(err)
	}
	alice := types.PubkeyToAddress(aliceKey.PublicKey)
	bob, carol := types.Address{0xb0, 0xb0}, types.Address{0xca, 0x70}

	out := cli(t, d, cliHome, "faucet", "alice", "--value", "1000")
	if !strings.Contains(out, "result     success") {
		t.Fatalf("faucet: %s", out)
	}
	st0, err := c.Chain().Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	head0, err := c.Chain().Block(ctx, "latest", false)
	if err != nil {
		t.Fatal(err)
	}
	valBefore, err := c.Chain().Balance(ctx, head0.Header.Proposer)
	if err != nil {
		t.Fatal(err)
	}
	aliceBefore, err := c.Chain().Balance(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}

	// 80 transfers through the SDK, submitted back to back (consecutive nonces).
	var hashes []types.Hash
	for i := 0; i < 80; i++ {
		tx, err := c.Account(aliceKey).Transfer(ctx, bob, big.NewInt(int64(1000+i)), sdk.TxOptions{TipPerCycle: 3})
		if err != nil {
			t.Fatalf("transfer %d: %v", i, err)
		}
		hashes = append(hashes, tx.Hash())
		if i%40 == 39 {
			// Stay under the per-account pending limit (64).
			if _, err := c.Chain().WaitForReceipt(ctx, tx.Hash()); err != nil {
				t.Fatal(err)
			}
		}
	}
	// 20 through the CLI, each waiting for its receipt.
	for i := 0; i < 20; i++ {
		out := cli(t, d, cliHome, "tx", "transfer", "--from", "alice", "--to", carol.String(), "--value", "7wei", "--json")
		var r apitypes.TxResult
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("cli json: %v\n%s", err, out)
		}
		if r.Receipt == nil || r.Receipt.Status != "success" {
			t.Fatalf("cli transfer %d: %s", i, out)
		}
		hashes = append(hashes, r.Tx.Hash)
	}
	fees, burned, tips := new(big.Int), new(big.Int), new(big.Int)
	var lastHeight uint64
	for _, h := range hashes {
		r, err := c.Chain().WaitForReceipt(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if r.Receipt.Status != "success" {
			t.Fatalf("tx %s failed: %s", h, r.Receipt.Error)
		}
		fees.Add(fees, mustAmount(t, r.Receipt.FeePaid))
		burned.Add(burned, mustAmount(t, r.Receipt.Burned))
		tips.Add(tips, mustAmount(t, r.Receipt.Tip))
		lastHeight = max(lastHeight, *r.BlockHeight)
	}
	wantBob := big.NewInt(0)
	for i := 0; i < 80; i++ {
		wantBob.Add(wantBob, big.NewInt(int64(1000+i)))
	}
	checkBalance(t, c, bob, wantBob)
	checkBalance(t, c, carol, big.NewInt(140))
	spent := new(big.Int).Add(new(big.Int).Add(wantBob, big.NewInt(140)), fees)
	checkBalance(t, c, alice, new(big.Int).Sub(aliceBefore, spent))
	if fees.Cmp(new(big.Int).Add(burned, tips)) != 0 || tips.Sign() <= 0 {
		t.Fatalf("fees %s != burned %s + tips %s", fees, burned, tips)
	}
	st1, err := c.Chain().Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := new(big.Int).Sub(mustAmount(t, st1.Burned), mustAmount(t, st0.Burned)); got.Cmp(burned) != 0 {
		t.Fatalf("chain burned %s, receipts say %s", got, burned)
	}
	checkBalance(t, c, head0.Header.Proposer, new(big.Int).Add(valBefore, tips))

	// Keep submitting while the node dies: SIGKILL mid-stream.
	for i := 0; i < 10; i++ {
		if _, err := c.Account(aliceKey).Transfer(ctx, bob, big.NewInt(1), sdk.TxOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(150 * time.Millisecond)
	stBeforeKill, err := c.Chain().Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d.kill()

	d2 := startNode(t, d.home, d.port, 200*time.Millisecond)
	c2 := d2.client()
	st2, err := c2.Chain().Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st2.Height < stBeforeKill.Height || st2.Height < lastHeight {
		t.Fatalf("restart at height %d, had %d (receipts up to %d)", st2.Height, stBeforeKill.Height, lastHeight)
	}
	blk, err := c2.Chain().Block(ctx, itoa(stBeforeKill.Height), false)
	if err != nil || blk.Hash != stBeforeKill.HeadHash {
		t.Fatalf("block %d changed across the kill: %v", stBeforeKill.Height, err)
	}
	for _, h := range hashes {
		r, err := c2.Chain().Tx(ctx, h)
		if err != nil || r.Status != apitypes.TxIncluded {
			t.Fatalf("tx %s lost after restart: %v", h, err)
		}
	}
	// The chain continues after the restart, and new transfers go through.
	tx, err := c2.Account(aliceKey).Transfer(ctx, carol, big.NewInt(1), sdk.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Chain().WaitForReceipt(ctx, tx.Hash()); err != nil {
		t.Fatal(err)
	}
	d2.stop()

	// Offline audit of the database the killed-and-restarted node left.
	st, err := store.Open(node.DBPath(d.home))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.View(func(v *store.View) error {
		_, err := node.AuditSupply(v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

func mustAmount(t *testing.T, s string) *big.Int {
	t.Helper()
	v, err := sdk.ParseAmount(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func checkBalance(t *testing.T, c *sdk.Client, a types.Address, want *big.Int) {
	t.Helper()
	got, err := c.Chain().Balance(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if got.Cmp(want) != 0 {
		t.Fatalf("balance of %s = %s, want %s", a, got, want)
	}
}

func itoa(n uint64) string { return new(big.Int).SetUint64(n).String() }
