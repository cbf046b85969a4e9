package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/internal/store"
	"github.com/cowboy-foundation/cowboy/relay/wire"
)

// ErrNoPlacement reports that the relay has no placement list matching a
// commitment: it cannot answer challenges for it and should refuse it.
var ErrNoPlacement = errors.New("relay: no placement list matches the commitment")

// ErrMisstated reports a placement list that does not match the
// commitment's summary for the relay.
var ErrMisstated = errors.New("relay: commitment misstates the relay's holdings")

// MaxPlacementList bounds a placement list (72 bytes a shard: about
// 230,000 shards of one volume on one relay).
const MaxPlacementList = 16 << 20

// putPlacement accepts a placement list only if every shard it names is
// stored here with that hash and size, and its id is derived from its
// version and root: a list the relay holds is one it checked, so a matching
// list at challenge time means the relay did accept those shards.
func (n *Node) putPlacement(ctx context.Context, req *wire.Request, body io.Reader) error {
	if req.Size > MaxPlacementList {
		return fail(wire.StatusBadRequest, "placement list of %d bytes, at most %d", req.Size, MaxPlacementList)
	}
	b := make([]byte, req.Size)
	if _, err := io.ReadFull(body, b); err != nil {
		return fmt.Errorf("store: body short: %w", io.ErrUnexpectedEOF)
	}
	var leaves []challenge.Leaf
	if err := wire.Unmarshal(b, &leaves); err != nil {
		return fail(wire.StatusBadRequest, "placement list: %v", err)
	}
	sum, err := challenge.Summarize(leaves)
	if err != nil {
		return fail(wire.StatusBadRequest, "placement list: %v", err)
	}
	if wire.PlacementID(req.Volume, req.Version, sum.ShardsRoot) != req.ID {
		return fail(wire.StatusBadRequest, "placement list id is not PlacementID(volume, version, shards_root)")
	}
	for _, l := range leaves {
		m, err := n.store.Stat(req.Volume, l.ID)
		if err != nil || m.Kind != wire.KindShard || m.Hash != l.Hash || m.Size != l.Size {
			return fail(wire.StatusBadRequest, "placement list names shard %x, which this relay does not hold with that hash and size", l.ID[:8])
		}
	}
	return n.store.Put(ctx, req.Volume, req.ID, store.Meta{Kind: wire.KindPlacement, Version: req.Version, Size: req.Size, Hash: req.Hash}, bytes.NewReader(b))
}

// IsRefusable reports whether an Answer error means the commitment does not
// describe what the relay holds (no or a mismatching placement list).
func IsRefusable(err error) bool {
	return errors.Is(err, ErrNoPlacement) || errors.Is(err, ErrMisstated)
}

// Placement returns the relay's placement leaves for version of a volume,
// checked against the commitment's summary (count, bytes, shards_root). The
// list was stored by the owner with the shards, so a matching list means the
// relay accepted those shards: a shard of it that is lost or corrupt later is
// the relay's failure, not a misstatement.
func (n *Node) Placement(ctx context.Context, vol [32]byte, version uint64, sum challenge.Summary) ([]challenge.Leaf, error) {
	id := wire.PlacementID(vol, version, sum.ShardsRoot)
	m, r, _, err := n.store.Get(ctx, vol, id, 0, 0)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: volume %x v%d", ErrNoPlacement, vol[:8], version)
	}
	if err != nil {
		return nil, fmt.Errorf("relay: read placement list: %w", err)
	}
	defer r.Close()
	if m.Kind != wire.KindPlacement || m.Size > 64<<20 {
		return nil, fmt.Errorf("%w: object %x is not a placement list", ErrNoPlacement, id[:8])
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("relay: read placement list: %w", err)
	}
	var leaves []challenge.Leaf
	if err := wire.Unmarshal(b, &leaves); err != nil {
		return nil, fmt.Errorf("%w: decode: %v", ErrNoPlacement, err)
	}
	got, err := challenge.Summarize(leaves)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMisstated, err)
	}
	if got != sum {
		return nil, fmt.Errorf("%w: list has %d shards / %d bytes / root %x, commitment %d / %d / %x",
			ErrMisstated, got.Count, got.Bytes, got.ShardsRoot[:8], sum.Count, sum.Bytes, sum.ShardsRoot[:8])
	}
	return leaves, nil
}

// ProveChunk reads chunk i of a stored shard, re-verifying the whole shard
// against its recorded hash, and returns the chunk with its path to the
// shard hash. A shard that was deleted or corrupted on disk fails here.
func (n *Node) ProveChunk(ctx context.Context, vol, id [32]byte, i uint64) ([]byte, []merkle.Hash, error) {
	ch, err := n.store.Challenge(ctx, vol, id, i*merkle.ChunkSize, 1)
	if err != nil {
		return nil, nil, fmt.Errorf("relay: prove chunk %d of shard %x: %w", i, id[:8], err)
	}
	if len(ch.Chunks) != 1 || ch.First != i {
		return nil, nil, fmt.Errorf("relay: prove chunk %d of shard %x: store returned %d chunks from %d", i, id[:8], len(ch.Chunks), ch.First)
	}
	return bytes.Clone(ch.Chunks[0]), ch.Proofs[0].Siblings, nil
}

// Answer builds the answer to a challenge with seed against the relay's
// placement of a volume at version.
func (n *Node) Answer(ctx context.Context, vol [32]byte, version uint64, sum challenge.Summary, seed [32]byte) (*challenge.Answer, error) {
	leaves, err := n.Placement(ctx, vol, version, sum)
	if err != nil {
		return nil, err
	}
	li := challenge.LeafIndex(seed, sum.Count)
	leaf := leaves[li]
	lp, err := challenge.LeafProof(leaves, li)
	if err != nil {
		return nil, err
	}
	chunk, cp, err := n.ProveChunk(ctx, vol, leaf.ID, challenge.ChunkIndex(seed, leaf.Size))
	if err != nil {
		return nil, err
	}
	return &challenge.Answer{Leaf: leaf, LeafPath: lp, Chunk: chunk, ChunkPath: cp}, nil
}

// ChallengeEvent counts one piece of challenge work in the relay's metrics
// (cbfs_relay_storage_challenges_total); it matches onchain.Prover.OnEvent.
func (n *Node) ChallengeEvent(kind string, _ types.Hash, _ uint64, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	n.m.challenges.WithLabelValues(kind, result).Inc()
}

// PrunePlacements deletes the volume's placement lists of versions below
// below: once a version has been challenged, older ones never are again.
func (n *Node) PrunePlacements(vol [32]byte, below uint64) error {
	objs, err := n.store.List(vol, wire.KindPlacement, 0)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.Version < below {
			if err := n.store.Delete(vol, o.ID); err != nil {
				return err
			}
		}
	}
	return nil
}
