package cbfs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestReaderReplaysLongChain: a volume of 3,000 entries takes 300 small
// commits, more than the 256 change sets after which every commit used to
// be a full manifest; now no full one is due (replaying 300 change sets over
// 3,000 entries is cheap), and a fresh client must load the volume from the
// last full manifest and the 300 change sets after it.
func TestReaderReplaysLongChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 0)
	owner, _ := crypto.GenerateKey()
	c := newClient(t, owner, cl.dir, &cbfs.MemAnchor{})
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vol.Update(ctx, func(m *cbfs.Manifest) error {
		for i := range 3000 {
			m.Files = append(m.Files, cbfs.FileEntry{Path: fmt.Sprintf("/pre/f%05d", i), ModTime: int64(i) + 1, Mode: 0o100644})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	const commits = 300
	for i := range commits {
		p := fmt.Sprintf("/c/f%03d", i)
		if _, err := vol.Apply(ctx, map[string]*cbfs.FileEntry{p: {Path: p, ModTime: int64(i) + 1, Mode: 0o100644}}); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	want, err := vol.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := newClient(t, owner, cl.dir, &cbfs.MemAnchor{}).OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	got, err := v2.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != want.Version || got.Files != want.Files {
		t.Fatalf("fresh client: version %d, %d files; writer: version %d, %d files", got.Version, got.Files, want.Version, want.Files)
	}
	for _, p := range []string{"/pre/f00000", "/c/f000", "/c/f299"} {
		if _, err := v2.Stat(ctx, p); err != nil {
			t.Fatalf("fresh client: stat %s: %v", p, err)
		}
	}
}
