package cbfs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/wire"
)

// RepairOptions tune Volume.Repair.
type RepairOptions struct {
	// Audit challenges every shard (a random 1 KiB range with a Merkle
	// proof against the shard hash) in addition to checking relay health.
	Audit bool
	// Suspects are shards reported bad (e.g. by OnShardFailure); they are
	// challenged even without Audit.
	Suspects []ShardFault
	// MaxBytesPerSecond limits rebuilt shard bytes written (0 = unlimited).
	MaxBytesPerSecond int64
	// MergePending makes each Repairer pass also merge entries committed
	// by prefix-restricted writers (Volume.MergePending).
	MergePending bool
}

// RepairReport summarises one repair pass.
type RepairReport struct {
	Shards   int    // shards examined
	Bad      int    // shards found missing, unreachable or corrupt
	Repaired int    // shards rebuilt and placed on a healthy relay
	Failed   int    // shards that could not be repaired
	Skipped  int    // shards already being repaired by another pass
	Version  uint64 // manifest version committed (0 if none)
}

type shardLoc struct {
	fileID [16]byte
	seg    int
	idx    int
}

// Repair checks every shard of the volume and rebuilds the ones that are on
// unhealthy or unknown relays, fail their challenge, or cannot be read, from
// any K intact shards of their segment, placing them on healthy relays that
// do not already hold a shard of that segment. The new placement is
// committed as a new manifest version. Concurrent passes skip shards another
// pass is repairing. Requires read, write and delete permission and the
// volume key (the owner, or a full delegate).
func (v *Volume) Repair(ctx context.Context, o RepairOptions) (RepairReport, error) {
	var rep RepairReport
	rw := captoken.PermRead | captoken.PermWrite
	if !v.hasKey || v.caveats.Prefix != "" || v.caveats.Perms&rw != rw {
		return rep, fmt.Errorf("%w: repair needs an unrestricted read+write token", ErrPermission)
	}
	m, err := v.latest(ctx)
	if err != nil {
		return rep, err
	}
	healthy, byID, err := v.c.relays(ctx)
	if err != nil {
		return rep, err
	}
	suspect := map[[32]byte]bool{}
	for _, s := range o.Suspects {
		if s.Volume == v.id {
			suspect[s.Shard.ID] = true
		}
	}
	cd, err := newCodec(int(m.K), int(m.M))
	if err != nil {
		return rep, err
	}

	// Pass 1: find bad shards.
	type segWork struct {
		f   *FileEntry
		seg int
		bad []int
	}
	var work []segWork
	var mu sync.Mutex
	sem := make(chan struct{}, v.c.parallelism(int(m.K)+int(m.M)))
	var wg sync.WaitGroup
	for fi := range m.Files {
		f := &m.Files[fi]
		for si := range f.Segments {
			seg := &f.Segments[si]
			badIdx := make([]bool, len(seg.Shards))
			for i, sh := range seg.Shards {
				rep.Shards++
				r, ok := byID[sh.Relay]
				if !ok || !r.Healthy {
					badIdx[i] = true
					continue
				}
				if !o.Audit && !suspect[sh.ID] {
					continue
				}
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					if err := v.challenge(ctx, r, seg, sh); err != nil {
						v.c.log.Warn("shard failed audit", "relay", r.ID.String(), "shard", fmt.Sprintf("%x", sh.ID[:6]), "err", err)
						mu.Lock()
						badIdx[i] = true
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			var bad []int
			for i, b := range badIdx {
				if b {
					bad = append(bad, i)
				}
			}
			if len(bad) > 0 {
				work = append(work, segWork{f, si, bad})
				rep.Bad += len(bad)
			}
		}
	}
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}
	if len(work) == 0 {
		return rep, nil
	}

	// Pass 2: rebuild, deduplicated against concurrent passes.
	lim := newLimiter(o.MaxBytesPerSecond)
	moved := map[shardLoc]ShardRef{}
	var stale []struct {
		r  RelayInfo
		id [32]byte
	}
	for _, w := range work {
		seg := &w.f.Segments[w.seg]
		var mine []int
		v.mu.Lock()
		if v.repairing == nil {
			v.repairing = map[[32]byte]bool{}
		}
		for _, i := range w.bad {
			if v.repairing[seg.Shards[i].ID] {
				rep.Skipped++
				continue
			}
			v.repairing[seg.Shards[i].ID] = true
			mine = append(mine, i)
		}
		v.mu.Unlock()
		if len(mine) == 0 {
			continue
		}
		err := func() error {
			defer func() {
				v.mu.Lock()
				for _, i := range mine {
					delete(v.repairing, seg.Shards[i].ID)
				}
				v.mu.Unlock()
			}()
			// Treat the bad shards as absent while reading.
			view := *seg
			view.Shards = append([]ShardRef(nil), seg.Shards...)
			for _, i := range mine {
				view.Shards[i].Relay = RelayID{}
			}
			shards, err := v.readShards(ctx, cd, byID, &view, false, true)
			if err != nil {
				return err
			}
			used := map[RelayID]bool{}
			for i, sh := range seg.Shards {
				if !containsInt(mine, i) {
					used[sh.Relay] = true
				}
			}
			for _, i := range mine {
				ref := seg.Shards[i]
				var target *RelayInfo
				// Start at a per-shard offset to spread repairs.
				off := int(binary.BigEndian.Uint32(ref.ID[:4])) % max(len(healthy), 1)
				for k := range healthy {
					r := healthy[(off+k)%len(healthy)]
					if !used[r.ID] && r.ID != ref.Relay && !v.c.pool.Down(r.Addr, r.PubKey) {
						target = &r
						break
					}
				}
				replaceInPlace := false
				if target == nil {
					// No spare relay: a corrupt copy on a healthy relay is
					// replaced in place (delete, then put the rebuilt shard).
					if r, ok := byID[ref.Relay]; ok && r.Healthy && !v.c.pool.Down(r.Addr, r.PubKey) {
						target, replaceInPlace = &r, true
					} else {
						rep.Failed++
						continue
					}
				}
				if merkle.Sum(shards[i]) != ref.Hash {
					return fmt.Errorf("%w: rebuilt shard %d does not match its hash", ErrIntegrity, i)
				}
				if err := lim.wait(ctx, len(shards[i])); err != nil {
					return err
				}
				if replaceInPlace {
					if _, err := v.c.call(ctx, v.sess, *target, &wire.Request{Op: wire.OpDelete, ID: ref.ID}, nil); err != nil {
						v.c.log.Warn("repair: delete corrupt copy failed", "relay", target.ID.String(), "err", err)
						rep.Failed++
						continue
					}
				}
				_, err := v.c.call(ctx, v.sess, *target, &wire.Request{Op: wire.OpPut, Kind: wire.KindShard, ID: ref.ID,
					Hash: ref.Hash, Size: uint64(len(shards[i]))}, bytes.NewReader(shards[i]))
				if err != nil {
					v.c.log.Warn("repair placement failed", "relay", target.ID.String(), "err", err)
					rep.Failed++
					continue
				}
				used[target.ID] = true
				if old, ok := byID[ref.Relay]; ok && old.Healthy && !replaceInPlace {
					stale = append(stale, struct {
						r  RelayInfo
						id [32]byte
					}{old, ref.ID})
				}
				nr := ref
				nr.Relay = target.ID
				moved[shardLoc{w.f.FileID, w.seg, i}] = nr
				rep.Repaired++
			}
			return nil
		}()
		if err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			v.c.log.Warn("segment repair failed", "path", w.f.Path, "segment", w.seg, "err", err)
			rep.Failed += len(mine)
		}
	}
	if len(moved) == 0 {
		return rep, nil
	}
	next, err := v.commit(ctx, func(cur *Manifest) (*Manifest, error) {
		n := cur.clone()
		for fi := range n.Files {
			f := &n.Files[fi]
			for si := range f.Segments {
				for i := range f.Segments[si].Shards {
					if nr, ok := moved[shardLoc{f.FileID, si, i}]; ok && f.Segments[si].Shards[i].ID == nr.ID {
						f.Segments[si].Shards[i] = nr
					}
				}
			}
		}
		return n, nil
	}, false)
	if err != nil {
		return rep, fmt.Errorf("cbfs: commit repair: %w", err)
	}
	rep.Version = next.Version
	// Drop the bad copies still held by healthy relays (best effort).
	for _, s := range stale {
		v.c.call(ctx, v.sess, s.r, &wire.Request{Op: wire.OpDelete, ID: s.id}, nil)
	}
	return rep, nil
}

func containsInt(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// challenge asks r to prove a random chunk of a shard against its hash.
func (v *Volume) challenge(ctx context.Context, r RelayInfo, seg *Segment, sh ShardRef) error {
	var b [8]byte
	rand.Read(b[:])
	off := uint64(0)
	if seg.ShardSize > 0 {
		off = binary.BigEndian.Uint64(b[:]) % uint64(seg.ShardSize)
	}
	n := uint64(1)
	resp, err := v.c.call(ctx, v.sess, r, &wire.Request{Op: wire.OpChallenge, ID: sh.ID, Offset: off, Length: n}, nil)
	if err != nil {
		return err
	}
	if resp.Challenge == nil {
		return fmt.Errorf("%w: empty challenge answer", ErrIntegrity)
	}
	if err := resp.Challenge.Verify(sh.Hash, off, n); err != nil {
		return fmt.Errorf("%w: %v", ErrIntegrity, err)
	}
	return nil
}

// limiter is a simple byte-rate limiter.
type limiter struct {
	rate  int64
	start time.Time
	sent  int64
}

func newLimiter(rate int64) *limiter { return &limiter{rate: rate, start: time.Now()} }

func (l *limiter) wait(ctx context.Context, n int) error {
	if l.rate <= 0 {
		return nil
	}
	l.sent += int64(n)
	due := l.start.Add(time.Duration(float64(l.sent) / float64(l.rate) * float64(time.Second)))
	d := time.Until(due)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Repairer runs repair passes for one volume: every Interval, and soon after
// shard faults are reported. Faults are deduplicated by shard id.
type Repairer struct {
	v        *Volume
	opts     RepairOptions
	interval time.Duration
	kick     chan struct{}

	mu       sync.Mutex
	suspects map[[32]byte]ShardFault
	last     RepairReport
}

// NewRepairer returns a repairer; wire Report into Config.OnShardFailure.
func NewRepairer(v *Volume, opts RepairOptions, interval time.Duration) *Repairer {
	if interval <= 0 {
		interval = 10 * time.Minute
	}
	return &Repairer{v: v, opts: opts, interval: interval, kick: make(chan struct{}, 1), suspects: map[[32]byte]ShardFault{}}
}

// Report queues a shard fault (non-blocking, deduplicated).
func (r *Repairer) Report(f ShardFault) {
	if f.Volume != r.v.id {
		return
	}
	r.mu.Lock()
	r.suspects[f.Shard.ID] = f
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Last returns the report of the last pass.
func (r *Repairer) Last() RepairReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// Run repairs until ctx ends; it returns ctx.Err().
func (r *Repairer) Run(ctx context.Context) error {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-r.kick:
		}
		r.mu.Lock()
		opts := r.opts
		for _, f := range r.suspects {
			opts.Suspects = append(opts.Suspects, f)
		}
		r.suspects = map[[32]byte]ShardFault{}
		r.mu.Unlock()
		if opts.MergePending {
			if _, err := r.v.MergePending(ctx); err != nil && ctx.Err() == nil {
				r.v.c.log.Warn("merge pending entries failed", "volume", r.v.id.String(), "err", err)
			}
		}
		rep, err := r.v.Repair(ctx, opts)
		if err != nil && !errors.Is(err, context.Canceled) {
			r.v.c.log.Warn("repair pass failed", "volume", r.v.id.String(), "err", err)
			// retry the suspects next time
			r.mu.Lock()
			for _, f := range opts.Suspects {
				r.suspects[f.Shard.ID] = f
			}
			r.mu.Unlock()
		}
		r.mu.Lock()
		r.last = rep
		r.mu.Unlock()
	}
}
