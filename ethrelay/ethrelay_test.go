package ethrelay_test

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/ethbridge"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/ethrelay"
	"github.com/cowboy-foundation/cowboy/ethrelay/gethdev"
	"github.com/cowboy-foundation/cowboy/pvm"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/common"
	ethtypes "github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

const listener = `from cowboy_sdk import actor, eth_event

@actor
class Listener:
    def __init__(self):
        self.storage["events"] = []

    @eth_event
    def on_eth_event(self, ev):
        evs = self.storage["events"]
        evs.append(ev)
        self.storage["events"] = evs

    def events(self):
        return self.storage["events"]
`

// startGeth runs geth --dev for the test (make deps installs it).
func startGeth(t *testing.T, ctx context.Context) *gethdev.Chain {
	t.Helper()
	wd, _ := os.Getwd()
	geth, err := gethdev.Find(wd)
	if err != nil {
		t.Fatal(err)
	}
	c, err := gethdev.Start(ctx, geth, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func mustOK(t *testing.T, ctx context.Context, c *sdk.Client, tx *types.Tx, err error) *types.Address {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil {
		t.Fatal(err)
	}
	if r.Receipt == nil || r.Receipt.Status != "success" {
		t.Fatalf("tx %s: %+v", tx.Hash(), r.Receipt)
	}
	return r.Receipt.Created
}

// TestRelayGethEvent (issue 18 item 5): a real Ethereum chain (geth
// --dev) runs the vault contract; a Deposit log it emits is picked up by
// the relayer once confirmed, reaches the subscribed actor's @eth_event
// handler (which stores it), and mints the wrapped token of the vault's
// asset to the recipient the log names.
func TestRelayGethEvent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	eth := startGeth(t, ctx)
	vault, err := eth.Deploy(ctx, ethrelay.VaultInitCode())
	if err != nil {
		t.Fatal(err)
	}
	chainID, err := eth.Client.ChainID(ctx)
	if err != nil {
		t.Fatal(err)
	}

	engine, err := pvm.New(context.Background(), pvm.Config{PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	member, _ := crypto.GenerateKey()
	alice, _ := crypto.GenerateKey()
	bob := types.Address{0xB0, 0xB}
	d := nodetest.NewWithGenesis(t, engine, func(g *genesis.Genesis) {
		g.Bridge = &ethbridge.Params{Members: []types.Address{types.PubkeyToAddress(member.PublicKey)}, Threshold: 1}
		for _, k := range []*ecdsa.PrivateKey{member, alice} {
			g.Allocations[0].Balance.Sub(g.Allocations[0].Balance, genesis.CBY(100))
			g.Allocations = append(g.Allocations, genesis.Allocation{Address: types.PubkeyToAddress(k.PublicKey), Balance: genesis.CBY(100)})
		}
	})
	srv := d.Serve(t, 50*time.Millisecond)
	node := sdk.New(srv.URL)

	topic := ethrelay.VaultTopic()
	contract := types.Address(vault)
	man, err := entitlement.ParseRequirement("eth:" + entitlement.EthEvent(chainID.Uint64(), contract, &topic))
	if err != nil {
		t.Fatal(err)
	}
	manB, err := entitlement.Manifest{man}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	tx, err := node.Account(alice).Actors().Send(ctx, nil, &types.Deploy{Code: types.Bytes(listener), Salt: types.Bytes("l"), Requires: manB}, nil, sdk.TxOptions{})
	actor := mustOK(t, ctx, node, tx, err)
	tx, err = node.Account(alice).Bridge().Subscribe(ctx, *actor, chainID.Uint64(), contract, types.Hash(topic), "", genesis.CBY(1), sdk.TxOptions{})
	mustOK(t, ctx, node, tx, err)
	tx, err = node.Account(member).Bridge().Send(ctx, &types.BridgeWrap{ChainID: chainID.Uint64(), Asset: contract, Name: "Wrapped Vault", Symbol: "wVLT", Decimals: 18}, nil, sdk.TxOptions{})
	mustOK(t, ctx, node, tx, err)
	res, err := node.Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil {
		t.Fatal(err)
	}
	var idb []byte
	if err := codec.Unmarshal(res.Receipt.Return, &idb); err != nil || len(idb) != 32 {
		t.Fatalf("wrap returned %x: %v", res.Receipt.Return, err)
	}
	wrapped := types.Hash(idb)

	// A watch for an actor that is not subscribed comes first: the chain
	// refuses its logs (NoSubscription), and the relayer must skip them
	// rather than stall the subscribed actor's.
	unsubscribed := types.Address{0xDE, 0xAD}
	var refused atomic.Int32
	r, err := ethrelay.New(ethrelay.Config{Eth: eth.Client, Node: node, Key: member, Confirmations: 2, Poll: 200 * time.Millisecond,
		Watches: []ethrelay.Watch{{Contract: vault, Topic: topic, Actor: &unsubscribed}, {Contract: vault, Topic: topic, Actor: actor, MintAsset: &contract}},
		Delivered: func(_ ethtypes.Log, code system.Code) {
			if code == system.CodeBridgeNotEntitled {
				refused.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	relayed := make(chan error, 1)
	go func() { relayed <- r.Run(rctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-relayed; !errors.Is(err, context.Canceled) {
			t.Errorf("relayer: %v", err)
		}
	})

	// The deposit: to = bob (left-padded), amount 12345.
	call := append(common.LeftPadBytes(bob[:], 32), common.LeftPadBytes(big.NewInt(12345).Bytes(), 32)...)
	rcpt, err := eth.Send(ctx, &vault, call)
	if err != nil {
		t.Fatal(err)
	}
	if len(rcpt.Logs) != 1 {
		t.Fatalf("the vault emitted %d logs", len(rcpt.Logs))
	}

	var ev map[string]any
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for ev == nil {
		q, err := node.Actors().Query(ctx, *actor, "events", nil)
		if err != nil {
			t.Fatal(err)
		}
		var evs []map[string]any
		if err := codec.Unmarshal(q.Return, &evs); err != nil {
			t.Fatal(err)
		}
		if len(evs) > 1 {
			t.Fatalf("delivered %d times", len(evs))
		}
		if len(evs) == 1 {
			ev = evs[0]
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the event never reached the actor: %v", ctx.Err())
		case <-tick.C:
		}
	}
	topics, _ := ev["topics"].([]any)
	data, _ := ev["data"].([]byte)
	if ev["chain_id"] != chainID.Uint64() || ev["block_number"] != rcpt.BlockNumber.Uint64() || ev["log_index"] != uint64(rcpt.Logs[0].Index) ||
		common.BytesToHash(ev["tx_hash"].([]byte)) != rcpt.TxHash || common.BytesToAddress(ev["contract"].([]byte)) != vault ||
		len(topics) != 3 || common.BytesToHash(topics[0].([]byte)) != common.Hash(topic) || new(big.Int).SetBytes(data).Int64() != 12345 {
		t.Fatalf("delivered %v, log %+v", ev, rcpt.Logs[0])
	}
	if refused.Load() < 1 { // more than once only if a step was retried
		t.Fatalf("the unsubscribed actor's log was refused %d times, want at least once", refused.Load())
	}
	// The mint follows the event in the same relay step.
	for {
		b, err := node.Tokens().Balance(ctx, wrapped, bob, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b.Balance == "12345" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("bob's wrapped balance stayed %s: %v", b.Balance, ctx.Err())
		case <-tick.C:
		}
	}
}
