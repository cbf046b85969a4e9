package cbfs_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/internal/store"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// locDir is a mutable directory that also reports shards moved by relay
// repair (what onchain.Directory reads from the Storage Manager).
type locDir struct {
	*mutDir
	mu    sync.Mutex
	moved map[[32]byte]cbfs.MovedShard
}

func (d *locDir) MovedShards(context.Context, cbfs.VolumeID) (map[[32]byte]cbfs.MovedShard, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[[32]byte]cbfs.MovedShard{}
	for k, v := range d.moved {
		out[k] = v
	}
	return out, nil
}

// A reader finds a shard where relay repair moved it: with more than M of a
// segment's relays unhealthy the file is unreadable, until the directory
// reports one of their shards on a spare relay that holds it. A move off a
// healthy relay is not followed.
func TestReadFollowsMovedShards(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := startCluster(t, 8, 0)
	dir := &locDir{mutDir: &mutDir{relays: append([]cbfs.RelayInfo(nil), cl.dir...)}, moved: map[[32]byte]cbfs.MovedShard{}}
	owner, _ := crypto.GenerateKey()
	c := newClient(t, owner, dir, &cbfs.MemAnchor{})
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{K: 2, M: 2, SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(rand.New(rand.NewPCG(5, 5)), 40_000) // one segment
	if _, err := vol.Put(ctx, "/a", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	sm, err := vol.StripeMap(ctx)
	if err != nil || len(sm.Stripes) != 1 || len(sm.Stripes[0].Shards) != 4 {
		t.Fatalf("stripe map %+v: %v", sm, err)
	}
	st := sm.Stripes[0]
	node := func(id [20]byte) *relay.Node {
		for _, n := range cl.nodes {
			if n.ID() == id {
				return n
			}
		}
		t.Fatalf("no relay %x", id)
		return nil
	}
	inStripe := map[[20]byte]bool{}
	for _, sh := range st.Shards {
		inStripe[sh.Relay] = true
	}
	var spare *relay.Node
	for _, n := range cl.nodes {
		if !inStripe[n.ID()] {
			spare = n
		}
	}
	// Three of four relays down: only one shard readable, K is 2.
	for _, sh := range st.Shards[:3] {
		dir.setHealthy(cbfs.RelayID(sh.Relay), false)
	}
	var got bytes.Buffer
	if _, err := vol.Get(ctx, "/a", &got); !errors.Is(err, cbfs.ErrInsufficientShards) {
		t.Fatalf("read with 3 of 4 relays down: %v", err)
	}
	// A bogus move of the healthy relay's shard is ignored (the read still
	// fails the same way rather than going to the spare).
	moved := st.Shards[0]
	dir.mu.Lock()
	dir.moved[st.Shards[3].ID] = cbfs.MovedShard{Origin: cbfs.RelayID(st.Shards[3].Relay), Holder: cbfs.RelayID(spare.ID())}
	dir.mu.Unlock()
	// Repair put shard 0 on the spare (copy the ciphertext file over).
	from := node(moved.Relay)
	b, err := os.ReadFile(from.Store().Path(vol.ID(), moved.ID))
	if err != nil {
		t.Fatal(err)
	}
	if err := spare.Store().Put(ctx, vol.ID(), moved.ID, store.Meta{Kind: wire.KindShard, Size: uint64(len(b)), Hash: merkle.Sum(b)}, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	got.Reset()
	if _, err := vol.Get(ctx, "/a", &got); !errors.Is(err, cbfs.ErrInsufficientShards) {
		t.Fatalf("read with a move off a healthy relay only: %v", err)
	}
	dir.mu.Lock()
	dir.moved[moved.ID] = cbfs.MovedShard{Origin: cbfs.RelayID(moved.Relay), Holder: cbfs.RelayID(spare.ID())}
	dir.mu.Unlock()
	// The client caches the move list briefly: poll.
	deadline := time.Now().Add(30 * time.Second)
	for {
		got.Reset()
		_, err := vol.Get(ctx, "/a", &got)
		if err == nil && bytes.Equal(got.Bytes(), data) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("read after the move: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
