package cbfs

import (
	"crypto/rand"
	"fmt"
)

// Small files live inline: a file that ends before its first segment is
// full and is at most Config.InlineMax bytes is sealed under its file key
// into FileEntry.Inline (nonce || AES-GCM ciphertext) and committed with the
// metadata, instead of being erasure-coded into K+M shards on K+M relays.
// Reading it needs no shard fetch; writing it costs no shard upload. The
// threshold is chosen by measurement (docs/BENCHMARKS.md, CBFS section).

// DefaultInlineMax is the default inline threshold.
const DefaultInlineMax = 16 << 10

// inlineOverhead is the nonce and tag added to inline content.
const inlineOverhead = 12 + 16

func inlineAAD(vol VolumeID, fileID [16]byte) []byte {
	return append(append(append([]byte(nil), vol[:]...), fileID[:]...), "inline"...)
}

// inline seals the buffered content as the file's inline content when the
// file qualifies; otherwise it uploads the last segment and returns nil.
func (u *Upload) inline() []byte {
	u.mu.Lock()
	segs := len(u.segments)
	u.mu.Unlock()
	if segs == 0 && len(u.buf) > 0 && len(u.buf) <= u.v.c.cfg.InlineMax {
		nonce := make([]byte, 12, 12+len(u.buf)+16)
		rand.Read(nonce)
		sealed := u.aead.Seal(nonce, nonce, u.buf, inlineAAD(u.v.id, u.fileID))
		u.size += int64(len(u.buf))
		u.buf = nil
		return sealed
	}
	if len(u.buf) > 0 {
		u.flush()
	}
	return nil
}

// openInline decrypts the inline content of e.
func (v *Volume) openInline(e *FileEntry) ([]byte, error) {
	if len(e.Inline) < inlineOverhead {
		return nil, fmt.Errorf("%w: %s: inline content too short", ErrIntegrity, e.Path)
	}
	g := subKey(v.key, "file", e.FileID[:])
	pt, err := g.Open(nil, e.Inline[:12], e.Inline[12:], inlineAAD(v.id, e.FileID))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: inline content does not decrypt", ErrIntegrity, e.Path)
	}
	return pt, nil
}
