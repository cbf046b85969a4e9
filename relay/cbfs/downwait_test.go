package cbfs_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestUploadWaitsOutDownMarks: a 4+2 volume on six relays needs all six
// for each segment. A relay the client avoids for a short while after a
// failure (it was restarted) must not fail the write: the upload waits for
// the mark to end. Before the fix the write failed at once with "not enough
// healthy relays: 5 usable relays for 6 shards", which a mount returns as EIO.
func TestUploadWaitsOutDownMarks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 0)
	owner, _ := crypto.GenerateKey()
	c, err := cbfs.New(cbfs.Config{Key: owner, Directory: cl.dir, Anchor: &cbfs.MemAnchor{}, SegmentSize: 64 << 10,
		RequestTimeout: 10 * time.Second, RelayDownFor: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}

	// Relay 0 goes away: the client's dial fails and marks it down.
	addr := cl.nodes[0].Addr().String()
	if err := cl.nodes[0].Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(ctx, cl.dir[0]); err == nil {
		t.Fatal("stat of a stopped relay succeeded")
	}
	// It comes back at once; the client still avoids it.
	restartAt(t, ctx, relay.Config{Key: cl.keys[0], DataDir: cl.dirs[0], Listen: addr})
	if _, err := c.Stat(ctx, cl.dir[0]); !errors.Is(err, transport.ErrRelayDown) {
		t.Fatalf("relay 0 right after its failure: %v, want it avoided (ErrRelayDown)", err)
	}

	data := randBytes(rand.New(rand.NewPCG(7, 7)), 3*(64<<10)+17)
	if _, err := vol.Put(ctx, "/after-restart", bytes.NewReader(data)); err != nil {
		t.Fatalf("put while a relay is avoided for a short while: %v", err)
	}
	var got bytes.Buffer
	if _, err := vol.Get(ctx, "/after-restart", &got); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("get: %v (%d of %d bytes)", err, got.Len(), len(data))
	}
}

// restartAt starts a relay with cfg on the address of one just closed
// there: Node.Close releases its socket before it returns, so no retry.
func restartAt(t *testing.T, ctx context.Context, cfg relay.Config) {
	t.Helper()
	node, err := relay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var runErr error
	stopped := make(chan struct{})
	go func() { defer close(stopped); runErr = node.Run(context.Background()) }()
	t.Cleanup(func() {
		node.Close()
		<-stopped
	})
	select {
	case <-node.Ready():
	case <-stopped:
		t.Fatalf("restart on %s: %v", cfg.Listen, runErr)
	case <-ctx.Done():
		t.Fatalf("relay on %s neither listened nor failed", cfg.Listen)
	}
}
