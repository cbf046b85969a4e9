package sdk

import (
	"context"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/blob"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// BlobCommit is one blob an actor committed to (a BlobCommitted event):
// the reference (multihash, size, CBFS volume and path) and the actor.
type BlobCommit struct {
	blob.Ref
	Actor types.Address `json:"actor"`
}

// BlobsService is the client's service for content-addressed blobs
// (spec 002 §7, docs/BLOBS.md): the commitments transactions made. The
// content lives in CBFS; VerifyBlob checks it against a commitment.
type BlobsService struct{ c *Client }

// Blobs returns the service for blob commitments.
func (c *Client) Blobs() *BlobsService { return &BlobsService{c: c} }

// Commits returns the blobs transaction h committed to, in receipt
// order (spec 002 §7; cowboy_sdk.blobs.commit). The content is off chain:
// fetch it from CBFS and verify it (cbfs.Volume.GetBlob, `cowboy blob get`).
func (s *BlobsService) Commits(ctx context.Context, h types.Hash) ([]BlobCommit, error) {
	r, err := s.c.Chain().Tx(ctx, h)
	if err != nil {
		return nil, err
	}
	if r.Receipt == nil {
		return nil, fmt.Errorf("transaction %s has no receipt yet", h)
	}
	var out []BlobCommit
	for _, ev := range r.Receipt.Events {
		if ev.Topic != blob.TopicBlobCommitted {
			continue
		}
		var e blob.CommittedEvent
		if err := codec.Unmarshal(ev.Data, &e); err != nil {
			return nil, fmt.Errorf("BlobCommitted event of %s: %w", ev.Emitter, err)
		}
		out = append(out, BlobCommit{Ref: e.Ref, Actor: ev.Emitter})
	}
	return out, nil
}

// VerifyBlob checks content fetched from anywhere (CBFS, IPFS, a mirror)
// against a committed reference: its size (when the reference has one)
// and its multihash. A mismatch is blob.ErrMismatch.
func VerifyBlob(ref blob.Ref, content []byte) error {
	if ref.Size != 0 && uint64(len(content)) != ref.Size {
		return fmt.Errorf("%w: %d bytes, the reference says %d", blob.ErrMismatch, len(content), ref.Size)
	}
	return ref.Multihash.Verify(content)
}
