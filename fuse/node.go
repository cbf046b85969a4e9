package fuse

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"sort"
	"syscall"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/hanwen/go-fuse/v2/fs"
	gofuse "github.com/hanwen/go-fuse/v2/fuse"
)

// node is the go-fuse face of an inode. go-fuse keeps one node per inode
// number; lookups build fresh nodes that it discards when it already has
// one.
type node struct {
	fs.Inode
	m *mfs
	n *inode
}

// handle is an open file.
type handle struct {
	write bool
}

var (
	_ fs.NodeGetattrer  = (*node)(nil)
	_ fs.NodeSetattrer  = (*node)(nil)
	_ fs.NodeLookuper   = (*node)(nil)
	_ fs.NodeReaddirer  = (*node)(nil)
	_ fs.NodeOpener     = (*node)(nil)
	_ fs.NodeReader     = (*node)(nil)
	_ fs.NodeWriter     = (*node)(nil)
	_ fs.NodeCreater    = (*node)(nil)
	_ fs.NodeMkdirer    = (*node)(nil)
	_ fs.NodeUnlinker   = (*node)(nil)
	_ fs.NodeRmdirer    = (*node)(nil)
	_ fs.NodeRenamer    = (*node)(nil)
	_ fs.NodeSymlinker  = (*node)(nil)
	_ fs.NodeReadlinker = (*node)(nil)
	_ fs.NodeLinker     = (*node)(nil)
	_ fs.NodeStatfser   = (*node)(nil)
	_ fs.NodeFsyncer    = (*node)(nil)
	_ fs.NodeFlusher    = (*node)(nil)
	_ fs.NodeReleaser   = (*node)(nil)
	_ fs.NodeAllocater  = (*node)(nil)
	_ fs.NodeTmpfiler   = (*node)(nil)
	_ fs.NodeMknoder    = (*node)(nil)
)

// errno maps an error of the volume to an errno, logging unexpected ones.
func (m *mfs) errno(op string, err error) syscall.Errno {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, cbfs.ErrPermission), errors.Is(err, cbfs.ErrTokenExpired):
		m.log.Warn("permission denied", "op", op, "err", err)
		return syscall.EACCES
	case errors.Is(err, cbfs.ErrNotFound):
		return syscall.ENOENT
	case errors.Is(err, context.Canceled):
		return syscall.EINTR
	case errors.Is(err, cbfs.ErrRelayFull):
		m.log.Error("volume full", "op", op, "err", err)
		return syscall.ENOSPC
	}
	m.log.Error("I/O error", "op", op, "err", err)
	return syscall.EIO
}

// fill writes n's attributes. Caller holds m.mu.
func (m *mfs) fill(n *inode, a *gofuse.Attr) {
	a.Ino = n.ino
	a.Mode = n.mode
	a.Uid, a.Gid = n.uid, n.gid
	a.Nlink = uint32(n.nlink())
	switch n.mode & sIFMT {
	case sIFDIR:
		a.Nlink = 2
		for _, c := range n.kids {
			if c.isDir() {
				a.Nlink++
			}
		}
		a.Size = 4096
	case sIFLNK:
		a.Size = uint64(len(n.target))
	default:
		a.Size = uint64(n.size)
	}
	if n.parent == nil && n != m.root {
		a.Nlink = 0
	}
	a.Blocks = (a.Size + 511) / 512
	a.Blksize = blockSize
	mt := uint64(n.mtime)
	ct := uint64(max(n.ctime, n.mtime))
	a.Mtime, a.Mtimensec = mt/1e9, uint32(mt%1e9)
	a.Atime, a.Atimensec = a.Mtime, a.Mtimensec
	a.Ctime, a.Ctimensec = ct/1e9, uint32(ct%1e9)
}

func (x *node) Getattr(ctx context.Context, f fs.FileHandle, out *gofuse.AttrOut) syscall.Errno {
	x.m.mu.Lock()
	defer x.m.mu.Unlock()
	x.m.fill(x.n, &out.Attr)
	return 0
}

func (x *node) Setattr(ctx context.Context, f fs.FileHandle, in *gofuse.SetAttrIn, out *gofuse.AttrOut) syscall.Errno {
	if x.m.ro {
		return syscall.EROFS
	}
	m, n := x.m, x.n
	if sz, ok := in.GetSize(); ok {
		if n.isDir() {
			return syscall.EISDIR
		}
		n.fmu.Lock()
		err := m.truncate(ctx, n, int64(sz))
		n.fmu.Unlock()
		if err != nil {
			return m.errno("truncate", err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if mode, ok := in.GetMode(); ok {
		n.mode = n.mode&sIFMT | mode&0o7777
	}
	if uid, ok := in.GetUID(); ok {
		n.uid = uid
	}
	if gid, ok := in.GetGID(); ok {
		n.gid = gid
	}
	if mt, ok := in.GetMTime(); ok {
		n.mtime = mt.UnixNano()
		if !n.dirty {
			n.pubMtime = n.mtime
		}
	}
	n.ctime = now
	n.implicit = false
	m.mark(n)
	m.changed()
	m.fill(n, &out.Attr)
	return 0
}

func (x *node) child(ctx context.Context, c *inode, out *gofuse.EntryOut) *fs.Inode {
	x.m.fill(c, &out.Attr)
	return x.NewInode(ctx, &node{m: x.m, n: c}, fs.StableAttr{Mode: c.mode & sIFMT, Ino: c.ino})
}

func (x *node) Lookup(ctx context.Context, name string, out *gofuse.EntryOut) (*fs.Inode, syscall.Errno) {
	x.m.mu.Lock()
	defer x.m.mu.Unlock()
	c := x.n.kids[name]
	if c == nil {
		return nil, syscall.ENOENT
	}
	return x.child(ctx, c, out), 0
}

func (x *node) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	x.m.mu.Lock()
	defer x.m.mu.Unlock()
	if !x.n.isDir() {
		return nil, syscall.ENOTDIR
	}
	out := make([]gofuse.DirEntry, 0, len(x.n.kids))
	for name, c := range x.n.kids {
		out = append(out, gofuse.DirEntry{Name: name, Ino: c.ino, Mode: c.mode & sIFMT})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return fs.NewListDirStream(out), 0
}

// touchDir records a change of directory d's entries. Caller holds m.mu.
func (m *mfs) touchDir(d *inode) {
	d.mtime = m.now()
	d.ctime = d.mtime
	d.implicit = false // a directory changed here gets its own entry
	m.mark(d)
	m.changed()
}

func (x *node) newChild(ctx context.Context, name string, mode uint32) (*inode, syscall.Errno) {
	m := x.m
	if m.ro {
		return nil, syscall.EROFS
	}
	if len(name) > 255 {
		return nil, syscall.ENAMETOOLONG
	}
	if x.n.kids[name] != nil {
		return nil, syscall.EEXIST
	}
	c := m.newInode(mode)
	if caller, ok := gofuse.FromContext(ctx); ok {
		c.uid, c.gid = caller.Uid, caller.Gid
	}
	c.mtime = m.now()
	c.ctime, c.pubMtime = c.mtime, c.mtime
	m.attach(x.n, name, c)
	m.mark(c)
	m.touchDir(x.n)
	return c, 0
}

func (x *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *gofuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	m := x.m
	m.mu.Lock()
	if c := x.n.kids[name]; c != nil && !m.ro {
		// The kernel's view was stale: open the existing file.
		m.mu.Unlock()
		switch {
		case flags&syscall.O_EXCL != 0:
			return nil, nil, 0, syscall.EEXIST
		case c.isDir():
			return nil, nil, 0, syscall.EISDIR
		}
		if flags&syscall.O_TRUNC != 0 {
			c.fmu.Lock()
			err := m.truncate(ctx, c, 0)
			c.fmu.Unlock()
			if err != nil {
				return nil, nil, 0, m.errno("create", err)
			}
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		c.handles++
		return x.child(ctx, c, out), &handle{write: true}, 0, 0
	}
	c, errno := x.newChild(ctx, name, sIFREG|mode&0o7777)
	if errno != 0 {
		m.mu.Unlock()
		return nil, nil, 0, errno
	}
	c.dirty = true
	c.handles++
	c.opened = true // the page cache fills from this handle's writes
	in := x.child(ctx, c, out)
	m.mu.Unlock()
	return in, &handle{write: true}, 0, 0
}

func (x *node) Mkdir(ctx context.Context, name string, mode uint32, out *gofuse.EntryOut) (*fs.Inode, syscall.Errno) {
	x.m.mu.Lock()
	defer x.m.mu.Unlock()
	c, errno := x.newChild(ctx, name, sIFDIR|mode&0o7777)
	if errno != 0 {
		return nil, errno
	}
	return x.child(ctx, c, out), 0
}

func (x *node) Symlink(ctx context.Context, target, name string, out *gofuse.EntryOut) (*fs.Inode, syscall.Errno) {
	x.m.mu.Lock()
	defer x.m.mu.Unlock()
	c, errno := x.newChild(ctx, name, sIFLNK|0o777)
	if errno != 0 {
		return nil, errno
	}
	c.target = target
	return x.child(ctx, c, out), 0
}

func (x *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	x.m.mu.Lock()
	defer x.m.mu.Unlock()
	if x.n.mode&sIFMT != sIFLNK {
		return nil, syscall.EINVAL
	}
	return []byte(x.n.target), 0
}

// Mknod creates FIFOs and sockets: the kernel serves them (a FIFO's data
// never reaches the file system), so they are only a mode in the manifest.
// Device nodes need a device number the manifest does not record: EPERM.
func (x *node) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *gofuse.EntryOut) (*fs.Inode, syscall.Errno) {
	switch mode & sIFMT {
	case syscall.S_IFIFO, syscall.S_IFSOCK:
	case sIFREG:
		mode = sIFREG | mode&0o7777
	default:
		if x.m.ro {
			return nil, syscall.EROFS
		}
		return nil, syscall.EPERM
	}
	x.m.mu.Lock()
	defer x.m.mu.Unlock()
	c, errno := x.newChild(ctx, name, mode&(sIFMT|0o7777))
	if errno != 0 {
		return nil, errno
	}
	return x.child(ctx, c, out), 0
}

// Tmpfile is open(2) with O_TMPFILE: a regular file in no directory. Its
// data stays in the local write-back buffer and is discarded at the last
// close unless linkat(2) gives it a name (Link).
func (x *node) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *gofuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	m := x.m
	if m.ro {
		return nil, nil, 0, syscall.EROFS
	}
	if !x.n.isDir() {
		return nil, nil, 0, syscall.ENOTDIR
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.newInode(sIFREG | mode&0o7777)
	if caller, ok := gofuse.FromContext(ctx); ok {
		c.uid, c.gid = caller.Uid, caller.Gid
	}
	c.mtime = m.now()
	c.ctime, c.pubMtime = c.mtime, c.mtime
	c.handles++
	c.opened = true
	m.fill(c, &out.Attr)
	in := x.NewInode(ctx, &node{m: m, n: c}, fs.StableAttr{Mode: sIFREG, Ino: c.ino})
	return in, &handle{write: true}, 0, 0
}

// Allocate implements fallocate(2) modes 0 (extend the file with zeros) and
// FALLOC_FL_KEEP_SIZE (nothing to reserve: relays are not preallocated).
// Other modes (punching or collapsing holes) are not supported.
func (x *node) Allocate(ctx context.Context, f fs.FileHandle, off uint64, size uint64, mode uint32) syscall.Errno {
	const keepSize = 1 // FALLOC_FL_KEEP_SIZE
	m, n := x.m, x.n
	if m.ro {
		return syscall.EROFS
	}
	if n.isDir() {
		return syscall.EISDIR
	}
	switch mode {
	case keepSize:
		return 0
	case 0:
	default:
		return syscall.EOPNOTSUPP
	}
	n.fmu.Lock()
	defer n.fmu.Unlock()
	m.mu.Lock()
	cur := n.size
	m.mu.Unlock()
	if end := int64(off + size); end > cur {
		return m.errno("fallocate", m.truncate(ctx, n, end))
	}
	return 0
}

// Link gives target another name: a hard link. Both names are entries of
// the manifest with the same inode number (cbfs.FileEntry.Ino), content
// and metadata; a change through either is committed at both. A file
// opened with O_TMPFILE gets its first name this way (linkat(2) with
// AT_EMPTY_PATH).
func (x *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *gofuse.EntryOut) (*fs.Inode, syscall.Errno) {
	m := x.m
	if m.ro {
		return nil, syscall.EROFS
	}
	t, ok := target.(*node)
	if !ok {
		return nil, syscall.EXDEV
	}
	if len(name) > 255 {
		return nil, syscall.ENAMETOOLONG
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := t.n
	switch {
	case c.isDir():
		return nil, syscall.EPERM
	case x.n.kids[name] != nil:
		return nil, syscall.EEXIST
	case c.parent != nil && !m.attached(c):
		return nil, syscall.ENOENT
	}
	if c.parent != nil && c.linkID == 0 {
		var b [8]byte
		for c.linkID == 0 {
			rand.Read(b[:])
			c.linkID = binary.BigEndian.Uint64(b[:])
		}
	}
	if c.linkID != 0 {
		m.byIno[c.linkID] = c
	}
	m.attach(x.n, name, c)
	c.ctime = m.now()
	m.mark(c) // every name's entry now carries the inode number
	m.touchDir(x.n)
	return x.child(ctx, c, out), 0
}

func (x *node) Unlink(ctx context.Context, name string) syscall.Errno {
	m := x.m
	if m.ro {
		return syscall.EROFS
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := x.n.kids[name]
	if c == nil {
		return syscall.ENOENT
	}
	if c.isDir() {
		return syscall.EISDIR
	}
	m.markPath(m.pathIn(x.n, name))
	m.detach(x.n, name)
	m.mark(c) // its other names (if any)
	c.ctime = m.now()
	if c.parent == nil && c.handles == 0 && c.store != nil {
		c.store.close()
		c.store = nil
	}
	m.touchDir(x.n)
	return 0
}

func (x *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	m := x.m
	if m.ro {
		return syscall.EROFS
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := x.n.kids[name]
	if c == nil {
		return syscall.ENOENT
	}
	if !c.isDir() {
		return syscall.ENOTDIR
	}
	if len(c.kids) > 0 {
		return syscall.ENOTEMPTY
	}
	m.markPath(m.pathIn(x.n, name))
	m.detach(x.n, name)
	m.touchDir(x.n)
	return 0
}

// renameNoReplace and renameExchange are the renameat2 flags.
const (
	renameNoReplace = 1
	renameExchange  = 2
)

func (x *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	m := x.m
	if m.ro {
		return syscall.EROFS
	}
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	if flags&renameExchange != 0 {
		return syscall.EINVAL
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	src := x.n.kids[name]
	if src == nil {
		return syscall.ENOENT
	}
	for d := np.n; d != nil; d = d.parent {
		if d == src {
			return syscall.EINVAL // into its own subtree
		}
	}
	if dst := np.n.kids[newName]; dst != nil {
		if dst == src {
			return 0
		}
		if flags&renameNoReplace != 0 {
			return syscall.EEXIST
		}
		switch {
		case src.isDir() && !dst.isDir():
			return syscall.ENOTDIR
		case !src.isDir() && dst.isDir():
			return syscall.EISDIR
		case dst.isDir() && len(dst.kids) > 0:
			return syscall.ENOTEMPTY
		}
		m.markTree(dst, m.pathIn(np.n, newName))
		m.detach(np.n, newName)
		if dst.parent == nil && dst.handles == 0 && dst.store != nil {
			dst.store.close()
			dst.store = nil
		}
	}
	// The old paths of everything moved lose their entries; the moved
	// inodes get entries at their new paths (marked again below).
	m.markTree(src, m.pathIn(x.n, name))
	m.detach(x.n, name)
	m.attach(np.n, newName, src)
	m.markTree(src, m.pathIn(np.n, newName))
	src.implicit = false
	src.ctime = m.now()
	m.touchDir(x.n)
	m.touchDir(np.n)
	return 0
}

func (x *node) Statfs(ctx context.Context, out *gofuse.StatfsOut) syscall.Errno {
	m := x.m
	m.mu.Lock()
	var used int64
	for _, f := range m.base.Files {
		used += f.Size
	}
	files := uint64(len(m.base.Files))
	m.mu.Unlock()
	const bs = 4096
	const capacity = 1 << 50 // relays report no volume quota: advertise 1 PiB
	out.Bsize, out.Frsize = bs, bs
	out.Blocks = capacity / bs
	out.Bfree = out.Blocks - uint64(used+bs-1)/bs
	out.Bavail = out.Bfree
	out.Files = files + 1<<30
	out.Ffree = 1 << 30
	out.NameLen = 255
	return 0
}

func (x *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	m, n := x.m, x.n
	write := flags&syscall.O_ACCMODE != syscall.O_RDONLY
	if write && m.ro {
		return nil, 0, syscall.EROFS
	}
	if n.isDir() {
		if write {
			return nil, 0, syscall.EISDIR
		}
		return &handle{}, 0, 0
	}
	if flags&syscall.O_TRUNC != 0 && write {
		n.fmu.Lock()
		err := m.truncate(ctx, n, 0)
		n.fmu.Unlock()
		if err != nil {
			return nil, 0, m.errno("open", err)
		}
	}
	m.mu.Lock()
	n.handles++
	// Close-to-open consistency: the kernel keeps its page cache of the
	// file only if the content did not change behind its back since the
	// last open (another mount's version, merged by the poll, or a
	// truncate); otherwise it drops it. Local writes go through the page
	// cache, so they keep it valid.
	keep := n.opened && n.openGen == n.contentGen
	n.opened, n.openGen = true, n.contentGen
	m.mu.Unlock()
	var fl uint32
	if keep {
		fl = gofuse.FOPEN_KEEP_CACHE
	}
	return &handle{write: write}, fl, 0
}

func (x *node) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (gofuse.ReadResult, syscall.Errno) {
	k, err := x.m.readAt(ctx, x.n, dest, off)
	if err != nil {
		return nil, x.m.errno("read", err)
	}
	return gofuse.ReadResultData(dest[:k]), 0
}

func (x *node) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if x.m.ro {
		return 0, syscall.EROFS
	}
	k, err := x.m.writeAt(ctx, x.n, data, off)
	if err != nil {
		return uint32(k), x.m.errno("write", err)
	}
	return uint32(k), 0
}

// commitTimeout bounds the upload and commit of one close or fsync.
const commitTimeout = 10 * time.Minute

// Fsync uploads the file's dirty data and commits the manifest; on a
// directory it commits pending namespace changes.
func (x *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	if x.m.ro {
		return 0
	}
	// A signal to the caller (the kernel then interrupts the request) must
	// not abort a commit half way: finish it, bounded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	if err := x.m.upload(ctx, x.n); err != nil {
		return x.m.errno("fsync", err)
	}
	return x.m.errno("fsync", x.m.sync(ctx))
}

// Flush runs on every close(2): a handle that could write uploads the
// file's dirty data and commits, so the next open anywhere sees it.
func (x *node) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno {
	h, _ := f.(*handle)
	if x.m.ro || h == nil || !h.write {
		return 0
	}
	if x.m.opts.DeferCloseCommit {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
		defer cancel()
		if err := x.m.upload(ctx, x.n); err != nil {
			return x.m.errno("close", err)
		}
		return 0
	}
	return x.Fsync(ctx, f, 0)
}

func (x *node) Release(ctx context.Context, f fs.FileHandle) syscall.Errno {
	m, n := x.m, x.n
	if n.isDir() {
		return 0
	}
	m.mu.Lock()
	n.handles--
	orphan := n.handles == 0 && !m.attached(n)
	if orphan && n.store != nil {
		n.store.close()
		n.store = nil
	}
	m.mu.Unlock()
	if orphan {
		n.fmu.Lock()
		m.abandonStream(n) // unlinked while written: nothing to publish
		n.fmu.Unlock()
	}
	return 0
}

// Extended attributes are not stored: reads find none, writes are refused
// with ENOTSUP (which cp -a and rsync treat as "not supported here").
func (x *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENODATA
}

func (x *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	if x.m.ro {
		return syscall.EROFS
	}
	return syscall.ENOTSUP
}

func (x *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	if x.m.ro {
		return syscall.EROFS
	}
	return syscall.ENODATA
}

func (x *node) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	return 0, 0
}
