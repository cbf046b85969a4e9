package cbfs_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/blob"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/ethereum/go-ethereum/crypto"
)

// A blob over the inline cap round-trips through real relays, verified
// against its multihash; content replaced at the blob's path (same size
// or not) is refused with ErrBlobMismatch, and so is a reference whose
// multihash names other content.
func TestBlobPutGetTampered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startCluster(t, 6, 0)
	owner, _ := crypto.GenerateKey()
	c := newClient(t, owner, cl.dir, &cbfs.MemAnchor{})
	vol, err := c.CreateVolume(ctx, cbfs.VolumeOptions{SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(rand.New(rand.NewPCG(7, 7)), blob.InlineMax*2+123)
	ref, err := vol.PutBlob(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := blob.Sum(blob.SHA2_256, data)
	if !bytes.Equal(ref.Multihash, want) || ref.Size != uint64(len(data)) || ref.Volume != types.Hash(vol.ID()) || ref.Path != cbfs.BlobPath(want) {
		t.Fatalf("ref %+v", ref)
	}
	if again, err := vol.PutBlob(ctx, data); err != nil || again.Path != ref.Path {
		t.Fatalf("second put: %+v %v", again, err)
	}
	got, err := vol.GetBlob(ctx, ref)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get: %d bytes, %v", len(got), err)
	}
	// Without a path: found under BlobPath.
	if got, err := vol.GetBlob(ctx, blob.Ref{Multihash: ref.Multihash, Size: ref.Size}); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get by multihash: %v", err)
	}
	// Another reader opens the volume by id alone.
	other, err := c.OpenVolume(ctx, vol.ID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.GetBlob(ctx, ref); err != nil {
		t.Fatalf("reopened volume: %v", err)
	}

	// Tampering: one flipped byte, then a shorter file, at the blob's path.
	bad := bytes.Clone(data)
	bad[len(bad)/2] ^= 1
	for name, content := range map[string][]byte{"flipped byte": bad, "truncated": data[:len(data)-1]} {
		if _, err := vol.Put(ctx, ref.Path, bytes.NewReader(content)); err != nil {
			t.Fatal(err)
		}
		if _, err := vol.GetBlob(ctx, ref); !errors.Is(err, cbfs.ErrBlobMismatch) {
			t.Fatalf("%s: %v, want ErrBlobMismatch", name, err)
		}
	}
	// A reference naming other content than the file holds.
	if _, err := vol.Put(ctx, ref.Path, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	wrong, _ := blob.Sum(blob.SHA2_256, bad)
	if _, err := vol.GetBlob(ctx, blob.Ref{Multihash: wrong, Size: ref.Size, Path: ref.Path}); !errors.Is(err, cbfs.ErrBlobMismatch) {
		t.Fatalf("wrong multihash: %v", err)
	}
	if _, err := vol.GetBlob(ctx, blob.Ref{Multihash: ref.Multihash, Size: ref.Size, Volume: types.Hash{9}}); err == nil {
		t.Fatal("a reference to another volume was read from this one")
	}
}
