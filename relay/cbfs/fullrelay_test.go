package cbfs_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/internal/store"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestFullRelayShardsPlacedElsewhere (issue 13, "relays running out of
// disk"): one of seven relays has no room left. It refuses each shard with
// StatusFull, the client puts that shard on the spare relay, and the
// writes succeed; nothing more lands on the full relay, and a fresh
// client reads every file back intact (the one written before too).
func TestFullRelayShardsPlacedElsewhere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const capacity = 4 << 20
	cl := startCluster(t, 7, capacity)
	owner, _ := crypto.GenerateKey()
	anchor := &cbfs.MemAnchor{}
	vol, err := newClient(t, owner, cl.dir, anchor).CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(13, 4))
	files := map[string][]byte{}
	// While it has room, relay 0 takes shards like the others.
	full := cl.nodes[0]
	files["/before"] = randBytes(r, 4*(64<<10))
	if _, err := vol.Put(ctx, "/before", bytes.NewReader(files["/before"])); err != nil {
		t.Fatal(err)
	}
	before, err := full.Store().List(vol.ID(), wire.KindShard, 0)
	if err != nil || len(before) == 0 {
		t.Fatalf("relay 0 took no shard while it had room (%v): the test would prove nothing", err)
	}
	// Fill relay 0 up to its last 4 KiB with an object of another volume.
	used, _, _ := full.Store().Usage()
	junk := bytes.Repeat([]byte{7}, int(capacity-used-4<<10))
	if err := full.Store().Put(ctx, [32]byte{9}, [32]byte{9}, store.Meta{Kind: wire.KindShard, Size: uint64(len(junk)), Hash: merkle.Sum(junk)}, bytes.NewReader(junk)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		data := randBytes(r, 4*(64<<10)+i*1000) // 4+ segments: the rotation puts relay 0 in most
		name := "/f" + string(rune('a'+i))
		if _, err := vol.Put(ctx, name, bytes.NewReader(data)); err != nil {
			t.Fatalf("put %s with one relay full: %v", name, err)
		}
		files[name] = data
	}
	if objs, err := full.Store().List(vol.ID(), wire.KindShard, 0); err != nil || len(objs) != len(before) {
		t.Fatalf("the full relay holds %d shards of the volume, %d before it was full (%v)", len(objs), len(before), err)
	}
	v2, err := newClient(t, owner, cl.dir, anchor).OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		var got bytes.Buffer
		if _, err := v2.Get(ctx, name, &got); err != nil || !bytes.Equal(got.Bytes(), data) {
			t.Fatalf("get %s: %v (%d of %d bytes)", name, err, got.Len(), len(data))
		}
	}
}
