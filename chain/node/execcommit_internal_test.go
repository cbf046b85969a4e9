package node

import (
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TestCheckExecVotingRule: a validator votes only for a proposal whose
// state commitment is a header it executed itself; a height it has not
// executed yet defers the vote (consensus.ErrNotReady), a different header
// at an executed height rejects the proposal (consensus.ErrUncommitted).
func TestCheckExecVotingRule(t *testing.T) {
	home := t.TempDir()
	faucet, _ := crypto.GenerateKey()
	g := genesis.Dev(1_700_000_000_000, types.Address{1}, types.PubkeyToAddress(faucet.PublicKey))
	if err := g.Save(GenesisPath(home)); err != nil {
		t.Fatal(err)
	}
	n, err := Open(Config{Home: home, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	head, err := n.Store().Head()
	if err != nil {
		t.Fatal(err)
	}
	v := &validator{n: n}
	if err := v.checkExec(consensus.ExecCommit{Height: head.Height, Header: head.Hash()}); err != nil {
		t.Fatalf("the executed head: %v", err)
	}
	if err := v.checkExec(consensus.ExecCommit{Height: head.Height, Header: types.Hash{9}}); !errors.Is(err, consensus.ErrUncommitted) {
		t.Fatalf("another header at an executed height: %v", err)
	}
	if err := v.checkExec(consensus.ExecCommit{Height: head.Height + 1, Header: types.Hash{9}}); !errors.Is(err, consensus.ErrNotReady) {
		t.Fatalf("a height not executed yet: %v", err)
	}
}
