package relay_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestReplacedShardsKeptUntilAnchored: the anchored checkpoint's placement
// is what the chain challenges every storage epoch, so the shards of a
// replaced file must stay on the relays until a later checkpoint no longer
// names them. Before the fix the commit deleted them at once; every relay
// then missed its challenges against the anchored placement ("prove chunk
// … store: object not found") until the next checkpoint, was flagged
// unhealthy and slashed, and TestProgramsSoak's mount found no healthy
// relay.
func TestReplacedShardsKeptUntilAnchored(t *testing.T) {
	d := nodetest.New(t)
	srv := d.Serve(t, 20*time.Millisecond)
	c := sdk.New(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ids, nodes := startChainRelays(t, ctx, c, 2)

	owner, _ := crypto.GenerateKey()
	h, err := c.Chain().Faucet(ctx, types.PubkeyToAddress(owner.PublicKey), genesis.CBY(100))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chain().WaitForReceipt(ctx, h); err != nil {
		t.Fatal(err)
	}
	anchor := &onchain.Anchor{Client: c, Key: owner}
	// Checkpoints only when asked: the old placement stays anchored.
	cc, err := cbfs.New(cbfs.Config{Key: owner, Directory: onchain.Directory{Client: c}, Anchor: anchor,
		RequestTimeout: 20 * time.Second, CheckpointInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	vol, err := cc.CreateVolume(ctx, cbfs.VolumeOptions{K: 1, M: 1, SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vol.Put(ctx, "/data.bin", bytes.NewReader(bytes.Repeat([]byte("old "), 40<<10))); err != nil {
		t.Fatal(err)
	}
	old := shards(t, nodes, vol.ID())
	if err := vol.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if err := anchor.FundVolume(ctx, vol.ID(), genesis.CBY(10)); err != nil {
		t.Fatal(err)
	}
	// Replace the file; the anchored placement still names the old shards.
	if _, err := vol.Put(ctx, "/data.bin", bytes.NewReader(bytes.Repeat([]byte("new "), 40<<10))); err != nil {
		t.Fatal(err)
	}
	if now := shards(t, nodes, vol.ID()); len(now) < 2*len(old) {
		t.Fatalf("after replacing the file the relays hold %d shards, want the %d old ones kept beside the new", len(now), len(old))
	}
	// Eight storage epochs: every challenge against the anchored
	// placement must be answerable.
	start := mustHeight(t, c)
	waitFor(t, time.Minute, "eight storage epochs", func() bool { return mustHeight(t, c) > start+8*20 })
	for _, id := range ids {
		r, err := c.Relays().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if ch := r.Challenges; ch.Answered == 0 || ch.Failed != 0 || ch.Answered < 3*ch.Missed {
			t.Fatalf("relay %s, challenged on the anchored placement after the file was replaced: %+v", id, *ch)
		}
	}
	// A checkpoint of the new head lets the old shards go.
	if err := vol.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the replaced file's shards deleted after the checkpoint", func() bool {
		now := shards(t, nodes, vol.ID())
		for id := range old {
			if now[id] {
				return false
			}
		}
		return true
	})
}

// shards is the set of shard ids the relays hold for a volume.
func shards(t *testing.T, nodes []*relay.Node, vol cbfs.VolumeID) map[[32]byte]bool {
	t.Helper()
	out := map[[32]byte]bool{}
	for _, n := range nodes {
		objs, err := n.Store().List(vol, wire.KindShard, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			out[o.ID] = true
		}
	}
	return out
}
