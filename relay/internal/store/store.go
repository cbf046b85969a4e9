// Package store keeps relay objects (shards and encrypted manifests) on disk.
//
// Layout: each object is one file under objects/, written to tmp/ first,
// streamed through the chunk-tree hasher, fsynced, renamed into place and the
// directory fsynced; only then is its index entry committed to bbolt
// (index.db, whose commit fsyncs). An object is acknowledged only after the
// bbolt commit, so an acknowledged object survives kill -9. Files without an
// index entry (a crash between rename and commit) and leftover tmp files are
// removed at Open. Every read re-hashes the file and refuses to serve data
// that no longer matches the hash recorded at write time. Volume heads go to
// an append-only head log first (one fdatasync each) and reach bbolt in
// batches (heads.go, headlog.go).
package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	bolt "go.etcd.io/bbolt"
)

// Errors.
var (
	ErrNotFound     = errors.New("store: object not found")
	ErrFull         = errors.New("store: relay full")
	ErrCorrupt      = errors.New("store: object corrupt")
	ErrHashMismatch = errors.New("store: body does not match declared hash")
	ErrConflict     = errors.New("store: object exists with different content")
	ErrTooLarge     = errors.New("store: object too large")
)

var bucketObjects = []byte("objects")

// Meta is the index record of one object.
type Meta struct {
	Kind    wire.Kind `cbor:"1,keyasint"`
	Version uint64    `cbor:"2,keyasint"`
	Size    uint64    `cbor:"3,keyasint"`
	Hash    [32]byte  `cbor:"4,keyasint"`
	Created int64     `cbor:"5,keyasint"`
}

// Store is an object store. It is safe for concurrent use.
type Store struct {
	dir      string
	db       *bolt.DB
	capacity uint64
	maxObj   uint64

	mu       sync.Mutex
	used     uint64
	reserved uint64
	objects  uint64
	writing  map[string]bool

	heads *headLog // nil when opened read-only
}

// Open opens (creating) a store in dir with a capacity in bytes (0 = no
// limit) and a per-object limit.
func Open(dir string, capacity, maxObject uint64) (*Store, error) {
	for _, d := range []string{dir, filepath.Join(dir, "objects"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("store: mkdir %s: %w", d, err)
		}
	}
	db, err := bolt.Open(filepath.Join(dir, "index.db"), 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("store: open index: %w", err)
	}
	s := &Store{dir: dir, db: db, capacity: capacity, maxObj: maxObject, writing: map[string]bool{}}
	if err := s.recover(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.openHeads(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// openHeads opens the head log and moves what it holds into bbolt.
func (s *Store) openHeads() error {
	hl, recs, err := openHeadLog(s.dir)
	if err != nil {
		return err
	}
	s.heads = hl
	hl.mu.Lock()
	defer hl.mu.Unlock()
	if err := s.flushHeads(); err != nil {
		hl.close()
		return fmt.Errorf("store: replay %d logged heads: %w", len(recs), err)
	}
	return nil
}

// OpenReadOnly opens the index of a store that is not running, for status.
func OpenReadOnly(dir string) (*Store, error) {
	db, err := bolt.Open(filepath.Join(dir, "index.db"), 0o600, &bolt.Options{ReadOnly: true, Timeout: 500 * time.Millisecond})
	if err != nil {
		return nil, fmt.Errorf("store: open index read-only: %w", err)
	}
	s := &Store{dir: dir, db: db, writing: map[string]bool{}}
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketObjects)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var m Meta
			if err := wire.Unmarshal(v, &m); err != nil {
				return err
			}
			s.used += m.Size
			s.objects++
			return nil
		})
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: scan index: %w", err)
	}
	return s, nil
}

func (s *Store) recover() error {
	tmp := filepath.Join(s.dir, "tmp")
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return fmt.Errorf("store: read tmp: %w", err)
	}
	for _, e := range ents {
		os.Remove(filepath.Join(tmp, e.Name()))
	}
	known := map[string]bool{}
	var missing [][]byte
	err = s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketObjects)
		if err != nil {
			return err
		}
		err = b.ForEach(func(k, v []byte) error {
			var m Meta
			if err := wire.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("index entry %x: %w", k, err)
			}
			p := s.path(k)
			if _, err := os.Stat(p); err != nil {
				missing = append(missing, append([]byte(nil), k...))
				return nil
			}
			known[p] = true
			s.used += m.Size
			s.objects++
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range missing {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: recover index: %w", err)
	}
	// Remove files that were renamed into place but never indexed.
	return filepath.WalkDir(filepath.Join(s.dir, "objects"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !known[p] {
			os.Remove(p)
		}
		return nil
	})
}

func key(vol, id [32]byte) []byte {
	k := make([]byte, 64)
	copy(k, vol[:])
	copy(k[32:], id[:])
	return k
}

func (s *Store) path(k []byte) string {
	h := hex.EncodeToString(k)
	return filepath.Join(s.dir, "objects", h[:4], h)
}

// Path returns the file of an object (for tests that tamper with data).
func (s *Store) Path(vol, id [32]byte) string { return s.path(key(vol, id)) }

// Usage reports used bytes, capacity and object count.
func (s *Store) Usage() (used, capacity, objects uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used, s.capacity, s.objects
}

// Close closes the index.
func (s *Store) Close() error {
	if hl := s.heads; hl != nil {
		hl.mu.Lock()
		var err error
		if hl.f != nil {
			err = s.flushHeads()
		}
		err = errors.Join(err, hl.close())
		hl.mu.Unlock()
		if err != nil {
			s.db.Close()
			return err
		}
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// Stat returns an object's index record.
func (s *Store) Stat(vol, id [32]byte) (Meta, error) {
	var m Meta
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketObjects).Get(key(vol, id))
		if v == nil {
			return ErrNotFound
		}
		return wire.Unmarshal(v, &m)
	})
	return m, err
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// copyBuf is the buffer size for receiving an object.
const copyBuf = 256 << 10

// Put stores size bytes from r under (vol,id). The body must hash to hash.
// Storing identical content again is a no-op (the body is drained).
func (s *Store) Put(ctx context.Context, vol, id [32]byte, m Meta, r io.Reader) error {
	if s.maxObj > 0 && m.Size > s.maxObj {
		return fmt.Errorf("%w: %d > %d bytes", ErrTooLarge, m.Size, s.maxObj)
	}
	k := key(vol, id)
	if old, err := s.Stat(vol, id); err == nil {
		if old.Hash != m.Hash || old.Size != m.Size {
			return ErrConflict
		}
		io.Copy(io.Discard, io.LimitReader(r, int64(m.Size)))
		return nil
	}
	s.mu.Lock()
	if s.writing[string(k)] {
		s.mu.Unlock()
		return fmt.Errorf("%w: concurrent write", ErrConflict)
	}
	if s.capacity > 0 && s.used+s.reserved+m.Size > s.capacity {
		free := int64(s.capacity) - int64(s.used+s.reserved)
		s.mu.Unlock()
		return fmt.Errorf("%w: %d bytes free, %d needed", ErrFull, max(free, 0), m.Size)
	}
	s.reserved += m.Size
	s.writing[string(k)] = true
	s.mu.Unlock()
	committed := false
	defer func() {
		s.mu.Lock()
		s.reserved -= m.Size
		delete(s.writing, string(k))
		if committed {
			s.used += m.Size
			s.objects++
		}
		s.mu.Unlock()
	}()

	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "put-*")
	if err != nil {
		return fmt.Errorf("store: create temp: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if !committed {
			f.Close()
			os.Remove(tmp)
		}
	}()
	var b merkle.Builder
	// Large reads: fewer write syscalls and whole SIMD groups for the hash.
	n, err := io.CopyBuffer(io.MultiWriter(f, &b), io.LimitReader(ctxReader{ctx, r}, int64(m.Size)), make([]byte, copyBuf))
	if err != nil {
		return fmt.Errorf("store: receive body: %w", err)
	}
	if uint64(n) != m.Size {
		return fmt.Errorf("store: body short: %d of %d bytes: %w", n, m.Size, io.ErrUnexpectedEOF)
	}
	if b.Sum() != m.Hash {
		return ErrHashMismatch
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("store: fsync: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	dst := s.path(k)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("store: mkdir: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("store: rename: %w", err)
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		os.Remove(dst)
		return err
	}
	if m.Created == 0 {
		m.Created = time.Now().Unix()
	}
	enc, err := wire.Marshal(&m)
	if err != nil {
		return fmt.Errorf("store: encode meta: %w", err)
	}
	// Batch coalesces concurrent commits into one fsynced transaction.
	if err := s.db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(bucketObjects).Put(k, enc) }); err != nil {
		os.Remove(dst)
		return fmt.Errorf("store: commit index: %w", err)
	}
	committed = true
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("store: open dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("store: fsync dir: %w", err)
	}
	return nil
}

// verify re-hashes the file of (vol,id) into h and returns its meta and
// open file.
func (s *Store) verify(ctx context.Context, vol, id [32]byte, h interface {
	io.Writer
	Sum() merkle.Hash
}) (Meta, *os.File, error) {
	m, err := s.Stat(vol, id)
	if err != nil {
		return m, nil, err
	}
	f, err := os.Open(s.path(key(vol, id)))
	if err != nil {
		return m, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	n, err := io.Copy(h, ctxReader{ctx, f})
	if err != nil {
		f.Close()
		if ctx.Err() != nil {
			return m, nil, ctx.Err()
		}
		return m, nil, fmt.Errorf("%w: read: %v", ErrCorrupt, err)
	}
	if uint64(n) != m.Size || h.Sum() != m.Hash {
		f.Close()
		return m, nil, fmt.Errorf("%w: hash mismatch", ErrCorrupt)
	}
	return m, f, nil
}

// Get verifies the object and returns a reader over [off, off+n) (n==0: to
// the end). The caller closes the reader.
func (s *Store) Get(ctx context.Context, vol, id [32]byte, off, n uint64) (Meta, io.ReadCloser, uint64, error) {
	m, f, err := s.verify(ctx, vol, id, &merkle.Builder{})
	if err != nil {
		return m, nil, 0, err
	}
	return section(m, f, off, n)
}

// Read is Get without re-hashing the object first, for readers that verify
// what they receive themselves (CBFS clients check every shard against the
// manifest, by its AEAD tag or its hash): re-hashing a shard on every read
// doubled the CPU cost of serving it. A short file is still ErrCorrupt.
func (s *Store) Read(vol, id [32]byte, off, n uint64) (Meta, io.ReadCloser, uint64, error) {
	m, err := s.Stat(vol, id)
	if err != nil {
		return m, nil, 0, err
	}
	f, err := os.Open(s.path(key(vol, id)))
	if err != nil {
		return m, nil, 0, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if st, err := f.Stat(); err != nil || uint64(st.Size()) != m.Size {
		f.Close()
		return m, nil, 0, fmt.Errorf("%w: size differs from the index", ErrCorrupt)
	}
	return section(m, f, off, n)
}

func section(m Meta, f *os.File, off, n uint64) (Meta, io.ReadCloser, uint64, error) {
	if off > m.Size {
		f.Close()
		return m, nil, 0, fmt.Errorf("store: offset %d beyond size %d", off, m.Size)
	}
	if n == 0 || off+n > m.Size {
		n = m.Size - off
	}
	return m, struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, int64(off), int64(n)), f}, n, nil
}

// Challenge proves the chunks covering [off, off+n) against the stored hash.
func (s *Store) Challenge(ctx context.Context, vol, id [32]byte, off, n uint64) (*wire.Challenge, error) {
	if n > wire.MaxChallenge {
		return nil, fmt.Errorf("store: challenge of %d bytes too large", n)
	}
	// The whole object in memory (a shard: segment size / K): it is
	// re-hashed first, so a corrupt shard is never proven, then proven.
	var data bytes.Buffer
	m, f, err := s.verify(ctx, vol, id, &memHasher{buf: &data})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	first := off / merkle.ChunkSize
	last := (off + max(n, 1) - 1) / merkle.ChunkSize
	if last >= merkle.Chunks(m.Size) {
		return nil, fmt.Errorf("store: challenge range beyond object of %d bytes", m.Size)
	}
	ch := &wire.Challenge{First: first}
	b := data.Bytes()
	for i := first; i <= last; i++ {
		p, err := merkle.ProveChunk(b, i)
		if err != nil {
			return nil, err
		}
		chunk := b[min(uint64(len(b)), i*merkle.ChunkSize):min(uint64(len(b)), (i+1)*merkle.ChunkSize)]
		ch.Chunks = append(ch.Chunks, append([]byte(nil), chunk...))
		ch.Proofs = append(ch.Proofs, p)
	}
	return ch, nil
}

// memHasher keeps what it hashes.
type memHasher struct {
	merkle.Builder
	buf *bytes.Buffer
}

func (h *memHasher) Write(p []byte) (int, error) {
	h.buf.Write(p)
	return h.Builder.Write(p)
}

// Delete removes an object; deleting a missing object is not an error.
func (s *Store) Delete(vol, id [32]byte) error {
	k := key(vol, id)
	var m Meta
	found := false
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketObjects)
		v := b.Get(k)
		if v == nil {
			return nil
		}
		found = true
		if err := wire.Unmarshal(v, &m); err != nil {
			return err
		}
		return b.Delete(k)
	})
	if err != nil {
		return fmt.Errorf("store: delete: %w", err)
	}
	if !found {
		return nil
	}
	if err := os.Remove(s.path(k)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("store: remove file: %w", err)
	}
	s.mu.Lock()
	s.used -= m.Size
	s.objects--
	s.mu.Unlock()
	return nil
}

// List returns the objects of a volume of the given kind.
func (s *Store) List(vol [32]byte, kind wire.Kind, limit int) ([]wire.ObjectInfo, error) {
	var out []wire.ObjectInfo
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketObjects).Cursor()
		for k, v := c.Seek(vol[:]); k != nil && bytes.HasPrefix(k, vol[:]); k, v = c.Next() {
			var m Meta
			if err := wire.Unmarshal(v, &m); err != nil {
				return err
			}
			if m.Kind != kind {
				continue
			}
			out = append(out, wire.ObjectInfo{ID: [32]byte(k[32:]), Kind: m.Kind, Version: m.Version, Size: m.Size, Hash: m.Hash})
			if limit > 0 && len(out) >= limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	return out, nil
}

// Volumes lists the volumes the store holds objects of, in id order.
func (s *Store) Volumes() ([][32]byte, error) {
	var out [][32]byte
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketObjects).Cursor()
		for k, _ := c.First(); k != nil; {
			if len(k) < 32 {
				k, _ = c.Next()
				continue
			}
			vol := [32]byte(k[:32])
			out = append(out, vol)
			next, ok := nextPrefix(vol)
			if !ok {
				break
			}
			k, _ = c.Seek(next[:])
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: volumes: %w", err)
	}
	return out, nil
}

// nextPrefix is the smallest 32-byte key above every key starting with v.
func nextPrefix(v [32]byte) ([32]byte, bool) {
	for i := 31; i >= 0; i-- {
		if v[i] != 0xff {
			v[i]++
			for j := i + 1; j < 32; j++ {
				v[j] = 0
			}
			return v, true
		}
	}
	return v, false
}
