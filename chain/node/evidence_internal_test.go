package node

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TestEvidenceSubmission: equivocation evidence handed to the node (as the
// core reports it in Ready.Evidence) becomes a transaction from the
// validator's account; once executed, the offender is slashed 1% and
// jailed.
func TestEvidenceSubmission(t *testing.T) {
	home := t.TempDir()
	key, err := bls.KeyFromSeed(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	acct, _ := crypto.GenerateKey()
	faucet, _ := crypto.GenerateKey()
	addr := types.PubkeyToAddress(acct.PublicKey)
	g := genesis.Testnet(uint64(time.Now().UnixMilli()), []genesis.Validator{{
		Address: addr, Stake: 10_000, BLSKey: key.PublicKey().Bytes(), BLSPoP: key.ProvePossession().Bytes(),
	}}, types.PubkeyToAddress(faucet.PublicKey), genesis.Consensus{})
	if err := g.Save(GenesisPath(home)); err != nil {
		t.Fatal(err)
	}
	n, err := Open(Config{
		Home: home, BlockInterval: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Network: &Network{Key: key, AccountKey: acct, Listen: "127.0.0.1:0", Tick: 10 * time.Millisecond, TimeoutTicks: 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() { cancel(); <-done }()

	vote := func(h types.Hash) consensus.SignedHeader {
		return consensus.SignedHeader{BlockHash: h, Height: 3, Round: 5, Signature: key.Sign(consensus.VoteMessage(g.ChainID, h, 3, 5)).Bytes()}
	}
	ev := consensus.Evidence{Kind: consensus.DoubleVote, ChainID: g.ChainID, Validator: addr, A: vote(types.Hash{1}), B: vote(types.Hash{2})}
	h, err := n.submitEvidence(ev, 0)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var rec *execution.ValidatorRecord
		var rcpt *types.Receipt
		if err := n.Store().View(func(v *store.View) error {
			_, _, rcpt, _ = v.FindTx(h)
			rec, err = execution.ReadValidator(v, addr)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if rcpt != nil {
			if rcpt.Status != types.ReceiptSuccess {
				t.Fatalf("evidence transaction failed: %s", rcpt.Error)
			}
			if !rec.Jailed || rec.Stake.Cmp(genesis.CBY(9_900)) != 0 {
				t.Fatalf("after the evidence: jailed %v stake %s", rec.Jailed, rec.Stake)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("evidence transaction not executed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
