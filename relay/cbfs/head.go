package cbfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// Metadata commits (see docs/RELAY.md, "Metadata commits"). A commit is a
// head (wire.Head) signed by the writer and stored, compare-and-swap, on a
// majority of the healthy relays; its body is the sealed full manifest or,
// usually, the sealed change set against the previous version (changeSet),
// so a commit costs what it changes. A full manifest is written now and
// then (fullDue) so readers start from one and apply a bounded number of
// change sets. The anchor (on chain) is a checkpoint of some head, written
// asynchronously (checkpoint.go).

// When a full manifest is due (fullDue): besides when the change sets
// since the last one outgrow it (commitHead), after fullEvery change sets
// if a reader replaying them would copy the entry list more than
// replayEntries entries' worth (each change set is applied to a copy of
// the list), and always after maxSinceFull. A manifest of few entries but
// many bytes (small files inline) is thus not rewritten every fullEvery
// commits: a 5,000-file tar -x wrote 20 full manifests of up to 23 MB each
// (243 MB sealed, to each of six relays) for 25 MB of change sets.
const (
	fullEvery     = 256
	replayEntries = 1 << 21
	maxSinceFull  = 1024 // well below wire.MaxLog, the entries one log request returns
)

// fullDue reports whether the commit that would make since change sets
// after the last full manifest, of a manifest of files entries, must be a
// full manifest instead.
func fullDue(since, files int) bool {
	return since >= maxSinceFull || since >= fullEvery && since*max(files, 1) >= replayEntries
}

// changeSet is the body of a commit that is not full: the entries set (new
// or replaced) and the paths removed since the previous version.
type changeSet struct {
	Set []FileEntry `cbor:"1,keyasint,omitempty"`
	Del []string    `cbor:"2,keyasint,omitempty"`
}

// diff lists what changed from cur to next (both sorted by path).
func diff(cur, next *Manifest) changeSet {
	var cs changeSet
	i, j := 0, 0
	for i < len(cur.Files) || j < len(next.Files) {
		switch {
		case j == len(next.Files) || (i < len(cur.Files) && cur.Files[i].Path < next.Files[j].Path):
			cs.Del = append(cs.Del, cur.Files[i].Path)
			i++
		case i == len(cur.Files) || next.Files[j].Path < cur.Files[i].Path:
			cs.Set = append(cs.Set, next.Files[j])
			j++
		default:
			if !sameFile(&cur.Files[i], &next.Files[j]) {
				cs.Set = append(cs.Set, next.Files[j])
			}
			i++
			j++
		}
	}
	return cs
}

// SameEntry reports whether two entries are identical, comparing field by
// field (much cheaper than comparing their Hash).
func SameEntry(a, b *FileEntry) bool { return sameFile(a, b) }

// sameFile compares two entries field by field (cheaper than hashing).
func sameFile(a, b *FileEntry) bool {
	if a.Path != b.Path || a.Size != b.Size || a.ModTime != b.ModTime || a.FileID != b.FileID || a.Mode != b.Mode ||
		a.UID != b.UID || a.GID != b.GID || a.Target != b.Target || a.Ino != b.Ino || !bytes.Equal(a.Inline, b.Inline) || len(a.Segments) != len(b.Segments) {
		return false
	}
	for k := range a.Segments {
		x, y := &a.Segments[k], &b.Segments[k]
		if x.Size != y.Size || x.CipherSize != y.CipherSize || x.Nonce != y.Nonce || x.ShardSize != y.ShardSize || len(x.Shards) != len(y.Shards) {
			return false
		}
		for s := range x.Shards {
			if x.Shards[s] != y.Shards[s] {
				return false
			}
		}
	}
	return true
}

// apply returns m with cs applied (m is not modified).
func (cs *changeSet) apply(m *Manifest) *Manifest { return m.withChanges(cs.Set, cs.Del) }

// check validates the entries a change set sets (the rest of the manifest
// it applies to was validated before): work proportional to the change.
func (cs *changeSet) check(m *Manifest) error {
	for i := range cs.Set {
		f := &cs.Set[i]
		if p, err := CleanPath(f.Path); err != nil || p != f.Path {
			return fmt.Errorf("%w: change set: bad path %q", ErrIntegrity, f.Path)
		}
		if err := validEntry(m, f); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	return nil
}

// headState is the verified head a Volume's current manifest belongs to.
type headState struct {
	// confirmed: a relay majority holds head (it was committed here, or
	// read with majority support), so lagging or forked relays may be
	// caught up to its successors.
	confirmed bool
	head      *wire.Head // nil: a manifest committed by older clients (anchor only)
	hash      [32]byte   // wire.HeadHash, or the legacy manifest root
	sinceFull int        // change sets since the last full manifest
	fullSize  int        // sealed size of the last full manifest
	fullObj   [32]byte   // its object id
	deltaSize int        // sealed bytes of change sets since then
}

// quorum is the number of relays out of n that make a commit durable: a
// majority, so two commits of one version cannot both succeed.
func quorum(n int) int { return n/2 + 1 }

// signHead fills in the token and signature of h.
func (v *Volume) signHead(h *wire.Head) error {
	tok, err := v.sess.token()
	if err != nil {
		return err
	}
	h.Token = tok.Encode()
	h.Time = v.c.cfg.Now().Unix()
	h.Sig, err = captoken.SignRequest(v.c.cfg.Key, h.SigningHash())
	return err
}

// errHeadConflict marks a commit refused by enough relays that it cannot
// reach a quorum because the head moved.
var errHeadConflict = fmt.Errorf("%w: volume head moved", ErrConflict)

// putHead sends a signed head and its body to every healthy relay and
// returns once a quorum stored it. The remaining requests finish in the
// background so that slower relays stay in step.
func (v *Volume) putHead(ctx context.Context, relays []RelayInfo, enc []byte, h *wire.Head, body []byte, catchup bool) error {
	need := quorum(len(relays))
	if len(relays) == 0 {
		return ErrInsufficientRelays
	}
	type res struct{ err error }
	ch := make(chan res, len(relays))
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*v.c.cfg.RequestTimeout)
	for _, r := range relays {
		if v.c.pool.Down(r.Addr, r.PubKey) {
			// Just failed to connect: do not queue behind its timeouts; a
			// later full manifest catches it up.
			ch <- res{fmt.Errorf("relay %s: %w (recently unreachable)", r.ID.String()[:8], ErrInsufficientRelays)}
			v.needFull.Store(true)
			continue
		}
		v.sendInOrder(r, func() {
			req := wire.Request{Op: wire.OpCommit, Kind: wire.KindManifest, ID: h.Object, Version: h.Version, Head: enc,
				Hash: h.BodyHash, Size: h.BodySize}
			_, err := v.c.call(bg, v.sess, r, &req, bytes.NewReader(body))
			if errors.Is(err, ErrConflict) {
				if catchup && h.Full {
					req.Catchup = true
					_, err = v.c.call(bg, v.sess, r, &req, bytes.NewReader(body))
				} else {
					// The relay is behind or forked: the next commit is a
					// full manifest, which catches it up.
					v.needFull.Store(true)
				}
			}
			ch <- res{err}
		}, func() {
			v.needFull.Store(true)
			ch <- res{fmt.Errorf("relay %s: %w (too many commits queued for it)", r.ID.String()[:8], ErrInsufficientRelays)}
		})
	}
	ok, conflicts := 0, 0
	var errs []error
	for done := 0; done < len(relays); done++ {
		var r res
		select {
		case r = <-ch:
		case <-ctx.Done():
			go func() { // let the stragglers finish, then release
				for range len(relays) - done {
					<-ch
				}
				cancel()
			}()
			return ctx.Err()
		}
		switch {
		case r.err == nil:
			ok++
		case errors.Is(r.err, ErrConflict):
			conflicts++
			errs = append(errs, r.err)
		default:
			errs = append(errs, r.err)
		}
		if ok >= need {
			go func() {
				for range len(relays) - done - 1 {
					<-ch
				}
				cancel()
			}()
			return nil
		}
		if len(relays)-(done+1)+ok < need {
			go func() {
				for range len(relays) - done - 1 {
					<-ch
				}
				cancel()
			}()
			err := errors.Join(errs...)
			if conflicts > 0 && !errors.Is(err, ErrTokenExpired) && !errors.Is(err, ErrPermission) {
				return fmt.Errorf("%w (stored on %d of %d relays, need %d): %w", errHeadConflict, ok, len(relays), need, err)
			}
			if errors.Is(err, ErrPermission) || errors.Is(err, ErrTokenExpired) {
				return fmt.Errorf("stored on %d of %d relays, need %d: %w", ok, len(relays), need, err)
			}
			return fmt.Errorf("stored on %d of %d relays, need %d: %w: %w", ok, len(relays), need, ErrInsufficientRelays, err)
		}
	}
	cancel()
	return fmt.Errorf("stored on %d of %d relays, need %d: %w", ok, len(relays), need, ErrInsufficientRelays)
}

// commitHead commits next (built on the state st) as a head.
// cs, when not nil, is what changed from cur to next (else it is computed).
func (v *Volume) commitHead(ctx context.Context, st *headState, cur, next *Manifest, cs *changeSet) (*headState, error) {
	relays, cached, err := v.c.headRelays(ctx)
	if err != nil {
		return nil, err
	}
	h := &wire.Head{Volume: v.id, Version: next.Version, Prev: next.Prev}
	var plain []byte
	full := cur == nil || st == nil || st.head == nil || fullDue(st.sinceFull+1, len(next.Files)) || v.needFull.Swap(false)
	if !full {
		if cs == nil {
			d := diff(cur, next)
			cs = &d
		}
		if plain, err = wire.Marshal(cs); err != nil {
			return nil, fmt.Errorf("cbfs: encode change set: %w", err)
		}
		// Too many change bytes since the last full manifest: write one.
		full = st.deltaSize+len(plain) > max(st.fullSize, 64<<10)
	}
	if full {
		plain = next.encode()
	}
	sealed := sealManifest(v.key, v.id, next.Version, plain)
	h.Full = full
	h.BodyHash = merkle.Sum(sealed)
	h.BodySize = uint64(len(sealed))
	if full {
		h.Base = next.Version
		h.Object = crypto.Keccak256Hash([]byte("cbfs-manifest-v2"), v.id[:], u64(next.Version), h.BodyHash[:])
	} else {
		h.Base = st.head.Base
	}
	if err := v.signHead(h); err != nil {
		return nil, err
	}
	enc := h.Encode()
	err = v.putHead(ctx, relays, enc, h, sealed, st != nil && st.confirmed)
	if err != nil && cached && ctx.Err() == nil && !errors.Is(err, errHeadConflict) {
		// The reused listing may be out of date (a relay marked unhealthy
		// since): send the same head to the relays healthy now. Those that
		// stored it already answer OK.
		v.c.forgetHeadRelays()
		if relays, _, err = v.c.headRelays(ctx); err == nil {
			err = v.putHead(ctx, relays, enc, h, sealed, st != nil && st.confirmed)
		}
	}
	if err != nil {
		v.c.forgetHeadRelays()
		return nil, fmt.Errorf("cbfs: commit v%d: %w", next.Version, err)
	}
	ns := &headState{head: h, hash: wire.HeadHash(enc), confirmed: true}
	if full {
		ns.fullSize, ns.fullObj = len(sealed), h.Object
		if st != nil && st.fullObj != ([32]byte{}) && st.fullObj != h.Object {
			v.dropFull(relays, st.fullObj)
		}
	} else {
		ns.sinceFull, ns.fullSize, ns.deltaSize, ns.fullObj = st.sinceFull+1, st.fullSize, st.deltaSize+len(sealed), st.fullObj
	}
	return ns, nil
}

// dropFull deletes a full manifest that a newer one replaced (readers
// start from the newest), on each relay after the commit that replaced it.
// Best effort; only writers allowed to delete do it.
func (v *Volume) dropFull(relays []RelayInfo, obj [32]byte) {
	if v.caveats.Perms&captoken.PermDelete == 0 || v.caveats.Prefix != "" {
		return
	}
	for _, r := range relays {
		v.sendInOrder(r, func() {
			ctx, cancel := context.WithTimeout(v.c.bg, v.c.cfg.RequestTimeout)
			defer cancel()
			if _, err := v.c.call(ctx, v.sess, r, &wire.Request{Op: wire.OpDelete, Kind: wire.KindManifest, ID: obj}, nil); err != nil {
				v.c.log.Debug("delete replaced full manifest", "relay", r.ID.String(), "err", err)
			}
		}, func() {})
	}
}

// sendInOrder runs send after every earlier send to relay r has finished,
// so that each relay receives a writer's versions in order even though
// commits return as soon as a majority has them. When too many sends are
// queued for r (it is slow or gone), or the client is closed, it calls
// dropped instead (with the Volume locked).
func (v *Volume) sendInOrder(r RelayInfo, send, dropped func()) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.c.bg.Err() != nil {
		dropped()
		return
	}
	if v.pipes == nil {
		v.pipes = map[RelayID]chan func(){}
	}
	p, ok := v.pipes[r.ID]
	if !ok {
		p = make(chan func(), 1024)
		v.pipes[r.ID] = p
		go func() {
			for f := range p {
				f()
			}
		}()
	}
	select {
	case p <- send:
	default:
		dropped()
	}
}

// ---- reading the head ----

// relayHead is one relay's answer to OpHead.
type relayHead struct {
	r    RelayInfo
	enc  []byte
	head *wire.Head
	hash [32]byte
	err  error
}

// readHeads asks every relay for the head and returns once a majority
// answered (plus those that answered within a short grace).
func (v *Volume) readHeads(ctx context.Context, relays []RelayInfo) []relayHead {
	v.mu.Lock()
	var known [32]byte
	if v.state != nil && v.state.head != nil {
		known = v.state.hash // verified when it became current
	}
	v.mu.Unlock()
	ch := make(chan relayHead, len(relays))
	for _, r := range relays {
		go func() {
			resp, err := v.c.call(ctx, v.sess, r, &wire.Request{Op: wire.OpHead}, nil)
			rh := relayHead{r: r, err: err}
			if err == nil {
				rh.enc = resp.Head
				rh.hash = wire.HeadHash(resp.Head)
				rh.head, rh.err = wire.DecodeHead(resp.Head)
				if rh.err == nil && rh.hash != known {
					if rh.err = rh.head.Check(v.id); rh.err != nil {
						v.c.log.Warn("relay serves a head with a bad signature; ignored", "relay", r.ID.String(), "err", rh.err)
					}
				}
			}
			ch <- rh
		}()
	}
	var out []relayHead
	need := quorum(len(relays))
	var grace <-chan time.Time
	for len(out) < len(relays) {
		select {
		case rh := <-ch:
			out = append(out, rh)
			if len(out) == need {
				t := time.NewTimer(5 * time.Millisecond)
				defer t.Stop()
				grace = t.C
			}
			continue
		case <-grace:
		case <-ctx.Done():
		}
		break
	}
	return out
}

// fetchLog returns the verified chain of heads from..h.Version from relay
// r, ending in h (hash hh): each entry's hash is the Prev of the next.
func (v *Volume) fetchLog(ctx context.Context, r RelayInfo, from uint64, h *wire.Head, hh [32]byte) ([]*wire.Head, [][]byte, error) {
	reply, err := v.c.do(ctx, v.sess, r, &wire.Request{Op: wire.OpLog, Offset: from, Version: h.Version}, nil)
	if err != nil {
		return nil, nil, err
	}
	defer reply.Close()
	if reply.Size > 1<<30 {
		return nil, nil, fmt.Errorf("%w: log of %d bytes", ErrIntegrity, reply.Size)
	}
	buf := make([]byte, reply.Size)
	if _, err := io.ReadFull(reply.Body, buf); err != nil {
		return nil, nil, fmt.Errorf("relay %s: read log: %w", r.ID.String()[:8], err)
	}
	var ents []wire.LogEntry
	if err := wire.Unmarshal(buf, &ents); err != nil {
		return nil, nil, fmt.Errorf("%w: log from relay %s: %v", ErrIntegrity, r.ID.String()[:8], err)
	}
	if len(ents) == 0 || ents[len(ents)-1].Head == nil || wire.HeadHash(ents[len(ents)-1].Head) != hh {
		return nil, nil, fmt.Errorf("%w: relay %s log does not end at its head v%d", ErrIntegrity, r.ID.String()[:8], h.Version)
	}
	heads := make([]*wire.Head, len(ents))
	bodies := make([][]byte, len(ents))
	// The verified suffix: a relay that was caught up (wire.Request
	// Catchup) has a gap, or a fork's entries, before the version it
	// jumped to; callers check that the suffix reaches what they need.
	first := len(ents) - 1
	for i := len(ents) - 1; i >= 0; i-- {
		x, err := wire.DecodeHead(ents[i].Head)
		if err != nil {
			break
		}
		if i < len(ents)-1 {
			nx := heads[i+1]
			if nx.Prev != wire.HeadHash(ents[i].Head) || nx.Version != x.Version+1 {
				break
			}
		}
		heads[i], bodies[i], first = x, ents[i].Body, i
	}
	heads, bodies = heads[first:], bodies[first:]
	// Only the last head's signature needs checking (readHeads did): each
	// head commits to its predecessor's exact bytes, signature included,
	// and writers verify the head they build on.
	return heads, bodies, nil
}

// openBody decrypts and checks the body of h.
func (v *Volume) openBody(h *wire.Head, sealed []byte) ([]byte, error) {
	if uint64(len(sealed)) != h.BodySize || merkle.Sum(sealed) != h.BodyHash {
		return nil, fmt.Errorf("%w: body of v%d does not match its head", ErrIntegrity, h.Version)
	}
	return openManifest(v.key, v.id, h.Version, sealed)
}

// loadFull fetches and opens the full manifest of head h, from r first and
// then from the other relays.
func (v *Volume) loadFull(ctx context.Context, relays []RelayInfo, first RelayInfo, h *wire.Head) (*Manifest, error) {
	order := append([]RelayInfo{first}, relays...)
	var errs []error
	for _, r := range order {
		sealed, _, err := v.c.fetch(ctx, v.sess, r, wire.KindManifest, h.Object, 1<<30)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plain, err := v.openBody(h, sealed)
		if err != nil {
			v.c.log.Warn("relay serves a tampered manifest; ignored", "relay", r.ID.String(), "version", h.Version, "err", err)
			errs = append(errs, err)
			continue
		}
		m, err := decodeManifest(plain)
		if err == nil && (m.Volume != v.id || m.Version != h.Version || m.Prev != h.Prev) {
			err = fmt.Errorf("%w: manifest does not match head v%d", ErrIntegrity, h.Version)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return m, nil
	}
	return nil, fmt.Errorf("cbfs: load manifest v%d: %w", h.Version, errors.Join(errs...))
}

// build returns the manifest of the last head of chain: from the last
// full manifest in chain, or else from base (the manifest of the version
// before chain[0], whose state is baseSt), applying the change sets after.
func (v *Volume) build(ctx context.Context, relays []RelayInfo, r RelayInfo, base *Manifest, baseSt *headState, chain []*wire.Head, bodies [][]byte) (*Manifest, *headState, error) {
	start := 0
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].Full {
			start = i
			break
		}
	}
	m := base
	st := &headState{}
	if baseSt != nil {
		*st = *baseSt
	}
	for i := start; i < len(chain); i++ {
		h := chain[i]
		if h.Full {
			var err error
			if m, err = v.loadFull(ctx, relays, r, h); err != nil {
				return nil, nil, err
			}
			st = &headState{fullSize: int(h.BodySize), fullObj: h.Object}
			continue
		}
		if m == nil {
			return nil, nil, fmt.Errorf("%w: no full manifest before v%d", ErrNotFound, h.Version)
		}
		plain, err := v.openBody(h, bodies[i])
		if err != nil {
			return nil, nil, fmt.Errorf("relay %s: %w", r.ID.String()[:8], err)
		}
		var cs changeSet
		if err := unmarshalMeta(plain, &cs); err != nil {
			return nil, nil, fmt.Errorf("%w: change set v%d: %v", ErrIntegrity, h.Version, err)
		}
		if err := cs.check(m); err != nil {
			return nil, nil, err
		}
		m = cs.apply(m)
		m.Version, m.Prev = h.Version, h.Prev
		st.sinceFull++
		st.deltaSize += int(h.BodySize)
	}
	// A full manifest was validated when decoded, and each change set's
	// entries before they were applied.
	if err := m.validHeader(); err != nil {
		return nil, nil, err
	}
	last := chain[len(chain)-1]
	st.head, st.hash = last, wire.HeadHash(last.Encode())
	return m, st, nil
}
