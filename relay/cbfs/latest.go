package cbfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/wire"
)

// latest returns the latest committed manifest (shared; do not modify):
// the head held by a relay majority, checked by hash chain against the
// other relays' heads and, on first load, against the anchored checkpoint.
func (v *Volume) latest(ctx context.Context) (*Manifest, error) {
	if !v.hasKey {
		return nil, fmt.Errorf("%w: no volume key to read the manifest", ErrPermission)
	}
	relays, _, err := v.c.relays(ctx)
	if err != nil {
		return nil, err
	}
	answers := v.readHeads(ctx, relays)
	var valid []relayHead
	var errs []error
	notFound := 0
	for _, a := range answers {
		switch {
		case a.err == nil:
			valid = append(valid, a)
		case errors.Is(a.err, ErrNotFound):
			notFound++
		default:
			errs = append(errs, a.err)
		}
	}
	if len(valid) == 0 {
		if notFound > 0 && len(errs) == 0 {
			// No relay has a head: a volume last committed by an older
			// client (or not created yet). Read it through the anchor.
			return v.legacyLatest(ctx)
		}
		if cerr := ctx.Err(); cerr != nil {
			// The caller gave up: say so, not that relays are missing.
			return nil, fmt.Errorf("cbfs: read head of %s: %w", v.id, cerr)
		}
		err := errors.Join(errs...)
		if errors.Is(err, ErrTokenExpired) {
			return nil, fmt.Errorf("cbfs: read head of %s: %w", v.id, ErrTokenExpired)
		}
		if err == nil {
			err = ErrInsufficientRelays
		}
		return nil, fmt.Errorf("cbfs: read head of %s: %w", v.id, err)
	}
	v.mu.Lock()
	cur, st := v.cur, v.state
	v.mu.Unlock()

	// Distinct heads, newest first.
	type cand struct {
		a       relayHead
		holders int
		others  []RelayInfo // further relays serving the same head
	}
	byHash := map[[32]byte]*cand{}
	var cands []*cand
	for _, a := range valid {
		if c, ok := byHash[a.hash]; ok {
			c.holders++
			c.others = append(c.others, a.r)
			continue
		}
		c := &cand{a: a, holders: 1}
		byHash[a.hash] = c
		cands = append(cands, c)
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].a.head.Version != cands[j].a.head.Version {
			return cands[i].a.head.Version > cands[j].a.head.Version
		}
		return cands[i].holders > cands[j].holders
	})
	if len(cands) == 1 && st != nil && cands[0].a.hash == st.hash && cur != nil {
		return cur, nil // every relay that answered agrees with what we hold
	}
	need := quorum(len(relays))
	type verified struct {
		c       *cand
		chain   []*wire.Head
		bodies  [][]byte
		support int
	}
	var best *verified
	var lastErr error
	for _, c := range cands {
		// The log must reach back to where we can build from (the head we
		// hold, else the full manifest) and to the other relays' heads
		// (to count who supports this one); relays far behind are not
		// worth a long log and count as not supporting.
		h := c.a.head
		from := h.Base
		if st != nil && st.head != nil && st.head.Version <= h.Version {
			from = st.head.Version
		}
		for _, a := range valid {
			if a.head.Version < from && a.head.Version+64 >= h.Version {
				from = a.head.Version
			}
		}
		if h.Version >= wire.MaxLog && from <= h.Version-wire.MaxLog {
			from = h.Version - wire.MaxLog + 1
		}
		from = max(from, 1)
		// A relay that was caught up has gaps in its log: try the others
		// serving the same head.
		var chain []*wire.Head
		var bodies [][]byte
		err := errNoHolder
		for i, r := range append([]RelayInfo{c.a.r}, c.others...) {
			if chain, bodies, err = v.fetchLog(ctx, r, from, h, c.a.hash); err == nil {
				if i > 0 {
					c.a.r, c.others[i-1] = r, c.a.r
				}
				break
			}
			v.c.log.Debug("relay's head log does not verify", "relay", r.ID.String(), "version", h.Version, "err", err)
		}
		if err != nil {
			v.c.log.Warn("no relay serving this head has a log that verifies; avoiding it", "version", h.Version, "err", err)
			lastErr = err
			continue
		}
		onChain := func(ver uint64, hash [32]byte) bool {
			if ver < chain[0].Version || ver > h.Version {
				return false
			}
			return wire.HeadHash(chain[ver-chain[0].Version].Encode()) == hash
		}
		support := 0
		for _, a := range valid {
			if onChain(a.head.Version, a.hash) {
				support++
			}
		}
		vf := &verified{c, chain, bodies, support}
		// The same choice on every reader: most support, then newest,
		// then lowest hash.
		if best == nil || support > best.support || (support == best.support &&
			(h.Version > best.c.a.head.Version || (h.Version == best.c.a.head.Version && bytes.Compare(c.a.hash[:], best.c.a.hash[:]) < 0))) {
			best = vf
		}
		if support >= need {
			break
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w: no relay serves a head of %s that verifies: %w", ErrIntegrity, v.id, lastErr)
	}
	h := best.c.a.head
	// With every relay's head known and none on a majority, no version
	// beyond their common ancestor was acknowledged: a writer may catch
	// relays up to the chosen head.
	confirmed := best.support >= need || len(valid) == len(relays)
	if best.support < need {
		v.c.log.Warn("no head of the volume is confirmed by a relay majority; using the best supported one",
			"volume", v.id.String(), "version", h.Version, "support", best.support, "relays", len(relays))
	}
	for _, a := range valid {
		if a.hash == best.c.a.hash {
			continue
		}
		if a.head.Version > h.Version || (a.head.Version >= best.chain[0].Version && wire.HeadHash(best.chain[a.head.Version-best.chain[0].Version].Encode()) != a.hash) {
			v.c.log.Warn("relay serves a forked head; avoiding it", "relay", a.r.ID.String(), "its_version", a.head.Version, "head", h.Version)
		} else {
			v.c.log.Debug("relay serves a stale head", "relay", a.r.ID.String(), "its_version", a.head.Version, "head", h.Version)
		}
	}
	// Build from the relays serving the head, the one that gave the log
	// first; a relay whose metadata does not verify is skipped.
	m, ns, err := v.buildFrom(ctx, relays, best.c.a.r, best.chain, best.bodies, cur, st)
	for _, r := range best.c.others {
		if err == nil {
			break
		}
		if errors.Is(err, ErrIntegrity) {
			v.c.log.Warn("relay serves tampered metadata; avoiding it", "volume", v.id.String(), "err", err)
		}
		var chain []*wire.Head
		var bodies [][]byte
		if chain, bodies, err = v.fetchLog(ctx, r, min(best.chain[0].Version, h.Base), h, best.c.a.hash); err == nil {
			m, ns, err = v.buildFrom(ctx, relays, r, chain, bodies, cur, st)
		}
	}
	if errors.Is(err, ErrNotFound) && st != nil {
		// The head we hold is not on the chain (we followed a fork): start
		// over from the full manifest.
		return v.reload(ctx)
	}
	if err != nil {
		return nil, err
	}
	if st == nil {
		v.checkAnchor(ctx, best.chain)
	}
	if ns != st {
		ns.confirmed = confirmed
	}
	v.setState(m, ns)
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.cur, nil
}

// buildFrom builds the manifest of the last head of chain (served by r):
// from cur when its head (st) is on the chain, else from the full
// manifest the head is based on.
func (v *Volume) buildFrom(ctx context.Context, relays []RelayInfo, r RelayInfo, chain []*wire.Head, bodies [][]byte, cur *Manifest, st *headState) (*Manifest, *headState, error) {
	h := chain[len(chain)-1]
	var base *Manifest
	var baseSt *headState
	if st != nil && st.head != nil && cur != nil && st.head.Version >= chain[0].Version && st.head.Version <= h.Version &&
		wire.HeadHash(chain[st.head.Version-chain[0].Version].Encode()) == st.hash {
		k := int(st.head.Version-chain[0].Version) + 1
		if k == len(chain) {
			return cur, st, nil
		}
		base, baseSt = cur, st
		chain, bodies = chain[k:], bodies[k:]
	} else if h.Base >= chain[0].Version {
		k := int(h.Base - chain[0].Version)
		chain, bodies = chain[k:], bodies[k:]
	} else {
		return nil, nil, fmt.Errorf("%w: relay log does not reach the full manifest v%d", ErrNotFound, h.Base)
	}
	return v.build(ctx, relays, r, base, baseSt, chain, bodies)
}

var errNoHolder = errors.New("cbfs: no relay serves the head")

// reload forgets the head held and loads the latest from scratch.
func (v *Volume) reload(ctx context.Context) (*Manifest, error) {
	v.mu.Lock()
	v.cur, v.state = nil, nil
	v.mu.Unlock()
	return v.latest(ctx)
}

// checkAnchor reports a head that does not descend from the anchored
// checkpoint: the anchor is ahead of what the relays hold (their metadata
// was lost), or the relays serve a fork. The volume stays usable from the
// relays' majority head; the next checkpoint anchors it.
func (v *Volume) checkAnchor(ctx context.Context, chain []*wire.Head) {
	root, _, err := v.c.cfg.Anchor.LatestManifest(ctx, v.id)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			v.c.log.Warn("cannot read the anchored checkpoint", "volume", v.id.String(), "err", err)
		}
		return
	}
	if chain[0].Prev == root {
		return
	}
	for _, h := range chain {
		if wire.HeadHash(h.Encode()) == root {
			return
		}
	}
	last := chain[len(chain)-1]
	v.c.log.Warn("cbfs: the relays' head does not descend from the anchored checkpoint (the relays lost versions, or the anchor is older than their log); recovered from the newest version the relays hold",
		"volume", v.id.String(), "anchored_root", fmt.Sprintf("%x", root[:8]), "recovered_version", last.Version)
}

// setState makes m (with head state st) the current manifest unless a
// newer one is already current.
func (v *Volume) setState(m *Manifest, st *headState) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cur == nil || m.Version >= v.cur.Version {
		v.cur, v.curRoot, v.state = m, st.hash, st
	}
}

// commit applies mutate to the latest manifest and commits the result as
// the next version: a head stored on a relay majority (compare-and-swap).
// The first attempt builds on the manifest this Volume holds; when the
// relays refuse because the head moved, it reloads and re-applies mutate.
func (v *Volume) commit(ctx context.Context, mutate func(cur *Manifest) (*Manifest, error), create bool) (*Manifest, error) {
	return v.commitChanges(ctx, func(cur *Manifest) (*Manifest, *changeSet, error) {
		next, err := mutate(cur)
		if err != nil {
			return nil, nil, err
		}
		// mutate may have changed anything: check the whole result.
		if err := next.validate(); err != nil {
			return nil, nil, err
		}
		return next, nil, nil
	}, create)
}

// commitChanges is commit for a mutate that also says what it changed
// (cs, nil: unknown) and has validated what it changed, so that a commit
// costs work proportional to the change.
func (v *Volume) commitChanges(ctx context.Context, mutate func(cur *Manifest) (*Manifest, *changeSet, error), create bool) (*Manifest, error) {
	for attempt := 0; attempt < 16; attempt++ {
		var cur *Manifest
		var st *headState
		var curRoot [32]byte
		if !create {
			v.mu.Lock()
			cur, st, curRoot = v.cur, v.state, v.curRoot
			v.mu.Unlock()
			if cur == nil || attempt > 0 {
				if _, err := v.latest(ctx); err != nil {
					return nil, err
				}
				v.mu.Lock()
				cur, st, curRoot = v.cur, v.state, v.curRoot
				v.mu.Unlock()
			}
		}
		next, cs, err := mutate(cur)
		if err != nil {
			return nil, err
		}
		next.Version, next.Prev = 1, [32]byte{}
		if cur != nil {
			next.Version, next.Prev = v.nextVersion(cur), curRoot
		}
		ns, err := v.commitHead(ctx, st, cur, next, cs)
		if errors.Is(err, errHeadConflict) && !create {
			// Another writer committed first: back off a little so that
			// racing writers do not collide again at once.
			time.Sleep(time.Duration(rand.IntN(5<<min(attempt, 6))+1) * time.Millisecond)
			continue
		}
		if err != nil {
			return nil, err
		}
		v.setState(next, ns)
		v.checkpointSoon()
		return next, nil
	}
	return nil, fmt.Errorf("%w: gave up after retries", ErrConflict)
}
