package fuse_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/fuse"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
)

// TestKilledReadersSpareWriters: programs killed while they read a mount
// (the kernel interrupts their FUSE reads, whose relay requests are then
// cancelled) must not make other programs' writes fail. Before the fix each
// cancelled relay request closed the QUIC connection all requests to that
// relay shared; the requests in flight on it failed, the relay was avoided
// for 15 s, and a close(2) on the mount, whose 4+2 upload needs all six
// relays, returned EIO ("not enough healthy relays: 4 usable relays for 6
// shards") while every relay was healthy.
func TestKilledReadersSpareWriters(t *testing.T) {
	need(t, "dd")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := localRelays(t, 6)
	c, _ := localClient(t, dir, &cbfs.MemAnchor{})
	const seg = 64 << 10
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: seg})
	if err != nil {
		t.Fatal(err)
	}
	// Files only the relays hold (the mount's caches are empty), so every
	// read fetches segments from the relays.
	const victims = 16
	r := rand.New(rand.NewPCG(11, 11))
	for i := range victims {
		b := make([]byte, 32*seg)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		if _, err := vol.Put(ctx, fmt.Sprintf("/big%02d", i), bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	_, mnt := mount(t, vol, fuse.Options{})

	const writers, files = 3, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*files+victims)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range files {
				b := bytes.Repeat([]byte{byte(w), byte(i)}, seg+w*1000+i)
				p := filepath.Join(mnt, fmt.Sprintf("w%d-%d", w, i))
				if err := os.WriteFile(p, b, 0o644); err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					continue
				}
				got, err := os.ReadFile(p)
				if err != nil || !bytes.Equal(got, b) {
					errs <- fmt.Errorf("read back %s: %v (%d of %d bytes)", p, err, len(got), len(b))
				}
			}
		}()
	}
	// Meanwhile readers of the big files are killed part-way. They read
	// with O_DIRECT: the kernel's own read-ahead requests are not
	// interrupted when the reader dies, a reader's direct reads are.
	killed := 0
	for i := range victims {
		cmd := exec.CommandContext(ctx, "dd", "if="+filepath.Join(mnt, fmt.Sprintf("big%02d", i)), "of=/dev/null", "bs=64k", "iflag=direct")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(5+r.IntN(30)) * time.Millisecond) // how far the reader gets, not a wait for a condition
		if cmd.Process.Kill() == nil {
			killed++
		}
		cmd.Wait()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		n++
		if n <= 5 {
			t.Error(err)
		}
	}
	if n > 5 {
		t.Errorf("... and %d more failures", n-5)
	}
	t.Logf("%d files written by %d writers while %d readers were killed part-way", writers*files, writers, killed)
}
