// Package nodetest starts real devnet nodes in temporary directories for
// tests of the packages above the node (API, SDK, CLI): real bbolt files,
// real execution, blocks produced on demand instead of on a clock.
package nodetest

import (
	"context"
	"crypto/ecdsa"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/api"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Devnet is a node with its keys.
type Devnet struct {
	Node      *node.Node
	Home      string
	Faucet    *ecdsa.PrivateKey
	Validator types.Address
	VM        execution.VM // set before Reopen to run actors
}

// NewWithVM is New with actors enabled on the given VM.
func NewWithVM(t testing.TB, vm execution.VM) *Devnet {
	t.Helper()
	return newDevnet(t, vm)
}

// New initialises a devnet home in t.TempDir and opens a node on it.
func New(t testing.TB) *Devnet {
	t.Helper()
	return newDevnet(t, nil)
}

// NewWithGenesis is New with the dev genesis changed by edit before the
// node first opens (e.g. storage windows sized for fast blocks).
func NewWithGenesis(t testing.TB, edit func(*genesis.Genesis)) *Devnet {
	t.Helper()
	return newDevnet(t, nil, edit)
}

func newDevnet(t testing.TB, vm execution.VM, edits ...func(*genesis.Genesis)) *Devnet {
	t.Helper()
	home := t.TempDir()
	faucet, _ := crypto.GenerateKey()
	val, _ := crypto.GenerateKey()
	g := genesis.Dev(1_700_000_000_000, types.PubkeyToAddress(val.PublicKey), types.PubkeyToAddress(faucet.PublicKey))
	for _, edit := range edits {
		edit(g)
	}
	if err := g.Save(node.GenesisPath(home)); err != nil {
		t.Fatal(err)
	}
	if err := node.WriteKeyFile(node.FaucetKeyPath(home), faucet); err != nil {
		t.Fatal(err)
	}
	d := &Devnet{Home: home, Faucet: faucet, Validator: g.Proposer(), VM: vm}
	d.Reopen(t)
	return d
}

// Reopen closes (if open) and reopens the node on the same home.
func (d *Devnet) Reopen(t testing.TB) {
	t.Helper()
	if d.Node != nil {
		d.Node.Close()
	}
	n, err := node.Open(node.Config{Home: d.Home, VM: d.VM, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	d.Node = n
	t.Cleanup(func() { n.Close() })
}

// Produce commits one block and fails the test on error.
func (d *Devnet) Produce(t testing.TB) *types.Block {
	t.Helper()
	b, err := d.Node.ProduceBlock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Serve starts the HTTP API on a loopback httptest server and a background
// block producer at the given interval (0: no producer). Both stop at test
// cleanup.
func (d *Devnet) Serve(t testing.TB, interval time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(api.New(d.Node, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if interval <= 0 {
			return
		}
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				if _, err := d.Node.ProduceBlock(context.Background()); err != nil {
					t.Errorf("produce block: %v", err)
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}
