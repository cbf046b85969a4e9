package cbfs_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
)

// Files up to the inline threshold live sealed in the metadata: no shard
// is stored for them, they read back (whole and by range) from a fresh
// client, and one byte more goes to shards as before.
func TestSmallFilesInline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, owner, anchor, vol := ownedVolume(t, ctx, cbfs.VolumeOptions{SegmentSize: 64 << 10})
	shards := func() (n int) {
		for _, node := range cl.nodes {
			objs, _ := node.Store().List(vol.ID(), 0, 0)
			n += len(objs)
		}
		return n
	}
	r := rand.New(rand.NewPCG(3, 3))
	small := randBytes(r, cbfs.DefaultInlineMax)
	if _, err := vol.Put(ctx, "/small", bytes.NewReader(small)); err != nil {
		t.Fatal(err)
	}
	if n := shards(); n != 0 {
		t.Fatalf("inline file stored %d shards", n)
	}
	big := randBytes(r, cbfs.DefaultInlineMax+1)
	if _, err := vol.Put(ctx, "/big", bytes.NewReader(big)); err != nil {
		t.Fatal(err)
	}
	if n := shards(); n != 6 {
		t.Fatalf("file above the threshold stored %d shards, want 6", n)
	}
	v2, err := newClient(t, owner, cl.dir, anchor).OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string][]byte{"/small": small, "/big": big} {
		var got bytes.Buffer
		if _, err := v2.Get(ctx, p, &got); err != nil || !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%s: %d bytes, %v", p, got.Len(), err)
		}
	}
	var got bytes.Buffer
	if _, err := v2.GetRange(ctx, "/small", 100, 50, &got); err != nil || !bytes.Equal(got.Bytes(), small[100:150]) {
		t.Fatalf("range of inline file: %v", err)
	}
	info, err := v2.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Bytes != int64(len(small)+len(big)) {
		t.Fatalf("info bytes %d", info.Bytes)
	}
}
