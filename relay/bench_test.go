package relay_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

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
