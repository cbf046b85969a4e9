package node_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/consensus/vrf"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// oneValidatorNetwork writes the home of a consensus network with a single
// BLS validator: the whole validator loop (core, WAL, QUIC transport,
// execute-on-finality) runs in process, with itself as the quorum.
func oneValidatorNetwork(t *testing.T) (home string, key *bls.SecretKey) {
	t.Helper()
	home = t.TempDir()
	key, err := bls.KeyFromSeed(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	acct, _ := crypto.GenerateKey()
	faucet, _ := crypto.GenerateKey()
	g := genesis.Testnet(uint64(time.Now().UnixMilli()), []genesis.Validator{{
		Address: types.PubkeyToAddress(acct.PublicKey), Stake: 10_000, BLSKey: key.PublicKey().Bytes(), BLSPoP: key.ProvePossession().Bytes(),
	}}, types.PubkeyToAddress(faucet.PublicKey), genesis.Consensus{})
	if err := g.Save(node.GenesisPath(home)); err != nil {
		t.Fatal(err)
	}
	if err := node.WriteKeyFile(node.FaucetKeyPath(home), faucet); err != nil {
		t.Fatal(err)
	}
	return home, key
}

func runFor(t *testing.T, home string, key *bls.SecretKey, until func(n *node.Node) bool) *node.Node {
	t.Helper()
	n, err := node.Open(node.Config{
		Home: home, BlockInterval: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Network: &node.Network{Key: key, Listen: "127.0.0.1:0", Tick: 10 * time.Millisecond, TimeoutTicks: 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	deadline := time.After(20 * time.Second)
	for !until(n) {
		select {
		case err := <-done:
			t.Fatalf("Run returned early: %v", err)
		case <-deadline:
			cancel()
			t.Fatal("timed out")
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return n
}

func headHeight(t *testing.T, n *node.Node) uint64 {
	h, err := n.Store().Head()
	if err != nil {
		t.Fatal(err)
	}
	return h.Height
}

// TestValidatorLoopBeacon runs a one-validator consensus network: a faucet
// transfer is finalized and executed, every header carries a VRF proof
// that verifies under the proposer's key and the epoch seed, each header's
// ParentQC certifies its parent, supply is conserved, and a restart
// resumes from disk.
func TestValidatorLoopBeacon(t *testing.T) {
	home, key := oneValidatorNetwork(t)
	var sent types.Hash
	n := runFor(t, home, key, func(n *node.Node) bool {
		if sent == (types.Hash{}) && headHeight(t, n) >= 1 {
			h, err := n.Faucet(types.Address{0xb0}, genesis.CBY(5))
			if err != nil {
				t.Fatal(err)
			}
			sent = h
		}
		if sent == (types.Hash{}) {
			return false
		}
		err := n.Store().View(func(v *store.View) error { _, _, _, err := v.FindTx(sent); return err })
		return err == nil && headHeight(t, n) >= 12
	})
	cs, ok := n.Consensus()
	if !ok || cs.FinalizedHeight < 12 || cs.Validators != 1 {
		t.Fatalf("consensus status %+v %v", cs, ok)
	}
	top := headHeight(t, n)
	err := n.Store().View(func(v *store.View) error {
		g, err := v.Block(0)
		if err != nil {
			return err
		}
		seed := n.Genesis().Seed(g.Hash())
		prev := g.Header
		for h := uint64(1); h <= top; h++ {
			hd, err := v.Header(h)
			if err != nil {
				return err
			}
			out, err := vrf.Verify(key.PublicKey(), seed, h, hd.VRFProof)
			if err != nil || out != hd.VRFOutput {
				t.Fatalf("height %d: beacon does not verify: %v", h, err)
			}
			if hd.Round <= prev.Round || hd.ParentHash != prev.Hash() {
				t.Fatalf("height %d: round %d after %d, parent link %v", h, hd.Round, prev.Round, hd.ParentHash == prev.Hash())
			}
			var qc consensus.QC
			if err := codec.Unmarshal(hd.ParentQC, &qc); err != nil {
				t.Fatalf("height %d: ParentQC: %v", h, err)
			}
			if qc.Height != h-1 || qc.Round != prev.Round {
				t.Fatalf("height %d: ParentQC certifies height %d round %d", h, qc.Height, qc.Round)
			}
			if h > 1 && hd.VRFOutput == prev.VRFOutput {
				t.Fatalf("height %d repeats the beacon", h)
			}
			prev = *hd
		}
		_, err = node.AuditSupply(v)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	// Restart from disk: the same chain continues.
	n = runFor(t, home, key, func(n *node.Node) bool { return headHeight(t, n) >= top+5 })
	defer n.Close()
	if err := n.Store().View(func(v *store.View) error { _, _, _, err := v.FindTx(sent); return err }); err != nil {
		t.Fatal(errors.Join(errors.New("transfer lost across restart"), err))
	}
}
