package cbfs

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/blob"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Blobs (spec 002 §7): content-addressed files that an actor commits to
// on chain by multihash (cowboy_sdk.blobs.commit). The producer of an
// output over blob.InlineMax bytes (a runner, a client) stores it with
// PutBlob and hands the reference to the actor; readers fetch it with
// GetBlob, which refuses content that does not hash to the multihash.

// BlobDir is the directory PutBlob stores blobs in, each under its
// multihash in hex.
const BlobDir = "/.blobs"

// ErrBlobMismatch: the content fetched for a blob does not match its
// multihash or size (a tampered or substituted blob). It is
// blob.ErrMismatch.
var ErrBlobMismatch = blob.ErrMismatch

// BlobPath is where PutBlob stores the blob m.
func BlobPath(m blob.Multihash) string { return BlobDir + "/" + m.Hex() }

// PutBlob stores data as a content-addressed blob (sha2-256 multihash) at
// BlobPath in v and returns its reference. Storing content already
// present at its path leaves the file as it is.
func (v *Volume) PutBlob(ctx context.Context, data []byte) (blob.Ref, error) {
	if len(data) == 0 {
		return blob.Ref{}, fmt.Errorf("cbfs: put blob: %w: empty content", blob.ErrMalformed)
	}
	m, err := blob.Sum(blob.SHA2_256, data)
	if err != nil {
		return blob.Ref{}, err
	}
	ref := blob.Ref{Multihash: m, Size: uint64(len(data)), Volume: types.Hash(v.ID()), Path: BlobPath(m)}
	if fi, err := v.Stat(ctx, ref.Path); err == nil && fi.Size == int64(len(data)) {
		if _, err := v.GetBlob(ctx, ref); err == nil {
			return ref, nil
		}
	}
	if _, err := v.Put(ctx, ref.Path, bytes.NewReader(data)); err != nil {
		return blob.Ref{}, fmt.Errorf("cbfs: put blob %s: %w", m.Hex(), err)
	}
	return ref, nil
}

// GetBlob reads the blob ref names from v (ref.Path, or BlobPath of the
// multihash when the path is empty) and returns its content only if it
// hashes to ref.Multihash and has ref.Size bytes; otherwise the error is
// ErrBlobMismatch.
func (v *Volume) GetBlob(ctx context.Context, ref blob.Ref) ([]byte, error) {
	if _, err := blob.Parse(ref.Multihash); err != nil {
		return nil, err
	}
	if ref.Volume != (types.Hash{}) && ref.Volume != types.Hash(v.ID()) {
		return nil, fmt.Errorf("cbfs: get blob %s: it is in volume %s, not %s", ref.Multihash.Hex(), ref.Volume, types.Hash(v.ID()))
	}
	path := ref.Path
	if path == "" {
		path = BlobPath(ref.Multihash)
	}
	fi, err := v.Stat(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("cbfs: get blob %s: %w", ref.Multihash.Hex(), err)
	}
	if ref.Size != 0 && uint64(fi.Size) != ref.Size {
		return nil, fmt.Errorf("cbfs: blob at %s refused: %w: %d bytes, the reference says %d", path, ErrBlobMismatch, fi.Size, ref.Size)
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size))
	if _, err := v.Get(ctx, path, &buf); err != nil {
		return nil, fmt.Errorf("cbfs: get blob %s: %w", ref.Multihash.Hex(), err)
	}
	if err := ref.Multihash.Verify(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("cbfs: blob at %s refused: %w", path, err)
	}
	return buf.Bytes(), nil
}
