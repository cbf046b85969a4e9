package fuse

import (
	"context"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
)

// streamUp uploads a file while it is written sequentially from empty, so
// that close(2) or fsync(2) only has the tail left to send: without it a
// large write reached the relays only at fsync, after the whole file had
// gone to the local buffer. Any write before the streamed offset, or a
// truncate, abandons the stream (its shards are deleted) and the file is
// uploaded whole as before. Guarded by the inode's fmu.
type streamUp struct {
	up  *cbfs.Upload
	off int64 // bytes handed to up: whole blocks from the start of the file
}

// streamWrite feeds the blocks a write of k bytes at off completed to n's
// stream, starting one for a file written from its first byte. The caller
// holds n.fmu exclusively.
func (m *mfs) streamWrite(ctx context.Context, n *inode, off int64) {
	s := n.stream
	if s != nil && off < s.off {
		m.abandonStream(n) // rewriting what was sent
		return
	}
	m.mu.Lock()
	size, fresh, attached := n.size, n.base == nil || n.baseLim == 0, m.attached(n)
	p := m.pathOf(n)
	m.mu.Unlock()
	if s == nil {
		if off != 0 || !fresh || !attached || size < blockSize || m.bg == nil {
			return
		}
		up, err := m.vol.Upload(m.bg, p)
		if err != nil {
			return // uploaded whole at close instead
		}
		s = &streamUp{up: up}
		n.stream = s
	}
	for s.off+blockSize <= size {
		b, err := m.block(ctx, n, s.off/blockSize)
		if err == nil {
			_, err = s.up.Write(b)
		}
		if err != nil {
			m.log.Debug("streaming upload abandoned", "path", p, "err", err)
			m.abandonStream(n)
			return
		}
		s.off += blockSize
	}
}

// abandonStream aborts n's stream, if any. The caller holds n.fmu.
func (m *mfs) abandonStream(n *inode) {
	if n.stream != nil {
		n.stream.up.Abort()
		n.stream = nil
	}
}

// finishStream sends the rest of n's content (size bytes) to its stream and
// stages it. ok is false if there was no usable stream: the caller uploads
// the file whole. The caller holds n.fmu.
func (m *mfs) finishStream(ctx context.Context, n *inode, size int64) (e cbfs.FileEntry, ok bool) {
	s := n.stream
	n.stream = nil
	if s == nil {
		return e, false
	}
	if size < s.off {
		s.up.Abort()
		return e, false
	}
	for off := s.off; off < size; off += blockSize {
		b, err := m.block(ctx, n, off/blockSize)
		if err == nil {
			_, err = s.up.Write(b[:min(blockSize, size-off)])
		}
		if err != nil {
			s.up.Abort()
			return e, false
		}
	}
	e, err := s.up.Stage()
	if err != nil {
		m.log.Warn("streamed upload failed; uploading the file again", "err", err)
		return e, false
	}
	return e, true
}
