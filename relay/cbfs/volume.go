package cbfs

import (
	"bytes"
	"context"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// Volume is an open volume. It is safe for concurrent use.
type Volume struct {
	c       *Client
	id      VolumeID
	key     [32]byte
	hasKey  bool
	owner   bool
	caveats captoken.Caveats
	tok     *captoken.Token // nil for the owner
	sess    *session

	mu      sync.Mutex
	cur     *Manifest
	curRoot [32]byte   // what an anchor names cur by: its head hash (or legacy root)
	state   *headState // the verified head cur belongs to
	pipes   map[RelayID]chan func()
	// needFull: a relay refused a commit (behind or forked); the next
	// commit writes a full manifest to catch it up.
	needFull atomic.Bool
	ckpt     checkpointer
	// unheld is an anchored (version, root) that no relay quorum holds
	// (left by a writer killed between anchoring and storing, by older
	// clients): cur was recovered from the relays instead, and the next
	// commit takes the version after it.
	unheldVer  uint64
	unheldRoot [32]byte
	repairing  map[[32]byte]bool
	moved      movedCache // shards relays moved by repair (stripes.go)
}

// FileInfo describes a committed file.
type FileInfo struct {
	Path     string
	Size     int64
	ModTime  time.Time
	Segments int
	// Mode is the POSIX st_mode recorded by the FUSE mount (0: a regular
	// file written by Put); Target is a symlink's target.
	Mode   uint32
	Target string
	// Pending is set by Commit for a path-prefix-restricted writer: the
	// file is stored but becomes visible only after a whole-volume writer
	// calls MergePending.
	Pending bool
}

// VolumeInfo describes a volume at its latest committed version.
type VolumeInfo struct {
	ID          VolumeID
	Owner       [20]byte
	K, M        int
	SegmentSize int
	Version     uint64
	Root        [32]byte
	Files       int
	Bytes       int64 // plaintext
	StoredBytes int64 // shard bytes on relays
	Perms       captoken.Perm
	Prefix      string
}

// ID is the volume id.
func (v *Volume) ID() VolumeID { return v.id }

// Root is the root of the latest manifest this Volume has seen.
func (v *Volume) Root() [32]byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.curRoot
}

func fileInfo(f *FileEntry) FileInfo {
	return FileInfo{Path: f.Path, Size: f.Size, ModTime: time.Unix(0, f.ModTime), Segments: len(f.Segments), Mode: f.Mode, Target: f.Target}
}

func (v *Volume) need(perm captoken.Perm, path string) error {
	if v.caveats.Perms&perm != perm {
		return fmt.Errorf("%w: token allows %s, need %s", ErrPermission, v.caveats.Perms, perm)
	}
	if path != "" {
		if err := v.caveats.AllowsPath(path); err != nil {
			return fmt.Errorf("%w: %v", ErrPermission, err)
		}
	}
	if perm&(captoken.PermRead|captoken.PermWrite) != 0 && !v.hasKey {
		return fmt.Errorf("%w: no volume key", ErrPermission)
	}
	return nil
}

// Manifest returns a copy of the latest committed manifest.
func (v *Volume) Manifest(ctx context.Context) (*Manifest, error) {
	m, err := v.latest(ctx)
	if err != nil {
		return nil, err
	}
	return m.clone(), nil
}

// Current returns the latest committed manifest without copying it (a
// refresh of a volume of many files then costs no copy of its entries).
// It is shared: do not modify it.
func (v *Volume) Current(ctx context.Context) (*Manifest, error) {
	return v.latest(ctx)
}

// params returns a manifest for the volume's coding parameters (K, M,
// segment size), which never change: the one held, without a relay round
// trip, else the latest.
func (v *Volume) params(ctx context.Context) (*Manifest, error) {
	v.mu.Lock()
	m := v.cur
	v.mu.Unlock()
	if m != nil {
		return m, nil
	}
	return v.latest(ctx)
}

// legacyLatest loads the manifest anchored by older clients, which wrote
// manifests as relay objects and anchored every version (no relay holds a
// head for the volume yet).
func (v *Volume) legacyLatest(ctx context.Context) (*Manifest, error) {
	root, ver, err := v.c.cfg.Anchor.LatestManifest(ctx, v.id)
	if errors.Is(err, ErrNotFound) {
		return v.recoverFromRelays(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("cbfs: anchor: %w", err)
	}
	v.mu.Lock()
	if v.cur != nil && ((v.cur.Version == ver && v.curRoot == root) || (v.unheldVer == ver && v.unheldRoot == root)) {
		m := v.cur
		v.mu.Unlock()
		return m, nil
	}
	v.mu.Unlock()
	relays, _, err := v.c.relays(ctx)
	if err != nil {
		return nil, err
	}
	id := manifestObjectID(v.id, ver, root)
	// Ask every relay at once; the first copy that decrypts and matches the
	// anchored root wins.
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type res struct {
		m   *Manifest
		err error
	}
	ch := make(chan res, len(relays))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, r := range relays {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sealed, _, err := v.c.fetch(fctx, v.sess, r, wire.KindManifest, id, 1<<30)
			if err != nil {
				ch <- res{err: err}
				return
			}
			m, err := v.openManifest(ver, sealed)
			if err == nil && m.Root() != root {
				err = fmt.Errorf("%w: manifest v%d from relay %s does not match anchored root", ErrIntegrity, ver, r.ID)
			}
			ch <- res{m, err}
		}()
	}
	var errs []error
	notFound := 0
	for range relays {
		r := <-ch
		if r.err != nil {
			errs = append(errs, r.err)
			if errors.Is(r.err, ErrNotFound) {
				notFound++
			}
			continue
		}
		v.setCurrent(r.m, root)
		return r.m, nil
	}
	if len(relays) > 0 && notFound == len(relays) {
		// Every relay answered and none holds the anchored version: it can
		// never be loaded. Recover rather than brick the volume.
		return v.recoverUnheld(ctx, ver, root)
	}
	err = errors.Join(errs...)
	if err == nil {
		err = ErrInsufficientRelays
	}
	if errors.Is(err, ErrTokenExpired) {
		return nil, fmt.Errorf("cbfs: load manifest v%d: %w", ver, ErrTokenExpired)
	}
	return nil, fmt.Errorf("cbfs: load manifest v%d of %s: %w", ver, v.id, err)
}

func (v *Volume) setCurrent(m *Manifest, root [32]byte) {
	v.setState(m, &headState{hash: root})
}

func (v *Volume) openManifest(ver uint64, sealed []byte) (*Manifest, error) {
	plain, err := openManifest(v.key, v.id, ver, sealed)
	if err != nil {
		return nil, err
	}
	m, err := decodeManifest(plain)
	if err != nil {
		return nil, err
	}
	if m.Volume != v.id || m.Version != ver {
		return nil, fmt.Errorf("%w: manifest for %s v%d, want %s v%d", ErrIntegrity, m.Volume, m.Version, v.id, ver)
	}
	return m, nil
}

// recoverUnheld recovers from an anchored version that no relay holds: it
// loads the newest version the relays hold, says so, and makes the next
// commit follow the anchored version.
func (v *Volume) recoverUnheld(ctx context.Context, ver uint64, root [32]byte) (*Manifest, error) {
	m, err := v.recoverFromRelays(ctx)
	if err != nil {
		return nil, fmt.Errorf("cbfs: anchored manifest v%d of %s is on no relay, and recovery failed: %w", ver, v.id, err)
	}
	v.mu.Lock()
	v.unheldVer, v.unheldRoot = ver, root
	v.mu.Unlock()
	v.c.log.Warn("cbfs: anchored manifest is held by no relay; recovered from the newest version the relays hold (changes of the lost version are gone)",
		"volume", v.id.String(), "anchored_version", ver, "anchored_root", fmt.Sprintf("%x", root[:8]),
		"recovered_version", m.Version, "recovered_root", fmt.Sprintf("%x", v.Root()))
	return m, nil
}

// nextVersion is the version a commit on top of cur takes: after cur, and
// after an unheld anchored version if cur was recovered past one.
func (v *Volume) nextVersion(cur *Manifest) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.unheldVer > cur.Version {
		return v.unheldVer + 1
	}
	return cur.Version + 1
}

// recoverFromRelays finds the newest manifest stored on relays that decrypts
// under the volume key (used when the anchor has no record, e.g. a fresh
// machine with only the owner key and volume id).
func (v *Volume) recoverFromRelays(ctx context.Context) (*Manifest, error) {
	relays, _, err := v.c.relays(ctx)
	if err != nil {
		return nil, err
	}
	type cand struct {
		r  RelayInfo
		id [32]byte
		v  uint64
	}
	var cands []cand
	var errs []error
	for _, r := range relays {
		resp, err := v.c.call(ctx, v.sess, r, &wire.Request{Op: wire.OpList, Kind: wire.KindManifest}, nil)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, o := range resp.Objects {
			cands = append(cands, cand{r, o.ID, o.Version})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].v > cands[j].v })
	for _, cd := range cands {
		sealed, _, err := v.c.fetch(ctx, v.sess, cd.r, wire.KindManifest, cd.id, 1<<30)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m, err := v.openManifest(cd.v, sealed)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		root := m.Root()
		if manifestObjectID(v.id, m.Version, root) != cd.id {
			continue
		}
		v.setCurrent(m, root)
		return m, nil
	}
	if err := errors.Join(errs...); err != nil && errors.Is(err, ErrTokenExpired) {
		return nil, fmt.Errorf("cbfs: recover manifest: %w", ErrTokenExpired)
	}
	return nil, fmt.Errorf("%w: volume %s has no manifest on any relay", ErrNotFound, v.id)
}

// replicate PUTs one small object to every relay given and requires at
// least need copies.
func (v *Volume) replicate(ctx context.Context, relays []RelayInfo, tmpl wire.Request, data []byte, need int) error {
	need = min(need, len(relays))
	if need == 0 {
		return ErrInsufficientRelays
	}
	tmpl.Hash = merkle.Sum(data)
	tmpl.Size = uint64(len(data))
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	var errs []error
	for _, r := range relays {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := tmpl
			_, err := v.c.call(ctx, v.sess, r, &req, bytes.NewReader(data))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			ok++
		}()
	}
	wg.Wait()
	if ok < need {
		err := errors.Join(errs...)
		if errors.Is(err, ErrPermission) || errors.Is(err, ErrTokenExpired) {
			return fmt.Errorf("stored on %d relays, need %d: %w", ok, need, err)
		}
		return fmt.Errorf("stored on %d relays, need %d: %w: %w", ok, need, ErrInsufficientRelays, err)
	}
	return nil
}

// liveRelays lists healthy relays that did not just fail to connect.
func (v *Volume) liveRelays(ctx context.Context) ([]RelayInfo, error) {
	relays, _, err := v.c.relays(ctx)
	if err != nil {
		return nil, err
	}
	var live []RelayInfo
	for _, r := range relays {
		if !v.c.pool.Down(r.Addr, r.PubKey) {
			live = append(live, r)
		}
	}
	return live, nil
}

// deleteShards removes the shards of replaced or removed files (best effort).
func (v *Volume) deleteShards(ctx context.Context, files ...FileEntry) {
	if v.caveats.Perms&captoken.PermDelete == 0 {
		return
	}
	_, byID, err := v.c.relays(ctx)
	if err != nil {
		return
	}
	sem := make(chan struct{}, v.c.parallelism(6))
	var wg sync.WaitGroup
	for _, f := range files {
		for _, s := range f.Segments {
			for _, sh := range s.Shards {
				r, ok := byID[sh.Relay]
				if !ok {
					continue
				}
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					if _, err := v.c.call(ctx, v.sess, r, &wire.Request{Op: wire.OpDelete, ID: sh.ID}, nil); err != nil {
						v.c.log.Debug("delete shard", "relay", r.ID.String(), "err", err)
					}
				}()
			}
		}
	}
	wg.Wait()
}

func (c *Client) parallelism(n int) int {
	if c.cfg.Parallelism > 0 {
		return c.cfg.Parallelism
	}
	return 2 * n
}

// List returns the files under prefix ("" or "/" for all) in path order.
func (v *Volume) List(ctx context.Context, prefix string) ([]FileInfo, error) {
	if v.caveats.Perms&(captoken.PermList|captoken.PermRead) == 0 {
		return nil, fmt.Errorf("%w: token allows %s", ErrPermission, v.caveats.Perms)
	}
	p, err := captoken.CleanPrefix(prefix)
	if err != nil {
		return nil, err
	}
	m, err := v.latest(ctx)
	if err != nil {
		return nil, err
	}
	var out []FileInfo
	for i := range m.Files {
		f := &m.Files[i]
		if p != "" && f.Path != p && !strings.HasPrefix(f.Path, p+"/") {
			continue
		}
		if v.caveats.AllowsPath(f.Path) != nil {
			continue
		}
		out = append(out, fileInfo(f))
	}
	return out, nil
}

// Stat returns one file's info.
func (v *Volume) Stat(ctx context.Context, path string) (FileInfo, error) {
	p, err := CleanPath(path)
	if err != nil {
		return FileInfo{}, err
	}
	if err := v.caveats.AllowsPath(p); err != nil {
		return FileInfo{}, fmt.Errorf("%w: %v", ErrPermission, err)
	}
	m, err := v.latest(ctx)
	if err != nil {
		return FileInfo{}, err
	}
	i := m.Lookup(p)
	if i < 0 {
		return FileInfo{}, fmt.Errorf("%w: %s", ErrNotFound, p)
	}
	return fileInfo(&m.Files[i]), nil
}

// Remove deletes a file: it disappears when the new manifest is committed;
// its shards are then deleted from relays (best effort).
func (v *Volume) Remove(ctx context.Context, path string) error {
	p, err := CleanPath(path)
	if err != nil {
		return err
	}
	if err := v.need(captoken.PermDelete, p); err != nil {
		return err
	}
	var prev *Manifest
	cs := changeSet{Del: []string{p}}
	next, err := v.commitChanges(ctx, func(cur *Manifest) (*Manifest, *changeSet, error) {
		if cur.Lookup(p) < 0 {
			return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, p)
		}
		prev = cur
		return cs.apply(cur), &cs, nil
	}, false)
	if err != nil {
		return fmt.Errorf("cbfs: remove %s: %w", p, err)
	}
	v.dropReplaced(ctx, prev, next, &cs)
	return nil
}

// Info describes the volume.
func (v *Volume) Info(ctx context.Context) (VolumeInfo, error) {
	m, err := v.latest(ctx)
	if err != nil {
		return VolumeInfo{}, err
	}
	vi := VolumeInfo{ID: v.id, Owner: v.id.Owner(), K: int(m.K), M: int(m.M), SegmentSize: int(m.SegmentSize),
		Version: m.Version, Root: v.Root(), Files: len(m.Files), Perms: v.caveats.Perms, Prefix: v.caveats.Prefix}
	for _, f := range m.Files {
		vi.Bytes += f.Size
		for _, s := range f.Segments {
			vi.StoredBytes += int64(s.ShardSize) * int64(len(s.Shards))
		}
	}
	return vi, nil
}

// GrantOptions describe a capability to hand out.
type GrantOptions struct {
	Grantee *ecdsa.PublicKey
	Perms   captoken.Perm
	Prefix  string        // "" = whole volume (or the granter's prefix)
	TTL     time.Duration // default 24h; capped by the granter's own expiry
}

// Grant issues (owner) or delegates (grantee) a capability token. Tokens
// with read or write permission carry the volume key wrapped to the grantee.
func (v *Volume) Grant(ctx context.Context, o GrantOptions) (*captoken.Token, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if o.Grantee == nil || o.Perms == 0 {
		return nil, errors.New("cbfs: grant needs a grantee and permissions")
	}
	if o.TTL <= 0 {
		o.TTL = 24 * time.Hour
	}
	prefix, err := captoken.CleanPrefix(o.Prefix)
	if err != nil {
		return nil, err
	}
	if prefix == "" {
		prefix = v.caveats.Prefix
	}
	c := captoken.Caveats{Perms: o.Perms, Prefix: prefix, Expiry: v.c.cfg.Now().Add(o.TTL).Unix(),
		Grantee: crypto.CompressPubkey(o.Grantee)}
	if o.Perms&(captoken.PermRead|captoken.PermWrite) != 0 && v.hasKey {
		if c.WrappedKey, err = wrapKey(v.key, o.Grantee); err != nil {
			return nil, err
		}
	}
	if v.owner {
		return captoken.Issue(v.c.cfg.Key, v.id, c)
	}
	if e := v.tok.Caveats().Expiry; c.Expiry > e {
		c.Expiry = e
	}
	t, err := v.tok.Delegate(v.c.cfg.Key, c)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPermission, err)
	}
	return t, nil
}

// Put uploads r to path and commits it.
func (v *Volume) Put(ctx context.Context, path string, r io.Reader) (FileInfo, error) {
	u, err := v.Upload(ctx, path)
	if err != nil {
		return FileInfo{}, err
	}
	if _, err := io.Copy(u, r); err != nil {
		u.Abort()
		return FileInfo{}, fmt.Errorf("cbfs: put %s: %w", path, err)
	}
	return u.Commit()
}

// Get writes the content of path to w, verifying every shard.
func (v *Volume) Get(ctx context.Context, path string, w io.Writer) (FileInfo, error) {
	return v.GetRange(ctx, path, 0, -1, w)
}

// GetRange writes n bytes of path starting at off to w (n < 0: to the end).
// Only the segments covering the range are fetched.
func (v *Volume) GetRange(ctx context.Context, path string, off, n int64, w io.Writer) (FileInfo, error) {
	p, err := CleanPath(path)
	if err != nil {
		return FileInfo{}, err
	}
	if err := v.need(captoken.PermRead, p); err != nil {
		return FileInfo{}, err
	}
	m, err := v.latest(ctx)
	if err != nil {
		return FileInfo{}, err
	}
	i := m.Lookup(p)
	if i < 0 {
		return FileInfo{}, fmt.Errorf("%w: %s", ErrNotFound, p)
	}
	f := &m.Files[i]
	if off < 0 || off > f.Size {
		return FileInfo{}, fmt.Errorf("cbfs: get %s: offset %d outside file of %d bytes", p, off, f.Size)
	}
	end := f.Size
	if n >= 0 && off+n < end {
		end = off + n
	}
	if len(f.Inline) > 0 {
		pt, err := v.openInline(f)
		if err != nil {
			return FileInfo{}, err
		}
		if _, err := w.Write(pt[off:end]); err != nil {
			return FileInfo{}, fmt.Errorf("cbfs: get %s: write: %w", p, err)
		}
		return fileInfo(f), nil
	}
	cd, err := newCodec(int(m.K), int(m.M))
	if err != nil {
		return FileInfo{}, err
	}
	_, byID, err := v.c.relays(ctx)
	if err != nil {
		return FileInfo{}, err
	}
	// Segments overlapping [off, end).
	type span struct {
		idx      int
		from, to int // within the segment's plaintext
	}
	var spans []span
	var pos int64
	for idx, s := range f.Segments {
		sEnd := pos + int64(s.Size)
		if sEnd > off && pos < end {
			spans = append(spans, span{idx, int(max(off, pos) - pos), int(min(end, sEnd) - pos)})
		}
		pos = sEnd
	}
	aead := subKey(v.key, "file", f.FileID[:])
	// Read ahead while the previous segment is written out.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		data []byte
		err  error
	}
	results := make([]chan result, len(spans))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	start := func(k int) {
		results[k] = make(chan result, 1)
		idx := spans[k].idx
		wg.Add(1)
		go func() {
			defer wg.Done()
			pt, err := v.openSegment(ctx, cd, byID, aead, segmentAAD(v.id, f.FileID, idx), &f.Segments[idx])
			if err != nil {
				err = fmt.Errorf("segment %d: %w", idx, err)
			}
			results[k] <- result{pt, err}
		}()
	}
	ahead := v.c.cfg.SegmentsInFlight
	for k := 0; k < len(spans) && k < ahead; k++ {
		start(k)
	}
	for k, sp := range spans {
		res := <-results[k]
		if res.err != nil {
			return FileInfo{}, fmt.Errorf("cbfs: get %s: %w", p, res.err)
		}
		if next := k + ahead; next < len(spans) {
			start(next)
		}
		if _, err := w.Write(res.data[sp.from:sp.to]); err != nil {
			return FileInfo{}, fmt.Errorf("cbfs: get %s: write: %w", p, err)
		}
	}
	return fileInfo(f), nil
}

func (v *Volume) fault(sh ShardRef, err error) {
	if v.c.cfg.OnShardFailure != nil {
		v.c.cfg.OnShardFailure(ShardFault{Volume: v.id, Shard: sh, Err: err})
	}
}

// codec returns the erasure codec of the volume. K and M are fixed when the
// volume is created, so the manifest this Volume last saw is enough: reading
// a segment costs no anchor query.
func (v *Volume) codec(ctx context.Context) (*codec, error) {
	m, err := v.params(ctx)
	if err != nil {
		return nil, err
	}
	return newCodec(int(m.K), int(m.M))
}

// openSegment fetches and decrypts one segment. The AEAD tag authenticates
// the whole ciphertext, so the data shards are first used without hashing
// them; only if the segment does not open are its shards fetched again, each
// checked against its hash, so the bad ones are found, reported and replaced.
func (v *Volume) openSegment(ctx context.Context, cd *codec, byID map[RelayID]RelayInfo, aead cipher.AEAD, aad []byte, seg *Segment) ([]byte, error) {
	shards, err := v.readShards(ctx, cd, byID, seg, true, false)
	if err == nil {
		var pt []byte
		if pt, err = cd.decode(aead, aad, seg, shards); err == nil {
			return pt, nil
		}
	}
	if !errors.Is(err, ErrIntegrity) && !errors.Is(err, ErrInsufficientShards) {
		return nil, err
	}
	shards, err = v.readShards(ctx, cd, byID, seg, true, true)
	if err != nil {
		return nil, err
	}
	return cd.decode(aead, aad, seg, shards)
}

// fetchShard GETs one shard and, if verify is set, checks it against the
// manifest's hash.
func (v *Volume) fetchShard(ctx context.Context, byID map[RelayID]RelayInfo, seg *Segment, sh ShardRef, verify bool) ([]byte, error) {
	r, ok := byID[sh.Relay]
	if !ok {
		return nil, fmt.Errorf("relay %s not in directory", sh.Relay)
	}
	if !r.Healthy {
		return nil, fmt.Errorf("relay %s marked unhealthy", sh.Relay)
	}
	data, _, err := v.c.fetch(ctx, v.sess, r, wire.KindShard, sh.ID, uint64(seg.ShardSize))
	if err != nil {
		return nil, err
	}
	if len(data) != int(seg.ShardSize) || (verify && merkle.Sum(data) != sh.Hash) {
		return nil, fmt.Errorf("%w: shard %x from relay %s does not match manifest", ErrIntegrity, sh.ID[:6], sh.Relay.String()[:8])
	}
	return data, nil
}

// readShards fetches shards until K verify, hedging slow relays, and
// reconstructs the missing data shards (all shards when dataOnly is false).
// Without verify, shards are only checked for size: the caller must
// authenticate the result (the segment's AEAD tag does).
func (v *Volume) readShards(ctx context.Context, cd *codec, byID map[RelayID]RelayInfo, seg *Segment, dataOnly, verify bool) ([][]byte, error) {
	seg = v.relocate(ctx, byID, seg)
	n := len(seg.Shards)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type res struct {
		i    int
		data []byte
		err  error
	}
	ch := make(chan res, n)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	// Data shards first (no decoding needed), relays known to be down last.
	order := make([]int, 0, n)
	var later []int
	for i, sh := range seg.Shards {
		if r, ok := byID[sh.Relay]; ok && r.Healthy && !v.c.pool.Down(r.Addr, r.PubKey) {
			order = append(order, i)
		} else {
			later = append(later, i)
		}
	}
	order = append(order, later...)
	next, inflight, got := 0, 0, 0
	launch := func() bool {
		if next >= n {
			return false
		}
		i := order[next]
		next++
		inflight++
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := v.fetchShard(ctx, byID, seg, seg.Shards[i], verify)
			ch <- res{i, d, err}
		}()
		return true
	}
	for range cd.k {
		launch()
	}
	shards := make([][]byte, n)
	var errs []error
	hedge := time.NewTimer(time.Second)
	defer hedge.Stop()
	for got < cd.k && inflight > 0 {
		select {
		case r := <-ch:
			inflight--
			if r.err != nil {
				if ctx.Err() == nil && seg.Shards[r.i].Relay != (RelayID{}) {
					v.fault(seg.Shards[r.i], r.err)
				}
				errs = append(errs, r.err)
				launch()
				continue
			}
			shards[r.i] = r.data
			got++
		case <-hedge.C:
			launch() // a relay is slow; ask one more
			hedge.Reset(time.Second)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if got < cd.k {
		if e := errors.Join(errs...); errors.Is(e, ErrTokenExpired) {
			return nil, fmt.Errorf("%w: %w", ErrTokenExpired, e)
		}
		return nil, fmt.Errorf("%w: %d of %d needed: %w", ErrInsufficientShards, got, cd.k, errors.Join(errs...))
	}
	missing := false
	for i := 0; i < n && (i < cd.k || !dataOnly); i++ {
		if shards[i] == nil {
			missing = true
		}
	}
	if missing {
		if err := cd.reconstruct(shards, dataOnly); err != nil {
			return nil, err
		}
	}
	return shards, nil
}

// Upload is an in-progress file upload. Write data, then Commit (the file
// becomes visible) or Abort (uploaded shards are deleted). Commit and Abort
// are idempotent: a second call returns ErrUploadDone. An Upload is used by
// one goroutine; segments are encoded and stored in the background.
type Upload struct {
	v      *Volume
	path   string
	ctx    context.Context
	cancel context.CancelFunc
	cd     *codec
	segSz  int
	fileID [16]byte
	aead   cipher.AEAD
	buf    []byte
	plain  sync.Pool // *[]byte plaintext segment buffers
	size   int64
	sem    chan struct{}
	wg     sync.WaitGroup

	mu        sync.Mutex
	segments  []Segment
	err       error
	bad       map[RelayID]bool
	lastErr   error     // last relay failure, explains a later lack of relays
	attempted []attempt // every shard PUT started, for cleanup
	done      bool

	stopping chan struct{} // closed by Abort or the first failure
	stopOnce sync.Once
}

type attempt struct {
	r  RelayInfo
	id [32]byte
}

// Upload starts an upload to path.
func (v *Volume) Upload(ctx context.Context, path string) (*Upload, error) {
	p, err := CleanPath(path)
	if err != nil {
		return nil, err
	}
	if err := v.need(captoken.PermWrite, p); err != nil {
		return nil, err
	}
	m, err := v.params(ctx)
	if err != nil {
		return nil, err
	}
	cd, err := newCodec(int(m.K), int(m.M))
	if err != nil {
		return nil, err
	}
	u := &Upload{v: v, path: p, cd: cd, segSz: int(m.SegmentSize), sem: make(chan struct{}, v.c.cfg.SegmentsInFlight), bad: map[RelayID]bool{}}
	rand.Read(u.fileID[:])
	u.aead = subKey(v.key, "file", u.fileID[:])
	u.ctx, u.cancel = context.WithCancel(ctx)
	u.stopping = make(chan struct{})
	return u, nil
}

// Write buffers p and uploads full segments.
func (u *Upload) Write(p []byte) (int, error) {
	u.mu.Lock()
	done, err := u.done, u.err
	u.mu.Unlock()
	if done {
		return 0, ErrUploadDone
	}
	if err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		if u.buf == nil {
			if b, ok := u.plain.Get().(*[]byte); ok {
				u.buf = (*b)[:0]
			}
		}
		k := min(len(p), u.segSz-len(u.buf))
		u.grow(k)
		u.buf = append(u.buf, p[:k]...)
		p = p[k:]
		if len(u.buf) == u.segSz {
			if err := u.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// minSegBuf is the first capacity of a segment buffer: a small file (most
// files) never needs the whole segment size, which was allocated and
// zeroed for every file before.
const minSegBuf = 64 << 10

// grow makes room for k more bytes in the segment buffer, doubling it up
// to the segment size.
func (u *Upload) grow(k int) {
	need := len(u.buf) + k
	if need <= cap(u.buf) {
		return
	}
	c := max(cap(u.buf), min(minSegBuf, u.segSz))
	for c < need {
		c = min(2*c, u.segSz)
	}
	b := make([]byte, len(u.buf), c)
	copy(b, u.buf)
	u.buf = b
}

// fail records the first error and stops new work. Requests already in
// flight finish, so cleanup knows exactly what was stored.
func (u *Upload) fail(err error) {
	u.mu.Lock()
	if u.err == nil {
		u.err = err
	}
	u.mu.Unlock()
	u.stop()
}

func (u *Upload) stop() { u.stopOnce.Do(func() { close(u.stopping) }) }

func (u *Upload) stopped() bool {
	select {
	case <-u.stopping:
		return true
	default:
		return false
	}
}

var errUploadStopped = errors.New("cbfs: upload stopped")

// flush encodes and uploads the buffered segment in the background.
func (u *Upload) flush() error {
	data := u.buf
	u.buf = nil
	u.size += int64(len(data))
	u.mu.Lock()
	idx := len(u.segments)
	u.segments = append(u.segments, Segment{})
	u.mu.Unlock()
	select {
	case u.sem <- struct{}{}:
	case <-u.ctx.Done():
		return u.firstErr()
	case <-u.stopping:
		return u.firstErr()
	}
	u.wg.Add(1)
	go func() {
		defer func() { <-u.sem; u.wg.Done() }()
		if u.stopped() {
			return
		}
		es, err := u.cd.encode(u.aead, segmentAAD(u.v.id, u.fileID, idx), data)
		if cap(data) == u.segSz {
			data = data[:0]
			u.plain.Put(&data)
		}
		if err == nil {
			err = u.place(es, idx)
			u.cd.release(es) // every shard request has finished
		}
		if err != nil {
			u.fail(fmt.Errorf("segment %d: %w", idx, err))
			return
		}
		u.mu.Lock()
		u.segments[idx] = es.seg
		u.mu.Unlock()
	}()
	return nil
}

func (u *Upload) firstErr() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err != nil {
		return u.err
	}
	if err := u.ctx.Err(); err != nil {
		return err
	}
	return errUploadStopped
}

// place stores the shards of one segment on distinct healthy relays,
// falling back to spare relays when one fails. Relays the pool avoids for a
// short while after a failure are waited for, up to about one down period,
// instead of failing the write at once.
func (u *Upload) place(es *encodedSegment, idx int) error {
	n := len(es.shards)
	until := time.Now().Add(u.v.downWait())
	var cands []RelayInfo
	for {
		healthy, _, err := u.v.c.relays(u.ctx)
		if err != nil {
			return err
		}
		// back: when the first relay avoided after a failure is usable
		// again; waiting helps only if enough relays are merely avoided.
		var back time.Time
		var avoided int
		cands, avoided, back = u.candidates(healthy, len(es.shards[0]))
		if len(cands) >= n {
			break
		}
		if len(cands)+avoided < n || back.After(until) {
			u.mu.Lock()
			last := u.lastErr
			u.mu.Unlock()
			if last != nil {
				return fmt.Errorf("%w: %d usable relays for %d shards; last relay failure: %w", ErrInsufficientRelays, len(cands), n, last)
			}
			return fmt.Errorf("%w: %d usable relays for %d shards", ErrInsufficientRelays, len(cands), n)
		}
		u.v.c.log.Debug("waiting for relays that failed recently", "usable", len(cands), "need", n, "until", back)
		if err := sleepUntil(u.ctx, back); err != nil {
			return err
		}
	}
	// Spread segments: rotate the candidate list by a per-segment offset.
	sort.Slice(cands, func(i, j int) bool { return bytes.Compare(cands[i].ID[:], cands[j].ID[:]) < 0 })
	off := int(binary.BigEndian.Uint32(u.fileID[:4])+uint32(idx)) % len(cands)
	cands = append(cands[off:], cands[:off]...)
	var smu sync.Mutex
	spares := cands[n:]
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		r := cands[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if u.stopped() {
					errs[i] = errUploadStopped
					return
				}
				u.mu.Lock()
				u.attempted = append(u.attempted, attempt{r, es.seg.Shards[i].ID})
				u.mu.Unlock()
				_, err := u.v.c.call(u.ctx, u.v.sess, r, &wire.Request{Op: wire.OpPut, Kind: wire.KindShard, ID: es.seg.Shards[i].ID,
					Hash: es.seg.Shards[i].Hash, Size: uint64(len(es.shards[i]))}, bytes.NewReader(es.shards[i]))
				if err == nil {
					es.seg.Shards[i].Relay = r.ID
					return
				}
				if u.ctx.Err() != nil || errors.Is(err, ErrPermission) || errors.Is(err, ErrTokenExpired) {
					errs[i] = err
					return
				}
				// A relay the pool now avoids failed in transit (timeout,
				// broken connection): later segments skip it only until its
				// down mark ends. One that answered with a refusal (full,
				// error) is not tried again by this upload.
				u.mu.Lock()
				if !u.v.c.pool.Down(r.Addr, r.PubKey) {
					u.bad[r.ID] = true
				}
				u.lastErr = err
				u.mu.Unlock()
				smu.Lock()
				if len(spares) == 0 {
					smu.Unlock()
					errs[i] = fmt.Errorf("%w: no spare relay left after: %w", ErrInsufficientRelays, err)
					return
				}
				u.v.c.log.Warn("shard upload failed, trying a spare relay", "relay", r.ID.String(), "err", err)
				r, spares = spares[0], spares[1:]
				smu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		// keep track of what was stored so Abort can delete it
		u.mu.Lock()
		u.segments[idx] = es.seg
		u.mu.Unlock()
		return err
	}
	return nil
}

// candidates lists the healthy relays a shard of size sz may go to now,
// how many more are left out only because the pool avoids them after a
// recent failure, and when the first of those is usable again.
func (u *Upload) candidates(healthy []RelayInfo, sz int) ([]RelayInfo, int, time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	var cands []RelayInfo
	var back time.Time
	avoided := 0
	now := time.Now()
	for _, r := range healthy {
		full := r.Capacity > 0 && r.Used+uint64(sz) > r.Capacity
		if u.bad[r.ID] || full {
			continue
		}
		if t := u.v.c.pool.DownUntil(r.Addr, r.PubKey); now.Before(t) {
			avoided++
			if back.IsZero() || t.Before(back) {
				back = t
			}
			continue
		}
		cands = append(cands, r)
	}
	return cands, avoided, back
}

// downWait bounds how long one segment waits for relays the pool avoids
// after a failure: one down period and a redial.
func (v *Volume) downWait() time.Duration { return v.c.pool.DownFor() + 10*time.Second }

// sleepUntil waits until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Commit uploads the last segment, waits for all shards and commits the new
// manifest. The file is visible once Commit returns nil.
func (u *Upload) Commit() (FileInfo, error) {
	u.mu.Lock()
	if u.done {
		u.mu.Unlock()
		return FileInfo{}, ErrUploadDone
	}
	u.mu.Unlock()
	inline := u.inline()
	u.wg.Wait()
	u.mu.Lock()
	u.done = true
	err := u.err
	u.mu.Unlock()
	if err == nil {
		err = u.ctx.Err()
	}
	if err != nil {
		u.cleanup()
		return FileInfo{}, fmt.Errorf("cbfs: upload %s: %w", u.path, err)
	}
	entry := FileEntry{Path: u.path, Size: u.size, ModTime: u.v.c.cfg.Now().UnixNano(), FileID: u.fileID, Segments: u.segments, Inline: inline}
	if u.v.caveats.Prefix != "" {
		if err := u.v.storePending(u.ctx, entry); err != nil {
			u.cleanup()
			return FileInfo{}, fmt.Errorf("cbfs: commit %s: %w", u.path, err)
		}
		u.cancel()
		fi := fileInfo(&entry)
		fi.Pending = true
		return fi, nil
	}
	if _, err = u.v.Apply(u.ctx, map[string]*FileEntry{u.path: &entry}); err != nil {
		u.cleanup()
		return FileInfo{}, fmt.Errorf("cbfs: commit %s: %w", u.path, err)
	}
	u.cancel()
	return fileInfo(&entry), nil
}

// Abort stops the upload and deletes the shards stored so far.
func (u *Upload) Abort() error {
	u.mu.Lock()
	if u.done {
		u.mu.Unlock()
		return ErrUploadDone
	}
	u.done = true
	u.mu.Unlock()
	u.stop() // no new work; requests in flight finish so cleanup is exact
	u.wg.Wait()
	u.cleanup()
	return nil
}

// cleanup deletes every shard PUT that was started (deleting an object a
// relay never stored is harmless), then releases the upload's context.
func (u *Upload) cleanup() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.ctx), 30*time.Second)
	defer cancel()
	defer u.cancel()
	if u.v.caveats.Perms&captoken.PermDelete == 0 {
		return
	}
	u.mu.Lock()
	todo := u.attempted
	u.attempted = nil
	u.mu.Unlock()
	sem := make(chan struct{}, u.v.c.parallelism(6))
	var wg sync.WaitGroup
	for _, a := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := u.v.c.call(ctx, u.v.sess, a.r, &wire.Request{Op: wire.OpDelete, ID: a.id}, nil); err != nil {
				u.v.c.log.Debug("cleanup: delete shard", "relay", a.r.ID.String(), "err", err)
			}
		}()
	}
	wg.Wait()
}
