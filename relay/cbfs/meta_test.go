package cbfs_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

// A volume of more files than the relay wire format's array limit (65,536)
// must load on a fresh client: its full manifest is one array of entries.
// (Before the metadata decoder had its own array limit, every load of such
// a volume failed with "exceeded max number of elements 65536".)
func TestLargeVolumeReopens(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 0)
	owner, _ := crypto.GenerateKey()
	anchor := &cbfs.MemAnchor{}
	c := newClient(t, owner, cl.dir, anchor)
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const files = 70_000
	if _, err := vol.Update(ctx, func(m *cbfs.Manifest) error {
		for i := 0; i < files; i++ {
			m.Files = append(m.Files, cbfs.FileEntry{Path: fmt.Sprintf("/d%03d/f%06d", i%1000, i), ModTime: int64(i), Mode: 0o100644})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c2 := newClient(t, owner, cl.dir, anchor)
	v2, err := c2.OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	info, err := v2.Info(ctx)
	if err != nil {
		t.Fatalf("a fresh client cannot load a volume of %d files: %v", files, err)
	}
	if info.Files != files {
		t.Fatalf("fresh client sees %d files, want %d", info.Files, files)
	}
}

// Two entries with the same Ino are names of one file (hard links):
// removing one name, or replacing it through Apply, must keep the shards
// the other name still reads.
func TestHardLinkedEntriesKeepShards(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 0)
	owner, _ := crypto.GenerateKey()
	c := newClient(t, owner, cl.dir, &cbfs.MemAnchor{})
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("shared content "), 8<<10) // above the inline threshold
	if _, err := vol.Put(ctx, "/a", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	m, err := vol.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := m.Files[m.Lookup("/a")]
	if len(a.Segments) == 0 {
		t.Fatal("content is inline; the test needs shards")
	}
	a.Ino = 7
	b := a
	b.Path = "/b"
	if _, err := vol.Apply(ctx, map[string]*cbfs.FileEntry{"/a": &a, "/b": &b}); err != nil {
		t.Fatal(err)
	}
	if err := vol.Remove(ctx, "/a"); err != nil {
		t.Fatal(err)
	}
	c2 := newClient(t, owner, cl.dir, &cbfs.MemAnchor{})
	v2, err := c2.OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := v2.Get(ctx, "/b", &got); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("the remaining name lost its content: %d bytes, %v", got.Len(), err)
	}
}
