package storage

import (
	"bytes"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Self-healing (docs/RELAY.md, "Self-healing"): a relay that holds part of
// a volume rebuilds a shard of an unhealthy relay from K others, stores it
// on a healthy relay and records the move with repair_placement. The move
// is a per-shard override of the owner's placement: readers look the shard
// up at its new holder, and a later move starts from that holder.

// Moved is the override of one shard's location.
type Moved struct {
	_        struct{}      `cbor:",toarray"`
	Origin   types.Address // the relay the owner's placement named
	Holder   types.Address // the relay holding the shard now
	Hash     types.Hash    // the shard's chunk-tree root
	Size     uint64
	Version  uint64 // placement version the move was proved against
	Height   uint64 // height of the move
	Repairer types.Address
}

// MovedKey is the state key of a shard's location override.
func MovedKey(vol, shard types.Hash) []byte { return smKey([]byte("moved/"), vol[:], shard[:]) }

// MovedPrefix prefixes a volume's location overrides (by shard id).
func MovedPrefix(vol types.Hash) []byte { return smKey([]byte("moved/"), vol[:]) }

// ReadMoved decodes a shard's location override (nil if none).
func ReadMoved(r state.Reader, vol, shard types.Hash) (*Moved, error) {
	return system.Get[Moved](r, MovedKey(vol, shard), "decode moved shard")
}

// RelayUsable reports whether a relay is active, heard from within the
// heartbeat timeout and not flagged by failed challenges: what
// repair_placement calls healthy.
func (p Params) RelayUsable(r state.Reader, id types.Address, height uint64) (bool, error) {
	rel, err := ReadRelay(r, id)
	if err != nil || rel == nil {
		return false, err
	}
	if !rel.Healthy(height, p.HeartbeatTimeout) {
		return false, nil
	}
	st, err := ReadRelayStats(r, id)
	if err != nil {
		return false, err
	}
	return !st.Flagged(p.Epoch(height)), nil
}

// CheckRepair is the pure part of repair_placement's checks: the leaf is
// in from's placement summary at the leaf's index (or an earlier move put
// it on from), given the sender's and the relays' health. It returns the
// failure code (0: allowed).
func CheckRepair(pl *Placement, moved *Moved, senderHolds, senderUsable, fromUsable, toUsable bool, in *types.RepairPlacement) (system.Code, string) {
	switch {
	case in.ShardSize == 0 || len(in.LeafPath) > challenge.MaxProofDepth:
		return system.CodeInvalidRepair, "InvalidRepair: zero shard size or a proof deeper than the placement tree allows"
	case !senderHolds || !senderUsable:
		return system.CodeNotRepairer, "NotRepairer: only a healthy relay holding part of the volume may move its shards"
	case fromUsable:
		return system.CodeSourceHealthy, "SourceHealthy: the relay losing the shard is healthy"
	case in.To == in.From || !toUsable:
		return system.CodeBadRepairTarget, "BadRepairTarget: the new holder must be a healthy active relay other than the old one"
	}
	if moved != nil {
		if moved.Holder != in.From || moved.Hash != in.ShardHash || moved.Size != in.ShardSize {
			return system.CodeShardNotHeld, "ShardNotHeld: the shard was moved and From no longer holds it"
		}
		return 0, ""
	}
	if pl == nil || pl.Version != in.Version {
		return system.CodeShardNotHeld, "ShardNotHeld: no placement at that version"
	}
	var sum *types.RelayPlacement
	for i := range pl.Relays {
		if pl.Relays[i].Relay == in.From {
			sum = &pl.Relays[i]
		}
	}
	if sum == nil {
		// The writer could not reach From when it committed, so the
		// commitment has no summary to prove against. The move is taken
		// unproved: it only tells readers where to look for a shard the
		// owner's manifest puts on From (readers follow it only off that
		// relay, and check the shard's hash).
		if len(in.LeafPath) != 0 {
			return system.CodeShardNotHeld, "ShardNotHeld: From is not in the placement; send no leaf path"
		}
		return 0, ""
	}
	if in.LeafIndex >= sum.Count {
		return system.CodeShardNotHeld, "ShardNotHeld: From holds no such leaf of the volume"
	}
	leaf := challenge.Leaf{ID: in.ShardID, Hash: in.ShardHash, Size: in.ShardSize}
	if err := merkle.Verify(sum.ShardsRoot, leaf.LeafHash(), merkle.Proof{Index: in.LeafIndex, Leaves: sum.Count, Siblings: hashes(in.LeafPath)}); err != nil {
		return system.CodeShardNotHeld, "ShardNotHeld: the leaf is not in From's placement"
	}
	return 0, ""
}

// holdsPart reports whether id is named by the placement or holds a moved
// shard of the volume.
func (x *txCtx) holdsPart(pl *Placement, vol types.Hash, id types.Address) (bool, error) {
	if pl != nil {
		for _, r := range pl.Relays {
			if r.Relay == id {
				return true, nil
			}
		}
	}
	found := false
	err := x.State().Scan(MovedPrefix(vol), func(_, v []byte) error {
		var m Moved
		if err := codec.Unmarshal(v, &m); err != nil {
			return err
		}
		if m.Holder == id {
			found = true
		}
		return nil
	})
	return found, err
}

func (x *txCtx) repairPlacement(from types.Address, in *types.RepairPlacement) error {
	acct, err := x.existingVolumeAccount(in.Volume)
	if err != nil {
		return err
	}
	if acct.Evicted != 0 {
		return system.Failf(system.CodeVolumeEvicted, "VolumeEvicted: volume %s was evicted at height %d", in.Volume, acct.Evicted)
	}
	pl, err := ReadPlacement(x.State(), in.Volume)
	if err != nil {
		return err
	}
	moved, err := ReadMoved(x.State(), in.Volume, in.ShardID)
	if err != nil {
		return err
	}
	h := x.Env().Height
	holds, err := x.holdsPart(pl, in.Volume, from)
	if err != nil {
		return err
	}
	var usable [3]bool
	for i, id := range []types.Address{from, in.From, in.To} {
		if usable[i], err = x.m.p.RelayUsable(x.State(), id, h); err != nil {
			return err
		}
	}
	if code, msg := CheckRepair(pl, moved, holds, usable[0], usable[1], usable[2], in); code != 0 {
		return system.Failf(code, "%s", msg)
	}
	rec := &Moved{Origin: in.From, Holder: in.To, Hash: in.ShardHash, Size: in.ShardSize, Version: in.Version, Height: h, Repairer: from}
	if moved != nil {
		rec.Origin, rec.Version = moved.Origin, moved.Version
	}
	x.State().Set(MovedKey(in.Volume, in.ShardID), codec.MustMarshal(rec))
	x.Emit(types.StorageManagerAddress, &ShardMovedEvent{Volume: in.Volume, Shard: in.ShardID, From: in.From, To: in.To, Repairer: from})
	return nil
}

// clearMoved drops a volume's overrides when it is evicted. (A new
// commitment keeps them: the owner's manifest still names the original
// relay, and shard ids are unique, so the override stays true.)
func (x *txCtx) clearMoved(vol types.Hash) error {
	var keys [][]byte
	if err := x.State().Scan(MovedPrefix(vol), func(k, _ []byte) error {
		keys = append(keys, bytes.Clone(k))
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		x.State().Delete(k)
	}
	return nil
}
