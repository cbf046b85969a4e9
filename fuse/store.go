package fuse

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// blockSize is the unit of the local cache and write-back buffer.
const blockSize = 64 << 10

// sealer encrypts cache blocks at rest with AES-256-GCM. Each block slot on
// disk is nonce || u32 length || ciphertext+tag, where only the block's
// bytes up to its last non-zero one are sealed (the rest are zeros: a 1 KiB
// file seals 1 KiB, not 64); the additional data binds the slot to its
// inode and block number so blocks cannot be swapped.
type sealer struct {
	aead cipher.AEAD
}

func newSealer(key [32]byte) (*sealer, error) {
	k, err := hkdf.Key(sha256.New, key[:], nil, "cowboy fuse cache v1", 32)
	if err != nil {
		return nil, fmt.Errorf("fuse: derive cache key: %w", err)
	}
	b, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("fuse: cache cipher: %w", err)
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		return nil, fmt.Errorf("fuse: cache cipher: %w", err)
	}
	return &sealer{aead: g}, nil
}

const (
	slotHeader = 12 + 4 // nonce, sealed length
	slotSize   = slotHeader + blockSize + 16
)

var zeroChunk [4096]byte

// usedLen is the length of b without its trailing zero bytes.
func usedLen(b []byte) int {
	n := len(b)
	for n >= len(zeroChunk) && bytes.Equal(b[n-len(zeroChunk):n], zeroChunk[:]) {
		n -= len(zeroChunk)
	}
	for n >= 64 && bytes.Equal(b[n-64:n], zeroChunk[:64]) {
		n -= 64
	}
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return n
}

// blockStore is the local, encrypted copy of some blocks of one file: the
// read cache of its committed content and its unflushed writes. Blocks not
// present are read from the committed content (or are zeros).
type blockStore struct {
	s        *sealer
	ino, seq uint64
	path     string

	mu      sync.Mutex
	f       *os.File
	present map[int64]bool
	closed  bool
}

// newBlockStore returns the store of inode ino; seq makes its file name
// unique (a file's store is replaced when its content changes remotely).
func newBlockStore(dir string, s *sealer, ino, seq uint64) *blockStore {
	return &blockStore{s: s, ino: ino, seq: seq, path: filepath.Join(dir, fmt.Sprintf("%d-%d.blk", ino, seq)), present: map[int64]bool{}}
}

func (b *blockStore) aad(blk int64) []byte {
	a := binary.BigEndian.AppendUint64(nil, b.ino)
	a = binary.BigEndian.AppendUint64(a, b.seq)
	return binary.BigEndian.AppendUint64(a, uint64(blk))
}

func (b *blockStore) file() (*os.File, error) {
	if b.f == nil {
		f, err := os.OpenFile(b.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("fuse: cache file: %w", err)
		}
		b.f = f
	}
	return b.f, nil
}

// has reports whether block blk is stored.
func (b *blockStore) has(blk int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.present[blk]
}

// count is the number of stored blocks.
func (b *blockStore) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.present)
}

// get decrypts block blk into dst (len blockSize); ok is false if absent.
func (b *blockStore) get(blk int64, dst []byte) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.present[blk] {
		return false, nil
	}
	var hdr [slotHeader]byte
	if _, err := b.f.ReadAt(hdr[:], blk*slotSize); err != nil {
		return false, fmt.Errorf("fuse: read cache block %d: %w", blk, err)
	}
	n := int(binary.BigEndian.Uint32(hdr[12:]))
	if n > blockSize || n > len(dst) {
		return false, fmt.Errorf("fuse: cache block %d of inode %d: sealed length %d", blk, b.ino, n)
	}
	ct := make([]byte, n+16)
	if _, err := b.f.ReadAt(ct, blk*slotSize+slotHeader); err != nil {
		return false, fmt.Errorf("fuse: read cache block %d: %w", blk, err)
	}
	if _, err := b.s.aead.Open(dst[:0], hdr[:12], ct, b.aad(blk)); err != nil {
		return false, fmt.Errorf("fuse: cache block %d of inode %d does not decrypt: %w", blk, b.ino, err)
	}
	clear(dst[n:])
	return true, nil
}

// put encrypts and stores a full block (len blockSize).
func (b *blockStore) put(blk int64, data []byte) error {
	n := usedLen(data)
	slot := make([]byte, slotHeader, slotHeader+n+16)
	rand.Read(slot[:12])
	binary.BigEndian.PutUint32(slot[12:], uint32(n))
	slot = b.s.aead.Seal(slot, slot[:12], data[:n], b.aad(blk))
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil // replaced: the block is simply not cached
	}
	f, err := b.file()
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(slot, blk*slotSize); err != nil {
		return fmt.Errorf("fuse: write cache block %d: %w", blk, err)
	}
	b.present[blk] = true
	return nil
}

// drop forgets blocks >= from.
func (b *blockStore) drop(from int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.present {
		if k >= from {
			delete(b.present, k)
		}
	}
	if b.f != nil {
		b.f.Truncate(from * slotSize)
	}
}

// close removes the cache file.
func (b *blockStore) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.f != nil {
		b.f.Close()
		b.f = nil
	}
	b.closed = true
	os.Remove(b.path)
	clear(b.present)
}
