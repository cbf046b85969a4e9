package fuse_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/fuse"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

// flakyDir is a relay directory that can be made to fail, which makes every
// commit fail (relays cannot be found) while the mount keeps running.
type flakyDir struct {
	cbfs.MemDirectory
	fail atomic.Bool
}

var errDirDown = errors.New("directory down (test)")

func (d *flakyDir) Relays(ctx context.Context) ([]cbfs.RelayInfo, error) {
	if d.fail.Load() {
		return nil, errDirDown
	}
	return d.MemDirectory.Relays(ctx)
}

// localRelays runs n relays in process with no chain: a lighter setup for
// tests that do not need challenges or rent.
func localRelays(t *testing.T, n int) *flakyDir {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	d := &flakyDir{}
	for i := 0; i < n; i++ {
		key, _ := crypto.GenerateKey()
		node, err := relay.New(relay.Config{Key: key, DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); node.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		<-node.Ready()
		d.MemDirectory = append(d.MemDirectory, cbfs.RelayInfo{ID: cbfs.RelayID(node.ID()), Addr: node.Addr().String(), PubKey: node.PubKey(), Healthy: true})
	}
	return d
}

func localClient(t *testing.T, d cbfs.Directory, a cbfs.Anchor) (*cbfs.Client, func() *cbfs.Client) {
	key, _ := crypto.GenerateKey()
	mk := func() *cbfs.Client {
		c, err := cbfs.New(cbfs.Config{Key: key, Directory: d, Anchor: a, RequestTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	return mk(), mk
}

// `cowboy volume unmount` (fuse.Unmount) while commits fail must fail
// loudly and keep the mount; the serving process stopping anyway keeps the
// changes in a journal that the next mount commits (issue 13, defect B).
func TestUnmountNeverDropsPendingChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := localRelays(t, 6)
	anchor := &cbfs.MemAnchor{}
	c, fresh := localClient(t, dir, anchor)
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	opts := fuse.Options{CacheDir: cacheDir, CacheKey: [32]byte{7}, CommitDelay: 50 * time.Millisecond, PollInterval: 100 * time.Millisecond}
	mnt := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(mnt, 0o755)
	mt, err := fuse.Mount(ctx, vol, mnt, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lazyUnmount(t, mnt); waitTimeout(t, mt, time.Minute) })

	dir.fail.Store(true) // from here listing the relays fails, so commits fail
	// Commits reuse a listing of the relays for up to a second (cbfs): wait
	// until one lists them again, and fails.
	for i := 0; ; i++ {
		if err := os.WriteFile(filepath.Join(mnt, "probe"), []byte{byte(i)}, 0o644); err != nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("closes kept committing with the relay directory down")
		case <-time.After(50 * time.Millisecond):
		}
	}
	content := bytes.Repeat([]byte("pending data "), 10_000)
	if err := os.WriteFile(filepath.Join(mnt, "big.txt"), content, 0o644); err == nil {
		t.Fatal("close committed although the relays are unreachable")
	}
	if err := os.Mkdir(filepath.Join(mnt, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "sub", "small"), []byte("tiny"), 0o600); err == nil {
		t.Fatal("close committed although the relays are unreachable")
	}

	err = fuse.Unmount(mnt, false)
	if err == nil {
		t.Fatal("unmount reported success while changes could not be committed")
	}
	if !errors.Is(err, fuse.ErrNotFlushed) {
		t.Fatalf("unmount error does not wrap ErrNotFlushed: %v", err)
	}
	t.Logf("unmount refused: %v", err)
	if b, err := os.ReadFile(filepath.Join(mnt, "big.txt")); err != nil || !bytes.Equal(b, content) {
		t.Fatalf("mount no longer serves the pending file: %v", err)
	}

	// The serving process is stopped (SIGTERM in `cowboy volume mount`)
	// while commits still fail: it exits with an error, keeping a journal.
	sctx, stop := context.WithCancel(ctx)
	stop()
	if err := mt.Serve(sctx); !errors.Is(err, fuse.ErrNotFlushed) {
		t.Fatalf("serve after a failed final flush: %v", err)
	}

	// Next mount, relays reachable again: the journal is committed.
	dir.fail.Store(false)
	v2, err := fresh().OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	mt2, err := fuse.Mount(ctx, v2, mnt, opts)
	if err != nil {
		t.Fatalf("remount: %v", err)
	}
	if err := mt2.Unmount(ctx); err != nil {
		t.Fatalf("unmount: %v", err)
	}
	v3, err := fresh().OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := v3.Get(ctx, "/big.txt", &got); err != nil || !bytes.Equal(got.Bytes(), content) {
		t.Fatalf("journaled file after remount: %d bytes, %v", got.Len(), err)
	}
	got.Reset()
	if _, err := v3.Get(ctx, "/sub/small", &got); err != nil || got.String() != "tiny" {
		t.Fatalf("journaled small file: %q %v", got.String(), err)
	}
	if fi, err := v3.Stat(ctx, "/sub"); err != nil || fi.Mode&0o170000 != 0o040000 {
		t.Fatalf("journaled directory: %+v %v", fi, err)
	}
	// The journal is gone: a third mount re-applies nothing.
	if ents, _ := filepath.Glob(filepath.Join(cacheDir, "cbfs-journal-*", "*")); len(ents) != 0 {
		t.Fatalf("journal left behind: %v", ents)
	}
}
