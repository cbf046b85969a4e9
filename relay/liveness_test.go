package relay_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestRelaysStayHealthyOnFastBlocks runs two relays the way cowboy-relay
// does (registrar and prover at the daemon's default intervals: 5 s
// heartbeats, 1 s challenge polls) on a dev chain with 20 ms blocks, where
// the registry's liveness window (60 blocks) is 1.2 s and a challenge's
// response window (10 blocks) 200 ms. With a funded volume placed on
// them, neither relay's heartbeat may lapse at any look over six liveness
// windows, and they must answer nearly all of the eighteen epochs'
// challenges: each relay paces its heartbeats and polls by the chain's
// windows, not only by its interval.
// Before that, TestProgramsSoak's relays were all flagged unhealthy the
// first epoch after its volume was funded.
func TestRelaysStayHealthyOnFastBlocks(t *testing.T) {
	d := nodetest.New(t)
	srv := d.Serve(t, 20*time.Millisecond)
	c := sdk.New(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	ids, _ := startChainRelays(t, ctx, c, 2)

	owner, _ := crypto.GenerateKey()
	h, err := c.Chain().Faucet(ctx, types.PubkeyToAddress(owner.PublicKey), genesis.CBY(100))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chain().WaitForReceipt(ctx, h); err != nil {
		t.Fatal(err)
	}
	anchor := &onchain.Anchor{Client: c, Key: owner}
	cc, err := cbfs.New(cbfs.Config{Key: owner, Directory: onchain.Directory{Client: c}, Anchor: anchor, RequestTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	vol, err := cc.CreateVolume(ctx, cbfs.VolumeOptions{K: 1, M: 1, SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vol.Put(ctx, "/data.bin", bytes.NewReader(bytes.Repeat([]byte("cowboy"), 40<<10))); err != nil {
		t.Fatal(err)
	}
	if err := vol.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if err := anchor.FundVolume(ctx, vol.ID(), genesis.CBY(10)); err != nil {
		t.Fatal(err)
	}

	// Six liveness windows of chain time, looking at the directory as
	// often as the test can: the heartbeat never lapses.
	first, err := c.Relays().Get(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	window := first.HeartbeatTimeout
	end := first.Height + 6*window
	for looks := 0; ; looks++ {
		var height uint64
		for _, id := range ids {
			r, err := c.Relays().Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != "active" || r.Height > r.LastHeartbeat+window {
				t.Fatalf("relay %s %s at height %d after %d looks: last heartbeat %d (window %d blocks)",
					id, r.Status, r.Height, looks, r.LastHeartbeat, window)
			}
			height = r.Height
		}
		if height >= end {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Every epoch challenged both relays (18 epochs of 20 blocks). A 1 s
	// poll finds a 200 ms window open in at most half of them; a paced one
	// answers nearly all. (A heavily loaded machine may still miss one, so
	// this asks for a clear majority, not perfection.)
	for _, id := range ids {
		r, err := c.Relays().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		ch := r.Challenges
		t.Logf("relay %s over %d blocks: challenges answered %d, missed %d, failed %d; healthy %v",
			id, 6*window, ch.Answered, ch.Missed, ch.Failed, r.Healthy)
		if ch.Failed != 0 || ch.Answered < 8 || ch.Answered < 3*ch.Missed {
			t.Fatalf("relay %s challenges: %+v", id, *ch)
		}
	}
}

// startChainRelays runs n relays in process, each registered on the chain
// at c with a registrar and a prover as cowboy-relay runs them (default
// intervals: 5 s heartbeats, 1 s challenge polls). They stop at cleanup.
func startChainRelays(t *testing.T, ctx context.Context, c *sdk.Client, n int) ([]types.Address, []*relay.Node) {
	t.Helper()
	var ids []types.Address
	var nodes []*relay.Node
	for range n {
		key, _ := crypto.GenerateKey()
		id := types.PubkeyToAddress(key.PublicKey)
		h, err := c.Chain().Faucet(ctx, id, genesis.CBY(1000))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Chain().WaitForReceipt(ctx, h); err != nil {
			t.Fatal(err)
		}
		node, err := relay.New(relay.Config{Key: key, DataDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		rctx, rcancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		t.Cleanup(func() { rcancel(); wg.Wait(); node.Close() })
		wg.Add(1)
		go func() { defer wg.Done(); node.Run(rctx) }()
		<-node.Ready()
		log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})).With("relay", id)
		mu := new(sync.Mutex)
		reg := &onchain.Registrar{Client: c, Key: key, Addr: node.Addr().String(), Capacity: 1 << 30, Stake: genesis.CBY(100),
			Interval: 5 * time.Second, Logger: log, SendMu: mu}
		if err := reg.Register(ctx); err != nil {
			t.Fatal(err)
		}
		prover := &onchain.Prover{Client: c, Key: key, Holdings: node, Refusable: relay.IsRefusable, Logger: log, SendMu: mu}
		wg.Add(2)
		go func() { defer wg.Done(); reg.Run(rctx) }()
		go func() { defer wg.Done(); prover.Run(rctx) }()
		ids, nodes = append(ids, id), append(nodes, node)
	}
	return ids, nodes
}

// testWriter sends a logger's lines to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
