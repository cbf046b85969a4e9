package relay_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

const benchFile = 64 << 20

// BenchmarkPutGet6Relays uploads and downloads a 64 MiB file through six
// loopback relay processes (4+2, 4 MiB segments). Compare with
// BenchmarkDiskCopy.
func BenchmarkPutGet6Relays(b *testing.B) {
	ctx := context.Background()
	e := startCluster(b, 6)
	owner, _ := crypto.GenerateKey()
	c := newClient(b, e, cbfs.Config{Key: owner})
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("put", func(b *testing.B) {
		b.SetBytes(benchFile)
		for i := 0; i < b.N; i++ {
			if _, err := vol.Put(ctx, fmt.Sprintf("/bench/%d", i), &patterned{n: benchFile, seed: byte(i)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get", func(b *testing.B) {
		b.SetBytes(benchFile)
		for i := 0; i < b.N; i++ {
			if _, err := vol.Get(ctx, "/bench/0", io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDiskCopy copies a 64 MiB file on the same disk (read, write,
// fsync): the baseline for BenchmarkPutGet6Relays.
func BenchmarkDiskCopy(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	f, _ := os.Create(src)
	io.Copy(f, &patterned{n: benchFile})
	f.Sync()
	f.Close()
	b.SetBytes(benchFile)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in, err := os.Open(src)
		if err != nil {
			b.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dir, "dst"))
		if err != nil {
			b.Fatal(err)
		}
		h := sha256.New() // the relay path hashes too; keep the baseline honest
		if _, err := io.Copy(io.MultiWriter(out, h), in); err != nil {
			b.Fatal(err)
		}
		out.Sync()
		out.Close()
		in.Close()
	}
}

// BenchmarkPutGetVsDiskCopy interleaves, in every iteration, a put and a get
// of a 64 MiB file through six relay processes with a copy of a 64 MiB file
// on the same disk, and reports the ratios (noise from other processes hits
// all three alike).
func BenchmarkPutGetVsDiskCopy(b *testing.B) {
	ctx := context.Background()
	e := startCluster(b, 6)
	owner, _ := crypto.GenerateKey()
	c := newClient(b, e, cbfs.Config{Key: owner})
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	f, _ := os.Create(src)
	io.Copy(f, &patterned{n: benchFile})
	f.Sync()
	f.Close()
	var put, get, cp time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := vol.Put(ctx, "/bench", &patterned{n: benchFile, seed: byte(i)}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := vol.Get(ctx, "/bench", io.Discard); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		in, _ := os.Open(src)
		out, _ := os.Create(filepath.Join(dir, "dst"))
		h := sha256.New()
		io.Copy(io.MultiWriter(out, h), in)
		out.Sync()
		out.Close()
		in.Close()
		put += t1.Sub(t0)
		get += t2.Sub(t1)
		cp += time.Since(t2)
	}
	mb := float64(b.N) * benchFile / 1e6
	b.ReportMetric(mb/put.Seconds(), "put_MB/s")
	b.ReportMetric(mb/get.Seconds(), "get_MB/s")
	b.ReportMetric(mb/cp.Seconds(), "copy_MB/s")
	b.ReportMetric(cp.Seconds()/put.Seconds(), "put/copy")
	b.ReportMetric(cp.Seconds()/get.Seconds(), "get/copy")
}
