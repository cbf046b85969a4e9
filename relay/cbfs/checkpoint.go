package cbfs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Checkpoints. Commits are durable on the relays (head.go); the Anchor (the
// on-chain StorageCommitment, which challenges and rent follow) records a
// checkpoint of the head: asynchronously, at most every
// Config.CheckpointInterval after a commit, and at once on Checkpoint
// (`cowboy volume sync`). An anchor only ever names a head a relay majority
// already holds. The anchor's version is its own sequence number: it counts
// checkpoints, not manifest versions.

// checkpointer is a Volume's checkpoint state. mu serializes checkpoints;
// timer (guarded by Volume.mu) is the scheduled one.
type checkpointer struct {
	mu     sync.Mutex
	timer  *time.Timer
	warned bool
	doomed []doomedShards // guarded by Volume.mu
}

// doomedShards are shards no manifest from version on references; they are
// deleted once a checkpoint at or after version is anchored, because the
// anchored placement (which the chain challenges) may still name them.
type doomedShards struct {
	version uint64
	segs    []Segment
}

// doom queues dead shards for deletion after the next anchor (or deletes
// them now when the volume is never anchored with a placement).
func (v *Volume) doom(ctx context.Context, version uint64, segs []Segment) {
	if _, ok := v.c.cfg.Anchor.(PlacementAnchor); !ok || v.c.cfg.CheckpointInterval < 0 {
		v.deleteShards(ctx, FileEntry{Segments: segs})
		return
	}
	v.mu.Lock()
	v.ckpt.doomed = append(v.ckpt.doomed, doomedShards{version, segs})
	v.mu.Unlock()
	v.checkpointSoon()
}

// reap deletes the doomed shards that the anchored version no longer names.
func (v *Volume) reap(ctx context.Context, anchored uint64) {
	v.mu.Lock()
	var now []Segment
	keep := v.ckpt.doomed[:0]
	for _, d := range v.ckpt.doomed {
		if d.version <= anchored {
			now = append(now, d.segs...)
		} else {
			keep = append(keep, d)
		}
	}
	v.ckpt.doomed = keep
	v.mu.Unlock()
	if len(now) > 0 {
		v.deleteShards(ctx, FileEntry{Segments: now})
	}
}

// checkpointSoon schedules a checkpoint within the interval.
func (v *Volume) checkpointSoon() {
	v.c.track(v)
	d := v.c.cfg.CheckpointInterval
	if d < 0 || v.c.bg.Err() != nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ckpt.timer != nil {
		return
	}
	v.c.wg.Add(1)
	v.ckpt.timer = time.AfterFunc(d, func() {
		defer v.c.wg.Done()
		v.mu.Lock()
		v.ckpt.timer = nil
		v.mu.Unlock()
		if v.c.bg.Err() != nil {
			return
		}
		ctx, cancel := context.WithTimeout(v.c.bg, 2*time.Minute)
		defer cancel()
		err := v.Checkpoint(ctx)
		v.mu.Lock()
		warned := v.ckpt.warned
		v.ckpt.warned = err != nil
		v.mu.Unlock()
		switch {
		case err == nil, v.c.bg.Err() != nil:
		case !warned:
			v.c.log.Warn("cbfs: checkpoint not anchored (commits stay durable on the relays; retried after the next commit or on `cowboy volume sync`)",
				"volume", v.id.String(), "err", err)
		default:
			v.c.log.Debug("checkpoint not anchored", "volume", v.id.String(), "err", err)
		}
	})
}

// stop cancels a scheduled checkpoint and ends the per-relay senders once
// they are idle (Client.Close).
func (v *Volume) stop() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ckpt.timer != nil && v.ckpt.timer.Stop() {
		v.ckpt.timer = nil
		v.c.wg.Done()
	}
	for _, p := range v.pipes {
		close(p)
	}
	v.pipes = nil
}

// Checkpoint anchors the volume's current head now (if it is not anchored
// yet) and returns when the anchor has it. For the on-chain anchor this is
// a StorageCommitment carrying the placement that challenges and rent use.
func (v *Volume) Checkpoint(ctx context.Context) error {
	v.ckpt.mu.Lock()
	defer v.ckpt.mu.Unlock()
	v.mu.Lock()
	m, hash := v.cur, v.curRoot
	v.mu.Unlock()
	if m == nil {
		var err error
		if m, err = v.latest(ctx); err != nil {
			return err
		}
		hash = v.Root()
	}
	for attempt := 0; attempt < 4; attempt++ {
		root, seq, err := v.c.cfg.Anchor.LatestManifest(ctx, v.id)
		if errors.Is(err, ErrNotFound) {
			seq, err = 0, nil
		}
		if err != nil {
			return fmt.Errorf("cbfs: checkpoint: read anchor: %w", err)
		}
		if root == hash {
			v.reap(ctx, m.Version)
			return nil
		}
		if pa, ok := v.c.cfg.Anchor.(PlacementAnchor); ok {
			var place []RelayPlacement
			if place, err = m.Placement(); err != nil {
				return err
			}
			place = v.storePlacement(ctx, seq+1, place)
			v.storeStripes(ctx, seq+1, m, place)
			err = pa.CommitPlacement(ctx, v.id, hash, seq+1, m.plainBytes(), place)
		} else {
			err = v.c.cfg.Anchor.CommitManifest(ctx, v.id, hash, seq+1)
		}
		if errors.Is(err, ErrConflict) {
			continue // another writer anchored meanwhile
		}
		if err != nil {
			return fmt.Errorf("cbfs: checkpoint v%d: %w", m.Version, err)
		}
		v.reap(ctx, m.Version)
		return nil
	}
	return fmt.Errorf("%w: checkpoint: anchor kept moving", ErrConflict)
}
