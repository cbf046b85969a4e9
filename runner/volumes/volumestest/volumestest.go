// Package volumestest runs real CBFS relays on loopback for tests of job
// volumes.
package volumestest

import (
	"context"
	"crypto/ecdsa"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

// Relays starts n relay nodes and returns their directory; t.Cleanup stops
// them.
func Relays(t testing.TB, n int) cbfs.MemDirectory {
	t.Helper()
	var dir cbfs.MemDirectory
	for range n {
		key, _ := crypto.GenerateKey()
		node, err := relay.New(relay.Config{Key: key, DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- node.Run(context.Background()) }()
		t.Cleanup(func() {
			node.Close()
			<-done
		})
		select {
		case <-node.Ready():
		case err := <-done:
			t.Fatal(err)
		}
		dir = append(dir, cbfs.RelayInfo{ID: cbfs.RelayID(node.ID()), Addr: node.Addr().String(), PubKey: node.PubKey(), Healthy: true})
	}
	return dir
}

// Client returns a CBFS client for key (small segments, no background
// checkpoints); t.Cleanup closes it.
func Client(t testing.TB, key *ecdsa.PrivateKey, dir cbfs.Directory, anchor cbfs.Anchor) *cbfs.Client {
	t.Helper()
	c, err := cbfs.New(cbfs.Config{Key: key, Directory: dir, Anchor: anchor, SegmentSize: 64 << 10,
		RequestTimeout: 30 * time.Second, CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Options are small volumes for tests: 2 data + 1 parity shard.
var Options = cbfs.VolumeOptions{K: 2, M: 1, SegmentSize: 64 << 10}
