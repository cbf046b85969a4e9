// Package wal is a file-backed write-ahead log for consensus.Record: the
// votes, timeouts and proposals a validator signed. The node loop appends
// Ready.Persist with Append (which syncs) before it sends Ready.Messages,
// and passes Load's result as consensus.Config.WAL on start.
//
// Format: a sequence of frames, each a 4-byte big-endian length, a 4-byte
// CRC-32C of the payload and the payload (Record.Encode()). A torn or
// corrupt tail — a crash in the middle of an append — ends the log: Load
// returns the records before it and Open truncates the file there.
package wal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
)

const maxRecord = 64 << 20

var _ consensus.Storage = (*WAL)(nil)

// ErrClosed is returned after Close.
var ErrClosed = errors.New("wal: closed")

// WAL is an open log. Methods are safe for concurrent use.
type WAL struct {
	mu      sync.Mutex
	path    string
	f       *os.File
	records []consensus.Record
}

// Open opens (creating if needed) the log at path, reads its records and
// cuts off a torn tail.
func Open(path string) (*WAL, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("wal: open: %w", err)
	}
	recs, good, err := read(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: truncate torn tail: %w", err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: seek: %w", err)
	}
	return &WAL{path: path, f: f, records: recs}, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// read decodes frames from the start of f and returns the records and the
// offset just after the last good frame.
func read(f *os.File) ([]consensus.Record, int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("wal: seek: %w", err)
	}
	r := bufio.NewReader(f)
	var (
		recs []consensus.Record
		off  int64
		hdr  [8]byte
	)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return recs, off, nil // EOF or torn header
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		if n > maxRecord {
			return recs, off, nil
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return recs, off, nil
		}
		if crc32.Checksum(buf, castagnoli) != binary.BigEndian.Uint32(hdr[4:]) {
			return recs, off, nil
		}
		rec, err := consensus.DecodeRecord(buf)
		if err != nil {
			return recs, off, nil
		}
		recs = append(recs, *rec)
		off += int64(len(hdr)) + int64(n)
	}
}

func frame(rec *consensus.Record) []byte {
	p := rec.Encode()
	b := make([]byte, 8, 8+len(p))
	binary.BigEndian.PutUint32(b[:4], uint32(len(p)))
	binary.BigEndian.PutUint32(b[4:], crc32.Checksum(p, castagnoli))
	return append(b, p...)
}

// Records returns the records in the log, oldest first.
func (w *WAL) Records() []consensus.Record {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]consensus.Record(nil), w.records...)
}

// Append writes records and syncs the file. Only after it returns may the
// messages of the same Ready be sent.
func (w *WAL) Append(recs ...consensus.Record) error {
	if len(recs) == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return ErrClosed
	}
	var buf []byte
	for i := range recs {
		buf = append(buf, frame(&recs[i])...)
	}
	if _, err := w.f.Write(buf); err != nil {
		return fmt.Errorf("wal: append: %w", err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("wal: sync: %w", err)
	}
	w.records = append(w.records, recs...)
	return nil
}

// Compact drops records of rounds at or below finalizedRound (the round of
// the last finalized block), rewriting the log to a temporary file that
// atomically replaces it.
func (w *WAL) Compact(finalizedRound uint64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return ErrClosed
	}
	var keep []consensus.Record
	for _, r := range w.records {
		if r.Round() > finalizedRound {
			keep = append(keep, r)
		}
	}
	if len(keep) == len(w.records) {
		return nil
	}
	tmp := w.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("wal: compact: %w", err)
	}
	var buf []byte
	for i := range keep {
		buf = append(buf, frame(&keep[i])...)
	}
	if _, err := f.Write(buf); err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("wal: compact: %w", err)
	}
	if err := os.Rename(tmp, w.path); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("wal: compact: %w", err)
	}
	if d, err := os.Open(filepath.Dir(w.path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	w.f.Close()
	w.f, w.records = f, keep
	return nil
}

// Close closes the file. Safe to call twice.
func (w *WAL) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
