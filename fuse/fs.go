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
	parent   *inode // first name's directory; nil for the root and for unlinked inodes
	name     string
	links    []link            // further names (hard links) of a non-directory
	linkID   uint64            // cbfs.FileEntry.Ino of its entries; 0 until hard-linked
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

// link is one name of an inode beyond its first.
type link struct {
	parent *inode
	name   string
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
	base      *cbfs.Manifest // latest manifest merged into the namespace (shared, read-only)
	gen       uint64         // bumped by every local change
	committed uint64         // gen covered by the last commit
	// What changed since the last commit: inodes whose entries (at every
	// name they have at commit time) may differ from base, and paths that
	// may have lost their entry (unlinked, renamed away). A commit looks
	// only at these, never walks the namespace.
	dirtyNodes map[*inode]struct{}
	dirtyPaths map[string]struct{}
	byIno      map[uint64]*inode // hard-linked inodes by linkID
	lastCh     time.Time         // time of the last local change
	puts       atomic.Int64      // cache blocks stored since the last eviction check
	clock      atomic.Int64
	journaled  atomic.Bool // pending changes were written to the journal
	// Commits made and entries they changed (for tests: a commit's work
	// follows the change, and a close commits once).
	commits, commitChanges atomic.Int64
	bg                     context.Context // lifetime of the mount, for read-ahead
	wg                     sync.WaitGroup  // read-ahead goroutines
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

func (m *mfs) pathIn(parent *inode, name string) string {
	if parent == m.root {
		return "/" + name
	}
	return m.pathOf(parent) + "/" + name
}

// pathOf is the path of n's first name.
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

// pathsOf lists every path of an attached inode (its hard links).
func (m *mfs) pathsOf(n *inode) []string {
	if n == m.root || !m.attached(n) {
		return nil
	}
	out := []string{m.pathOf(n)}
	for _, l := range n.links {
		out = append(out, m.pathIn(l.parent, l.name))
	}
	return out
}

// nlink is n's number of names (directories: 1).
func (n *inode) nlink() int {
	if n.parent == nil {
		return 0
	}
	return 1 + len(n.links)
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

// attach gives n the name parent/name (another hard link if it has one).
func (m *mfs) attach(parent *inode, name string, n *inode) {
	if n.parent == nil {
		n.parent, n.name = parent, name
	} else {
		n.links = append(n.links, link{parent, name})
	}
	parent.kids[name] = n
}

// detach removes the name parent/name of its inode, which keeps its other
// names. It returns the inode (nil if there is none).
func (m *mfs) detach(parent *inode, name string) *inode {
	n := parent.kids[name]
	if n == nil {
		return nil
	}
	delete(parent.kids, name)
	if n.parent == parent && n.name == name {
		n.parent, n.name = nil, ""
		if len(n.links) > 0 {
			n.parent, n.name = n.links[0].parent, n.links[0].name
			n.links = n.links[1:]
		}
	} else {
		for i, l := range n.links {
			if l.parent == parent && l.name == name {
				n.links = append(n.links[:i:i], n.links[i+1:]...)
				break
			}
		}
	}
	if n.parent == nil && n.linkID != 0 {
		delete(m.byIno, n.linkID)
	}
	return n
}

// detachPath removes the name at path p (see detach).
func (m *mfs) detachPath(p string) *inode {
	i := strings.LastIndexByte(p, '/')
	dir := m.root
	if i > 0 {
		dir = m.lookupPath(p[:i])
	}
	if dir == nil || !dir.isDir() {
		return nil
	}
	return m.detach(dir, p[i+1:])
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
	e := cbfs.FileEntry{Path: p, Mode: n.mode, UID: n.uid, GID: n.gid, ModTime: n.mtime, Ino: n.linkID}
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

func sameEntry(a, b *cbfs.FileEntry) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return cbfs.SameEntry(a, b)
}

// entryIn returns man's entry for p, or nil.
func entryIn(man *cbfs.Manifest, p string) *cbfs.FileEntry {
	if i := man.Lookup(p); i >= 0 {
		return &man.Files[i]
	}
	return nil
}

// baseEntry is the base manifest's entry for p, or nil. Caller holds m.mu.
func (m *mfs) baseEntry(p string) *cbfs.FileEntry { return entryIn(m.base, p) }

// desiredAt is the entry the namespace has for path p now (nil: none).
// Caller holds m.mu.
func (m *mfs) desiredAt(p string) *cbfs.FileEntry {
	n := m.lookupPath(p)
	if n == nil || n == m.root || n.implicit {
		return nil
	}
	e := m.entryOf(n, p)
	return &e
}

// changedPaths lists the paths where old and next differ (both sorted):
// one pass over the two entry lists, no index.
func changedPaths(old, next *cbfs.Manifest) []string {
	var out []string
	i, j := 0, 0
	for i < len(old.Files) || j < len(next.Files) {
		switch {
		case j == len(next.Files) || (i < len(old.Files) && old.Files[i].Path < next.Files[j].Path):
			out = append(out, old.Files[i].Path)
			i++
		case i == len(old.Files) || next.Files[j].Path < old.Files[i].Path:
			out = append(out, next.Files[j].Path)
			j++
		default:
			if !cbfs.SameEntry(&old.Files[i], &next.Files[j]) {
				out = append(out, next.Files[j].Path)
			}
			i++
			j++
		}
	}
	return out
}

// merge applies the changes between manifests old and next to the
// namespace, except on paths changed locally since old (local changes win
// and are committed later). The caller holds m.mu.
func (m *mfs) merge(old, next *cbfs.Manifest) {
	var todo []string
	for _, p := range changedPaths(old, next) {
		if !sameEntry(m.desiredAt(p), entryIn(old, p)) {
			continue // changed here too: ours is committed later
		}
		todo = append(todo, p)
	}
	// Creations and updates parents first, then removals children first so
	// that directories emptied by the remote go too.
	for _, p := range todo {
		if e := entryIn(next, p); e != nil {
			m.applyRemote(p, e)
		}
	}
	for i := len(todo) - 1; i >= 0; i-- {
		if entryIn(next, todo[i]) == nil {
			m.applyRemote(todo[i], nil)
		}
	}
}

// applyRemote makes path p look like entry e (nil: absent). Where the
// namespace keeps something else (a populated directory, a file in the
// way), the path is marked so that the next commit writes what is here.
// The caller holds m.mu.
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
		if m.detachPath(p); n.parent == nil {
			m.dropStore(n)
		}
		return
	}
	mode := e.Mode
	if mode == 0 {
		mode = defaultFileMode
	}
	if n != nil && (n.mode&sIFMT != mode&sIFMT || (e.Ino != 0 && n.linkID != e.Ino && m.byIno[e.Ino] != nil)) {
		if n.isDir() && len(n.kids) > 0 {
			m.markPath(p)
			return // a remote file where we have a populated directory: keep ours
		}
		if m.detachPath(p); n.parent == nil {
			m.dropStore(n)
		}
		n = nil
	}
	if n == nil {
		parent := m.root
		parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
		for _, c := range parts[:len(parts)-1] {
			k := parent.kids[c]
			if k != nil && !k.isDir() {
				m.markPath(p)
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
		if o := m.byIno[e.Ino]; e.Ino != 0 && o != nil && o.typ == mode&sIFMT && m.attached(o) {
			n = o // another name of an inode we have: a hard link
		} else {
			n = m.newInode(mode)
		}
		m.attach(parent, parts[len(parts)-1], n)
	}
	if e.Ino != 0 && n.linkID != e.Ino {
		n.linkID = e.Ino
		m.byIno[e.Ino] = n
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
	m.dirtyNodes, m.dirtyPaths, m.byIno = map[*inode]struct{}{}, map[string]struct{}{}, map[uint64]*inode{}
	m.root = m.newInode(sIFDIR | 0o755)
	m.root.mtime = m.now()
	// The root has no manifest entry: it belongs to the mounting user.
	m.root.uid, m.root.gid = uint32(os.Getuid()), uint32(os.Getgid())
	empty := &cbfs.Manifest{}
	m.base = empty
	m.merge(empty, man)
	m.base = man
	clear(m.dirtyNodes)
	clear(m.dirtyPaths)
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

// commitLocked commits what changed since the base manifest (the dirty
// inodes and paths, never a walk of the namespace) as path operations on
// the latest manifest. Caller holds commitMu.
func (m *mfs) commitLocked(ctx context.Context) error {
	m.mu.Lock()
	g := m.gen
	base := m.base
	nodes, paths := m.dirtyNodes, m.dirtyPaths
	m.dirtyNodes, m.dirtyPaths = map[*inode]struct{}{}, map[string]struct{}{}
	changes := m.changesOf(nodes, paths)
	var verr error
	if m.opts.verifyDirty {
		verr = m.verifyChanges(changes)
	}
	m.mu.Unlock()
	// On failure the taken marks go back, to be committed by the next try.
	restore := func() {
		m.mu.Lock()
		for n := range nodes {
			m.dirtyNodes[n] = struct{}{}
		}
		for p := range paths {
			m.dirtyPaths[p] = struct{}{}
		}
		m.mu.Unlock()
	}
	if verr != nil {
		restore()
		return verr
	}
	if len(changes) == 0 {
		m.mu.Lock()
		m.committed = max(m.committed, g)
		m.mu.Unlock()
		return nil
	}
	start := time.Now()
	next, err := m.vol.Apply(ctx, changes)
	if err != nil {
		restore()
		return fmt.Errorf("fuse: commit %d changes: %w", len(changes), err)
	}
	m.log.Debug("committed", "version", next.Version, "changes", len(changes), "took", time.Since(start))
	m.commits.Add(1)
	m.commitChanges.Add(int64(len(changes)))
	m.mu.Lock()
	if next.Version != base.Version+1 {
		// Someone else committed since base: merge their changes.
		m.merge(base, next)
	}
	// Else next is base plus exactly our changes, which the namespace
	// already shows: no merge pass.
	m.base = next
	m.committed = max(m.committed, g)
	m.mu.Unlock()
	return nil
}

// changesOf lists the entries of the marked inodes and paths that differ
// from the base manifest (nil: remove the path). Caller holds m.mu.
func (m *mfs) changesOf(nodes map[*inode]struct{}, paths map[string]struct{}) map[string]*cbfs.FileEntry {
	cand := make(map[string]struct{}, len(paths)+len(nodes))
	for p := range paths {
		cand[p] = struct{}{}
	}
	for n := range nodes {
		for _, p := range m.pathsOf(n) {
			cand[p] = struct{}{}
		}
	}
	changes := map[string]*cbfs.FileEntry{}
	for p := range cand {
		if want := m.desiredAt(p); !sameEntry(want, m.baseEntry(p)) {
			changes[p] = want
		}
	}
	return changes
}

// verifyChanges checks the dirty marks against a walk of the whole
// namespace (Options.verifyDirty, set by the tests). Caller holds m.mu.
func (m *mfs) verifyChanges(changes map[string]*cbfs.FileEntry) error {
	want := map[string]*cbfs.FileEntry{}
	d := m.desired()
	for p, e := range d {
		if !sameEntry(m.baseEntry(p), &e) {
			want[p] = &e
		}
	}
	for i := range m.base.Files {
		if _, ok := d[m.base.Files[i].Path]; !ok {
			want[m.base.Files[i].Path] = nil
		}
	}
	var bad []string
	for p, e := range want {
		if c, ok := changes[p]; !ok || !sameEntry(c, e) {
			bad = append(bad, p)
		}
	}
	for p := range changes {
		if _, ok := want[p]; !ok {
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("%w: dirty tracking missed or invented changes at %q", errDirtyTracking, bad)
	}
	return nil
}

// errDirtyTracking: the dirty marks disagree with the namespace (a bug;
// checked only when Options.verifyDirty is set).
var errDirtyTracking = errors.New("fuse: dirty tracking disagrees with the namespace")

// mark records that n's entries may have changed. Caller holds m.mu.
func (m *mfs) mark(n *inode) {
	if n != m.root {
		m.dirtyNodes[n] = struct{}{}
	}
}

// markPath records that path p may have lost or changed its entry.
func (m *mfs) markPath(p string) { m.dirtyPaths[p] = struct{}{} }

// markTree marks n and everything under it, and their current paths (which
// a rename or removal is about to change). Caller holds m.mu.
func (m *mfs) markTree(n *inode, p string) {
	m.mark(n)
	m.markPath(p)
	for name, c := range n.kids {
		m.markTree(c, p+"/"+name)
	}
}

// refresh merges a newer manifest committed by another writer.
func (m *mfs) refresh(ctx context.Context) error {
	if !m.commitMu.TryLock() {
		return nil // a commit is running and merges what it finds
	}
	defer m.commitMu.Unlock()
	man, err := m.vol.Current(ctx)
	if err != nil {
		return fmt.Errorf("fuse: refresh manifest: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if man.Version > m.base.Version {
		m.merge(m.base, man)
		m.base = man
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
	m.mark(n)
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
	m.mark(n)
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
