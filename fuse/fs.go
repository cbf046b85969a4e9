package fuse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
)

const (
	sIFMT  = syscall.S_IFMT
	sIFDIR = syscall.S_IFDIR
	sIFREG = syscall.S_IFREG
	sIFLNK = syscall.S_IFLNK

	defaultFileMode = sIFREG | 0o644
)

// inode is one file, directory or symlink of the mounted namespace. The
// namespace and metadata fields are guarded by mfs.mu; file content by fmu
// (held shared to read, exclusively to write, truncate or upload).
type inode struct {
	ino      uint64
	typ      uint32 // S_IFDIR, S_IFREG or S_IFLNK; immutable (read without locks)
	parent   *inode // nil for the root and for unlinked inodes
	name     string
	kids     map[string]*inode // directories only
	implicit bool              // directory implied by deeper paths, not in the manifest

	mode        uint32 // st_mode including the type bits
	uid, gid    uint32
	mtime       int64 // unix ns
	ctime       int64 // unix ns, local only
	target      string
	handles     int // open file handles
	lastUse     int64
	pubMtime    int64 // mtime published with the last uploaded content
	fmu         sync.RWMutex
	base        *cbfs.FileEntry // last uploaded content; nil = empty
	baseLim     int64           // bytes of base still part of the file (after truncation)
	size        int64
	dirty       bool // content differs from base
	store       *blockStore
	segMu       sync.Mutex
	segInflight map[segKey]*segCall
	memo        map[segKey][]byte // recently fetched or read-ahead segments
	// contentGen counts content changes the kernel cannot know of (another
	// mount's version, a truncate); openGen is its value at the last open.
	// An open keeps the kernel's page cache when they match.
	contentGen, openGen uint64
	opened              bool
	stream              *streamUp // upload running while the file is written (fmu)
}

type segKey struct {
	file [16]byte
	idx  int
}

type segCall struct {
	done chan struct{}
	data []byte
	err  error
}

func (n *inode) isDir() bool { return n.typ == sIFDIR }

// mfs is the state of one mount.
type mfs struct {
	vol  *cbfs.Volume
	opts Options
	log  *slog.Logger
	ro   bool
	seal *sealer
	dir  string // cache directory of this mount

	commitMu  sync.Mutex // serializes commits and refreshes
	mu        sync.Mutex
	root      *inode
	nextIno   uint64
	storeSeq  uint64
	base      *cbfs.Manifest             // latest manifest merged into the namespace
	baseIdx   map[string]*cbfs.FileEntry // base's entries by path (changed only under commitMu)
	gen       uint64                     // bumped by every local change
	committed uint64                     // gen covered by the last commit
	lastCh    time.Time                  // time of the last local change
	puts      atomic.Int64               // cache blocks stored since the last eviction check
	clock     atomic.Int64
	journaled atomic.Bool     // pending changes were written to the journal
	bg        context.Context // lifetime of the mount, for read-ahead
	wg        sync.WaitGroup  // read-ahead goroutines
}

func (m *mfs) now() int64 { return time.Now().UnixNano() }

// changed records a local change; the caller holds m.mu.
func (m *mfs) changed() {
	m.gen++
	m.lastCh = time.Now()
}

func (m *mfs) newInode(mode uint32) *inode {
	m.nextIno++
	n := &inode{ino: m.nextIno, mode: mode, typ: mode & sIFMT}
	if n.isDir() {
		n.kids = map[string]*inode{}
	}
	return n
}

func (m *mfs) pathOf(n *inode) string {
	if n == m.root {
		return "/"
	}
	var parts []string
	for c := n; c != nil && c != m.root; c = c.parent {
		parts = append(parts, c.name)
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return "/" + strings.Join(parts, "/")
}

// attached reports whether n is still reachable from the root.
func (m *mfs) attached(n *inode) bool {
	for c := n; c != nil; c = c.parent {
		if c == m.root {
			return true
		}
	}
	return false
}

func (m *mfs) attach(parent *inode, name string, n *inode) {
	n.parent, n.name = parent, name
	parent.kids[name] = n
}

func (m *mfs) detach(n *inode) {
	if n.parent != nil {
		delete(n.parent.kids, n.name)
		n.parent = nil
	}
}

// lookupPath finds an attached inode by manifest path.
func (m *mfs) lookupPath(p string) *inode {
	n := m.root
	for _, c := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if n == nil || !n.isDir() {
			return nil
		}
		n = n.kids[c]
	}
	return n
}

// entryOf is the manifest entry that describes n at path p.
func (m *mfs) entryOf(n *inode, p string) cbfs.FileEntry {
	e := cbfs.FileEntry{Path: p, Mode: n.mode, UID: n.uid, GID: n.gid, ModTime: n.mtime}
	switch n.mode & sIFMT {
	case sIFLNK:
		e.Target = n.target
	case sIFREG:
		if n.base != nil {
			e.Size, e.FileID, e.Segments, e.Inline = n.base.Size, n.base.FileID, n.base.Segments, n.base.Inline
		}
		if n.dirty {
			e.ModTime = n.pubMtime
		}
		if e.Mode == defaultFileMode && e.UID == 0 && e.GID == 0 {
			e.Mode = 0 // the encoding of files written by Put
		}
	}
	return e
}

// desired lists the entries the namespace would commit, by path.
func (m *mfs) desired() map[string]cbfs.FileEntry {
	out := map[string]cbfs.FileEntry{}
	var walk func(n *inode, p string)
	walk = func(n *inode, p string) {
		for name, c := range n.kids {
			cp := p + "/" + name
			if !c.implicit {
				out[cp] = m.entryOf(c, cp)
			}
			if c.isDir() {
				walk(c, cp)
			}
		}
	}
	walk(m.root, "")
	return out
}

func index(man *cbfs.Manifest) map[string]*cbfs.FileEntry {
	out := make(map[string]*cbfs.FileEntry, len(man.Files))
	for i := range man.Files {
		out[man.Files[i].Path] = &man.Files[i]
	}
	return out
}

func sameEntry(a, b *cbfs.FileEntry) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return cbfs.SameEntry(a, b)
}

// merge applies the changes between manifests old and next to the
// namespace, except on paths changed locally since old (local changes win
// and are committed later). The caller holds m.mu.
func (m *mfs) merge(old, next *cbfs.Manifest) {
	oi, ni := index(old), index(next)
	paths := make([]string, 0, len(ni))
	for p := range ni {
		paths = append(paths, p)
	}
	for p := range oi {
		if _, ok := ni[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var d map[string]cbfs.FileEntry
	var todo []string
	for _, p := range paths {
		if sameEntry(oi[p], ni[p]) {
			continue
		}
		if d == nil {
			d = m.desired()
		}
		var mine *cbfs.FileEntry
		if e, ok := d[p]; ok {
			mine = &e
		}
		if !sameEntry(mine, oi[p]) {
			continue // changed here too: ours is committed later
		}
		todo = append(todo, p)
	}
	// Creations and updates parents first, then removals children first so
	// that directories emptied by the remote go too.
	for _, p := range todo {
		if ni[p] != nil {
			m.applyRemote(p, ni[p])
		}
	}
	for i := len(todo) - 1; i >= 0; i-- {
		if ni[todo[i]] == nil {
			m.applyRemote(todo[i], nil)
		}
	}
}

// applyRemote makes path p look like entry e (nil: absent). The caller
// holds m.mu.
func (m *mfs) applyRemote(p string, e *cbfs.FileEntry) {
	n := m.lookupPath(p)
	if e == nil {
		if n == nil {
			return
		}
		if n.isDir() && len(n.kids) > 0 {
			n.implicit = true
			return
		}
		m.detach(n)
		m.dropStore(n)
		return
	}
	mode := e.Mode
	if mode == 0 {
		mode = defaultFileMode
	}
	if n != nil && n.mode&sIFMT != mode&sIFMT {
		if n.isDir() && len(n.kids) > 0 {
			return // a remote file where we have a populated directory: keep ours
		}
		m.detach(n)
		m.dropStore(n)
		n = nil
	}
	if n == nil {
		parent := m.root
		parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
		for _, c := range parts[:len(parts)-1] {
			k := parent.kids[c]
			if k != nil && !k.isDir() {
				return // a file where the remote has a directory: keep ours
			}
			if k == nil {
				k = m.newInode(sIFDIR | 0o755)
				k.implicit = true
				k.mtime, k.ctime = e.ModTime, e.ModTime
				m.attach(parent, c, k)
			}
			parent = k
		}
		n = m.newInode(mode)
		m.attach(parent, parts[len(parts)-1], n)
	}
	n.implicit = false
	n.mode, n.uid, n.gid, n.target = mode, e.UID, e.GID, e.Target
	n.mtime, n.ctime = e.ModTime, max(n.ctime, e.ModTime)
	if mode&sIFMT == sIFREG && !n.dirty {
		if n.base == nil || n.base.FileID != e.FileID || !sameEntry(n.base, e) {
			m.dropStore(n)
		}
		c := *e
		n.base, n.baseLim, n.size, n.pubMtime = &c, e.Size, e.Size, e.ModTime
	}
}

// dropStore discards the local cache of n if it holds no unflushed data.
func (m *mfs) dropStore(n *inode) {
	n.contentGen++
	n.segMu.Lock()
	clear(n.memo)
	n.segMu.Unlock()
	if n.store != nil && !n.dirty {
		n.store.close()
		n.store = nil
	}
}

// load builds the namespace from a manifest.
func (m *mfs) load(man *cbfs.Manifest) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.root = m.newInode(sIFDIR | 0o755)
	m.root.mtime = m.now()
	// The root has no manifest entry: it belongs to the mounting user.
	m.root.uid, m.root.gid = uint32(os.Getuid()), uint32(os.Getgid())
	empty := &cbfs.Manifest{}
	m.setBase(empty)
	m.merge(empty, man)
	m.setBase(man)
}

// sync commits every local namespace change made before the call (group
// commit: concurrent callers share one manifest version).
func (m *mfs) sync(ctx context.Context) error {
	m.mu.Lock()
	want := m.gen
	m.mu.Unlock()
	m.commitMu.Lock()
	defer m.commitMu.Unlock()
	m.mu.Lock()
	done := m.committed >= want
	m.mu.Unlock()
	if done {
		return nil
	}
	return m.commitLocked(ctx)
}

// commitLocked commits the difference between the namespace and the base
// manifest as path operations on the latest manifest. Caller holds commitMu.
func (m *mfs) commitLocked(ctx context.Context) error {
	m.mu.Lock()
	g := m.gen
	d := m.desired()
	base, bi := m.base, m.baseIdx
	m.mu.Unlock()
	changes := map[string]*cbfs.FileEntry{}
	for p, e := range d {
		if !sameEntry(bi[p], &e) {
			changes[p] = &e
		}
	}
	for p := range bi {
		if _, ok := d[p]; !ok {
			changes[p] = nil
		}
	}
	if len(changes) == 0 {
		m.mu.Lock()
		m.committed = max(m.committed, g)
		m.mu.Unlock()
		return nil
	}
	start := time.Now()
	next, err := m.vol.Update(ctx, func(cur *cbfs.Manifest) error {
		files := cur.Files[:0:0]
		seen := map[string]bool{}
		for _, f := range cur.Files {
			seen[f.Path] = true
			if c, ok := changes[f.Path]; ok {
				if c != nil {
					files = append(files, *c)
				}
				continue
			}
			files = append(files, f)
		}
		for p, c := range changes {
			if c != nil && !seen[p] {
				files = append(files, *c)
			}
		}
		cur.Files = files
		return nil
	})
	if err != nil {
		return fmt.Errorf("fuse: commit %d changes: %w", len(changes), err)
	}
	m.log.Debug("committed", "version", next.Version, "changes", len(changes), "took", time.Since(start))
	m.mu.Lock()
	if next.Version == base.Version+1 {
		// Nobody else committed since base: next is base plus exactly our
		// changes, which the namespace already shows. Skip the merge, a
		// pass over the whole namespace.
		for p, c := range changes {
			if c == nil {
				delete(m.baseIdx, p)
			} else {
				m.baseIdx[p] = c
			}
		}
		m.base = next
	} else {
		m.merge(base, next)
		m.setBase(next)
	}
	m.committed = max(m.committed, g)
	m.mu.Unlock()
	return nil
}

// setBase makes man the merged base. The caller holds m.mu (and commitMu,
// or is loading).
func (m *mfs) setBase(man *cbfs.Manifest) {
	m.base, m.baseIdx = man, index(man)
}

// refresh merges a newer manifest committed by another writer.
func (m *mfs) refresh(ctx context.Context) error {
	if !m.commitMu.TryLock() {
		return nil // a commit is running and merges what it finds
	}
	defer m.commitMu.Unlock()
	man, err := m.vol.Manifest(ctx)
	if err != nil {
		return fmt.Errorf("fuse: refresh manifest: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if man.Version > m.base.Version {
		m.merge(m.base, man)
		m.setBase(man)
	}
	return nil
}

// pending reports whether local changes await a commit and how long ago
// the last one was made.
func (m *mfs) pending() (bool, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gen > m.committed, time.Since(m.lastCh)
}

// flushAll uploads every dirty file and commits.
func (m *mfs) flushAll(ctx context.Context) error {
	var dirty []*inode
	m.mu.Lock()
	var walk func(n *inode)
	walk = func(n *inode) {
		for _, c := range n.kids {
			if c.dirty {
				dirty = append(dirty, c)
			}
			if c.isDir() {
				walk(c)
			}
		}
	}
	walk(m.root)
	m.mu.Unlock()
	var errs []error
	for _, n := range dirty {
		if err := m.upload(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	if err := m.sync(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ---- file content ----

// segment returns the plaintext of segment idx of e (one fetch at a time
// per segment), caching its whole blocks in n's store.
func (m *mfs) segment(ctx context.Context, n *inode, e *cbfs.FileEntry, idx int) ([]byte, error) {
	k := segKey{e.FileID, idx}
	n.segMu.Lock()
	if n.segInflight == nil {
		n.segInflight = map[segKey]*segCall{}
		n.memo = map[segKey][]byte{}
	}
	if d, ok := n.memo[k]; ok {
		n.segMu.Unlock()
		return d, nil
	}
	if c, ok := n.segInflight[k]; ok {
		n.segMu.Unlock()
		select {
		case <-c.done:
			return c.data, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := &segCall{done: make(chan struct{})}
	n.segInflight[k] = c
	n.segMu.Unlock()
	c.data, c.err = m.vol.ReadSegment(ctx, e, idx)
	close(c.done)
	n.segMu.Lock()
	delete(n.segInflight, k)
	if c.err == nil {
		// Keep the newest few: the segment being read and its read-ahead.
		for len(n.memo) >= memoSegments {
			oldest := k
			for o := range n.memo {
				if o.file != oldest.file || o.idx < oldest.idx {
					oldest = o
				}
			}
			delete(n.memo, oldest)
		}
		n.memo[k] = c.data
	}
	n.segMu.Unlock()
	return c.data, c.err
}

// readAheadSegments is how many segments a sequential reader fetches ahead;
// memoSegments how many fetched segments an inode keeps in memory.
const (
	readAheadSegments = 2
	memoSegments      = readAheadSegments + 2
)

// readAhead fetches segment idx of e in the background (sequential reads
// then find it in memory). Segment content is immutable, so this races
// with nothing.
func (m *mfs) readAhead(n *inode, e *cbfs.FileEntry, idx int) {
	if idx >= len(e.Segments) || m.bg == nil || m.bg.Err() != nil {
		return
	}
	k := segKey{e.FileID, idx}
	n.segMu.Lock()
	_, busy := n.segInflight[k]
	_, have := n.memo[k]
	n.segMu.Unlock()
	if busy || have {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if _, err := m.segment(m.bg, n, e, idx); err != nil && m.bg.Err() == nil {
			m.log.Debug("read-ahead failed", "segment", idx, "err", err)
		}
	}()
}

// block returns block blk of n's content (blockSize bytes, zero-padded):
// from the local store, else from the uploaded content (then cached).
// The caller holds n.fmu (shared or exclusive).
func (m *mfs) block(ctx context.Context, n *inode, blk int64) ([]byte, error) {
	buf := make([]byte, blockSize)
	m.mu.Lock()
	st, base, lim := m.storeOf(n), n.base, n.baseLim
	n.lastUse = m.clock.Add(1)
	m.mu.Unlock()
	ok, err := st.get(blk, buf)
	if err != nil || ok {
		return buf, err
	}
	lo := blk * blockSize
	hi := lo + blockSize
	if base != nil {
		lim = min(lim, base.Size)
	}
	if base == nil || lo >= lim {
		return buf, nil // a hole or beyond the uploaded content: zeros
	}
	hi = min(hi, lim)
	if len(base.Inline) > 0 {
		// Small file kept inline in the metadata: no shards to fetch.
		data, err := m.vol.ReadInline(base)
		if err != nil {
			return nil, err
		}
		copy(buf, data[lo:min(hi, int64(len(data)))])
	}
	var pos int64
	for idx := range base.Segments {
		s := int64(base.Segments[idx].Size)
		if pos+s > lo && pos < hi {
			data, err := m.segment(ctx, n, base, idx)
			if err != nil {
				return nil, err
			}
			from, to := max(lo, pos), min(hi, pos+s)
			copy(buf[from-lo:to-lo], data[from-pos:to-pos])
			m.cacheSegment(n, st, data, pos, lim, blk)
			if blk == 0 || st.has(blk-1) {
				// Looks sequential: fetch the next segments in parallel.
				for ahead := 1; ahead <= readAheadSegments; ahead++ {
					m.readAhead(n, base, idx+ahead)
				}
			}
		}
		pos += s
		if pos >= hi {
			break
		}
	}
	if err := st.put(blk, buf); err != nil {
		return nil, err
	}
	m.puts.Add(1)
	return buf, nil
}

// cacheSegment stores the blocks lying wholly inside a fetched segment
// (other than skip) so sequential and nearby reads do not fetch it again.
func (m *mfs) cacheSegment(n *inode, st *blockStore, data []byte, pos, lim int64, skip int64) {
	end := min(pos+int64(len(data)), lim)
	for b := (pos + blockSize - 1) / blockSize; (b+1)*blockSize <= end || (b*blockSize < end && end == lim); b++ {
		if b == skip || st.has(b) {
			continue
		}
		buf := make([]byte, blockSize)
		lo := b * blockSize
		hi := min(lo+blockSize, end)
		if hi <= lo {
			break
		}
		copy(buf, data[lo-pos:hi-pos])
		if st.put(b, buf) == nil {
			m.puts.Add(1)
		}
		if hi == end {
			break
		}
	}
}

// storeOf returns n's block store, creating it. Caller holds m.mu.
func (m *mfs) storeOf(n *inode) *blockStore {
	if n.store == nil {
		m.storeSeq++
		n.store = newBlockStore(m.dir, m.seal, n.ino, m.storeSeq)
	}
	return n.store
}

// readAt reads n's content at off into dst.
func (m *mfs) readAt(ctx context.Context, n *inode, dst []byte, off int64) (int, error) {
	n.fmu.RLock()
	defer n.fmu.RUnlock()
	m.mu.Lock()
	size := n.size
	m.mu.Unlock()
	if off >= size {
		return 0, nil
	}
	end := min(off+int64(len(dst)), size)
	done := 0
	for pos := off; pos < end; {
		blk := pos / blockSize
		b, err := m.block(ctx, n, blk)
		if err != nil {
			return done, err
		}
		k := copy(dst[done:end-off], b[pos-blk*blockSize:])
		done += k
		pos += int64(k)
	}
	m.maybeEvict(n)
	return done, nil
}

// writeAt writes data at off into n's write-back buffer.
func (m *mfs) writeAt(ctx context.Context, n *inode, data []byte, off int64) (int, error) {
	n.fmu.Lock()
	defer n.fmu.Unlock()
	m.mu.Lock()
	st := m.storeOf(n)
	m.mu.Unlock()
	for done := 0; done < len(data); {
		pos := off + int64(done)
		blk := pos / blockSize
		in := int(pos - blk*blockSize)
		k := min(len(data)-done, blockSize-in)
		var buf []byte
		if k == blockSize {
			buf = data[done : done+k]
		} else {
			b, err := m.block(ctx, n, blk)
			if err != nil {
				return done, err
			}
			copy(b[in:], data[done:done+k])
			buf = b
		}
		if err := st.put(blk, buf); err != nil {
			return done, err
		}
		done += k
	}
	m.mu.Lock()
	n.size = max(n.size, off+int64(len(data)))
	n.dirty = true
	n.mtime = m.now()
	n.ctime = n.mtime
	m.mu.Unlock()
	m.streamWrite(ctx, n, off)
	return len(data), nil
}

// truncate sets n's size. Caller holds n.fmu exclusively.
func (m *mfs) truncate(ctx context.Context, n *inode, size int64) error {
	m.abandonStream(n)
	m.mu.Lock()
	cur := n.size
	st := m.storeOf(n)
	m.mu.Unlock()
	if size < cur {
		if size%blockSize != 0 {
			blk := size / blockSize
			b, err := m.block(ctx, n, blk)
			if err != nil {
				return err
			}
			clear(b[size%blockSize:])
			if err := st.put(blk, b); err != nil {
				return err
			}
		}
		st.drop((size + blockSize - 1) / blockSize)
	}
	m.mu.Lock()
	if size < cur {
		n.baseLim = min(n.baseLim, size)
	}
	n.contentGen++
	n.size = size
	n.dirty = true
	n.mtime = m.now()
	n.ctime = n.mtime
	m.changed()
	m.mu.Unlock()
	return nil
}

// upload stores n's dirty content as a new (uncommitted) version on the
// relays; the next commit publishes it.
func (m *mfs) upload(ctx context.Context, n *inode) error {
	n.fmu.Lock()
	defer n.fmu.Unlock()
	m.mu.Lock()
	if !n.dirty || !m.attached(n) {
		m.mu.Unlock()
		m.abandonStream(n)
		return nil
	}
	size, p, mt := n.size, m.pathOf(n), n.mtime
	m.mu.Unlock()
	e := cbfs.FileEntry{Path: p}
	streamed := false
	if size > 0 {
		e, streamed = m.finishStream(ctx, n, size)
		e.Path = p
	}
	if size > 0 && !streamed {
		up, err := m.vol.Upload(ctx, p)
		if err != nil {
			return fmt.Errorf("fuse: upload %s: %w", p, err)
		}
		for off := int64(0); off < size; off += blockSize {
			b, err := m.block(ctx, n, off/blockSize)
			if err == nil {
				_, err = up.Write(b[:min(blockSize, size-off)])
			}
			if err != nil {
				up.Abort()
				return fmt.Errorf("fuse: upload %s: %w", p, err)
			}
		}
		if e, err = up.Stage(); err != nil {
			return fmt.Errorf("fuse: upload %s: %w", p, err)
		}
	}
	m.mu.Lock()
	n.base, n.baseLim, n.dirty, n.pubMtime = &e, e.Size, false, mt
	m.changed()
	m.mu.Unlock()
	return nil
}

// maybeEvict keeps the read cache near its size limit by dropping the
// stores of the least recently used clean files (never keep's).
func (m *mfs) maybeEvict(keep *inode) {
	if m.puts.Load() < 64 {
		return
	}
	m.puts.Store(0)
	type cand struct {
		n    *inode
		use  int64
		size int64
	}
	var cands []cand
	var total int64
	m.mu.Lock()
	var walk func(n *inode)
	walk = func(n *inode) {
		for _, c := range n.kids {
			if c.store != nil {
				sz := int64(c.store.count()) * blockSize
				total += sz
				if !c.dirty && c != keep {
					cands = append(cands, cand{c, c.lastUse, sz})
				}
			}
			if c.isDir() {
				walk(c)
			}
		}
	}
	walk(m.root)
	m.mu.Unlock()
	if total <= m.opts.CacheSize {
		return
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].use < cands[j].use })
	for _, c := range cands {
		if total <= m.opts.CacheSize*9/10 {
			break
		}
		if !c.n.fmu.TryLock() {
			continue
		}
		m.mu.Lock()
		if !c.n.dirty && c.n.store != nil {
			c.n.store.close()
			total -= c.size
		}
		m.mu.Unlock()
		c.n.fmu.Unlock()
	}
}
