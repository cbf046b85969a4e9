package cbfs

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay/wire"
)

// Self-healing support (relay/heal, docs/RELAY.md "Self-healing"): the
// writer gives the relays of a commitment the volume's stripe map, so that
// they can rebuild a dead relay's shards from any K others without the
// owner; readers then find a rebuilt shard where the repairing relay
// recorded it on chain.

// ShardLocator is a Directory that also knows the shards relays moved by
// repair (the Storage Manager's repair_placement overrides).
type ShardLocator interface {
	// MovedShards maps shard ids of vol to where repair moved them.
	MovedShards(ctx context.Context, vol VolumeID) (map[[32]byte]MovedShard, error)
}

// MovedShard is a shard moved by repair: off Origin (the relay the owner's
// manifest names), now held by Holder.
type MovedShard struct {
	Origin, Holder RelayID
}

// movedTTL bounds how long a volume's override list is reused.
const movedTTL = 2 * time.Second

type movedCache struct {
	mu  sync.Mutex
	at  time.Time
	loc map[[32]byte]MovedShard
}

// StripeMap is the manifest's stripe map at version (shards in index
// order, with the relays the manifest names).
func (m *Manifest) StripeMap(version uint64) *wire.StripeMap {
	sm := &wire.StripeMap{Volume: m.Volume, Version: version, K: m.K, M: m.M}
	for _, f := range m.Files {
		for _, s := range f.Segments {
			st := wire.Stripe{ShardSize: s.ShardSize, Shards: make([]wire.StripeShard, len(s.Shards))}
			for i, sh := range s.Shards {
				st.Shards[i] = wire.StripeShard{ID: sh.ID, Hash: sh.Hash, Relay: sh.Relay}
			}
			sm.Stripes = append(sm.Stripes, st)
		}
	}
	return sm
}

// storeStripes gives every relay of the placement the stripe map of
// version (best effort: a relay without it does not heal this version).
func (v *Volume) storeStripes(ctx context.Context, version uint64, m *Manifest, place []RelayPlacement) {
	sm := m.StripeMap(version)
	if len(sm.Stripes) == 0 {
		return
	}
	body, err := wire.Marshal(sm)
	if err != nil {
		return
	}
	_, byID, err := v.c.relays(ctx)
	if err != nil {
		return
	}
	req := wire.Request{Op: wire.OpPut, Kind: wire.KindStripes, ID: wire.StripesID(v.id, version), Version: version,
		Hash: merkle.Sum(body), Size: uint64(len(body))}
	var wg sync.WaitGroup
	for _, p := range place {
		r, ok := byID[p.Relay]
		if !ok || v.c.pool.Down(r.Addr, r.PubKey) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rq := req
			if _, err := v.c.call(ctx, v.sess, r, &rq, bytes.NewReader(body)); err != nil {
				v.c.log.Debug("store stripe map", "relay", r.ID.String(), "err", err)
			}
		}()
	}
	wg.Wait()
}

// relocate returns seg with the shards that relays moved by repair named at
// their new holders. It asks the directory only when a shard's relay is
// unknown or unhealthy (the happy path costs nothing), and follows a move
// only off the relay the manifest names, and only when that relay is
// unhealthy: an override can never divert a read from a healthy holder.
func (v *Volume) relocate(ctx context.Context, byID map[RelayID]RelayInfo, seg *Segment) *Segment {
	loc, ok := v.c.cfg.Directory.(ShardLocator)
	if !ok {
		return seg
	}
	need := false
	for _, sh := range seg.Shards {
		if r, ok := byID[sh.Relay]; !ok || !r.Healthy {
			need = true
		}
	}
	if !need {
		return seg
	}
	mc := &v.moved
	mc.mu.Lock()
	if mc.loc == nil || time.Since(mc.at) > movedTTL {
		if m, err := loc.MovedShards(ctx, v.id); err == nil {
			mc.loc, mc.at = m, time.Now()
		} else {
			v.c.log.Debug("moved shards lookup", "volume", v.id.String(), "err", err)
		}
	}
	moved := mc.loc
	mc.mu.Unlock()
	var out *Segment
	for i, sh := range seg.Shards {
		if r, ok := byID[sh.Relay]; ok && r.Healthy {
			continue
		}
		if mv, ok := moved[sh.ID]; ok && mv.Origin == sh.Relay && mv.Holder != sh.Relay {
			if out == nil {
				c := *seg
				c.Shards = append([]ShardRef(nil), seg.Shards...)
				out = &c
			}
			out.Shards[i].Relay = mv.Holder
		}
	}
	if out == nil {
		return seg
	}
	return out
}

// StripeMap is the stripe map of the volume's latest manifest: the shards
// of every segment and the relays the manifest names for them (before any
// repair moved them; see ShardLocator).
func (v *Volume) StripeMap(ctx context.Context) (*wire.StripeMap, error) {
	m, err := v.latest(ctx)
	if err != nil {
		return nil, err
	}
	return m.StripeMap(m.Version), nil
}
