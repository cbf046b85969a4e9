package cbfs

import (
	"bytes"
	"context"
	"sort"
	"sync"

	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay/wire"
)

// RelayPlacement is one relay's share of a manifest version: the leaves of
// its placement tree and their summary, which the StorageCommitment
// carries so that the Storage Manager can challenge the relay and bill rent.
type RelayPlacement struct {
	Relay  RelayID
	Leaves []challenge.Leaf // sorted by shard id
	challenge.Summary
}

// PlacementAnchor is an Anchor that also records per-relay placement with
// each commitment (the on-chain Storage Manager). Anchors without it (file,
// memory) are not billed.
type PlacementAnchor interface {
	Anchor
	CommitPlacement(ctx context.Context, vol VolumeID, root [32]byte, version, size uint64, placement []RelayPlacement) error
}

// Placement computes the per-relay placement of a manifest, sorted by relay.
func (m *Manifest) Placement() ([]RelayPlacement, error) {
	by := map[RelayID][]challenge.Leaf{}
	for _, f := range m.Files {
		for _, s := range f.Segments {
			for _, sh := range s.Shards {
				by[sh.Relay] = append(by[sh.Relay], challenge.Leaf{ID: sh.ID, Hash: sh.Hash, Size: uint64(s.ShardSize)})
			}
		}
	}
	out := make([]RelayPlacement, 0, len(by))
	for r, ls := range by {
		sorted, err := challenge.SortLeaves(ls)
		if err != nil {
			return nil, err
		}
		sum, err := challenge.Summarize(sorted)
		if err != nil {
			return nil, err
		}
		out = append(out, RelayPlacement{Relay: r, Leaves: sorted, Summary: sum})
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Relay[:], out[j].Relay[:]) < 0 })
	return out, nil
}

// plainBytes sums the plaintext bytes of a manifest.
func (m *Manifest) plainBytes() uint64 {
	var n uint64
	for _, f := range m.Files {
		n += uint64(f.Size)
	}
	return n
}

// storePlacement gives each relay of the placement its leaf list, which it
// needs to answer challenges. A relay that cannot be reached is left out of
// the placement (it is neither challenged nor paid for this version; repair
// moves its shards once the registry marks it unhealthy).
func (v *Volume) storePlacement(ctx context.Context, version uint64, place []RelayPlacement) []RelayPlacement {
	_, byID, err := v.c.relays(ctx)
	if err != nil {
		return nil
	}
	ok := make([]bool, len(place))
	var wg sync.WaitGroup
	for i, p := range place {
		r, known := byID[p.Relay]
		if !known || v.c.pool.Down(r.Addr, r.PubKey) {
			continue // not registered, or just failed to connect
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, err := wire.Marshal(p.Leaves)
			if err != nil {
				return
			}
			req := wire.Request{Op: wire.OpPut, Kind: wire.KindPlacement, ID: wire.PlacementID(v.id, version, p.ShardsRoot),
				Version: version, Hash: merkle.Sum(body), Size: uint64(len(body))}
			if _, err := v.c.call(ctx, v.sess, r, &req, bytes.NewReader(body)); err == nil {
				ok[i] = true
			}
		}()
	}
	wg.Wait()
	var out []RelayPlacement
	for i, p := range place {
		if ok[i] {
			out = append(out, p)
		}
	}
	return out
}
