package fuse_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/fuse"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
)

// Two mounts of one volume write at once — distinct files and the same
// file — through the default settings (close commits): every close that
// succeeded is in the volume afterwards, the shared file holds one writer's
// last version whole, and each mount sees the other's files (issue 13:
// compare-and-swap commits, re-applied on conflict).
func TestTwoMountsWritingConcurrently(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := localRelays(t, 6)
	anchor := &cbfs.MemAnchor{}
	c, fresh := localClient(t, dir, anchor)
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := fresh().OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	opts := fuse.Options{PollInterval: 100 * time.Millisecond, CommitDelay: 50 * time.Millisecond}
	mounts := []string{}
	var mts []*fuse.Mounted
	for _, v := range []*cbfs.Volume{vol, v2} {
		o := opts
		o.CacheDir = t.TempDir()
		mnt := filepath.Join(t.TempDir(), "mnt")
		os.Mkdir(mnt, 0o755)
		mt, err := fuse.Mount(ctx, v, mnt, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lazyUnmount(t, mnt); waitTimeout(t, mt, time.Minute) })
		mounts = append(mounts, mnt)
		mts = append(mts, mt)
	}
	const n = 25
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for w, mnt := range mounts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				p := filepath.Join(mnt, fmt.Sprintf("w%d-%02d.txt", w, i))
				if err := os.WriteFile(p, []byte(strings.Repeat(fmt.Sprint(w, i), 100)), 0o644); err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
				}
				shared := []byte(strings.Repeat(fmt.Sprintf("writer %d round %d\n", w, i), 50))
				if err := os.WriteFile(filepath.Join(mnt, "shared.txt"), shared, 0o644); err != nil {
					errs <- fmt.Errorf("writer %d shared: %w", w, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Each mount sees the other's files within the staleness bound.
	eventually(t, 10*time.Second, func() error {
		for _, mnt := range mounts {
			for w := range mounts {
				if _, err := os.Stat(filepath.Join(mnt, fmt.Sprintf("w%d-%02d.txt", w, n-1))); err != nil {
					return err
				}
			}
		}
		return nil
	})
	for _, mt := range mts {
		if err := mt.Unmount(ctx); err != nil {
			t.Fatal(err)
		}
	}
	v3, err := fresh().OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	for w := range mounts {
		for i := 0; i < n; i++ {
			var b strings.Builder
			p := fmt.Sprintf("/w%d-%02d.txt", w, i)
			if _, err := v3.Get(ctx, p, &b); err != nil || b.String() != strings.Repeat(fmt.Sprint(w, i), 100) {
				t.Fatalf("%s: %q %v", p, b.String(), err)
			}
		}
	}
	var b strings.Builder
	if _, err := v3.Get(ctx, "/shared.txt", &b); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != strings.Repeat(fmt.Sprintf("writer 0 round %d\n", n-1), 50) &&
		got != strings.Repeat(fmt.Sprintf("writer 1 round %d\n", n-1), 50) {
		t.Fatalf("shared file is not one writer's last version: %.60q", got)
	}
	info, err := v3.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files at version %d", info.Files, info.Version)
}
