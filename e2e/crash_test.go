package e2e

import (
	"context"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestKillNineLoop kills cowboyd with SIGKILL at random moments while
// transfers stream in, five times over, restarting it each time. Every
// restart must come back on a chain that extends what was committed before,
// and the final database must pass the hash-chain and supply audits.
func TestKillNineLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("crash loop")
	}
	home := filepath.Join(t.TempDir(), "node")
	port := freePort(t)
	rng := rand.New(rand.NewPCG(7, 11))
	key, _ := crypto.GenerateKey()
	to := types.Address{0xde, 0xad}
	var lastHead uint64
	var lastHash types.Hash
	for round := 0; round < 5; round++ {
		d := startNode(t, home, port, 50*time.Millisecond)
		c := d.client()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		st, err := c.Chain().Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Height < lastHead {
			t.Fatalf("round %d: restarted at %d, below the %d seen before the kill", round, st.Height, lastHead)
		}
		if lastHead > 0 {
			b, err := c.Chain().Block(ctx, itoa(lastHead), false)
			if err != nil || b.Hash != lastHash {
				t.Fatalf("round %d: block %d changed across the kill (%v)", round, lastHead, err)
			}
		}
		if round == 0 {
			h, err := c.Chain().Faucet(ctx, types.PubkeyToAddress(key.PublicKey), big.NewInt(1e18))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Chain().WaitForReceipt(ctx, h); err != nil {
				t.Fatal(err)
			}
		}
		// Stream transfers, then kill at a random moment.
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.Account(key).Transfer(ctx, to, big.NewInt(1), sdk.TxOptions{}); err != nil {
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		if st, err := c.Chain().Status(ctx); err == nil {
			lastHead, lastHash = st.Height, st.HeadHash
		}
		d.kill()
		close(stop)
		cancel()
	}
	st, err := store.Open(node.DBPath(home))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.View(func(v *store.View) error {
		head := v.Head()
		var parent types.Hash
		for h := uint64(0); h <= head.Height; h++ {
			b, err := v.Block(h)
			if err != nil {
				return err
			}
			if h > 0 && b.Header.ParentHash != parent {
				t.Fatalf("block %d does not link to its parent", h)
			}
			if types.TxRoot(b.Txs) != b.Header.TxRoot {
				t.Fatalf("block %d tx root mismatch", h)
			}
			parent = b.Hash()
		}
		_, err := node.AuditSupply(v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
