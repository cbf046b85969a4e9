package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// followCheck accepts only version = stored version + 1 (benchHead layout).
func followCheck(v uint64) func(cur []byte) error {
	return func(cur []byte) error {
		var have uint64
		if cur != nil {
			have = uint64(cur[0])<<56 | uint64(cur[1])<<48 | uint64(cur[2])<<40 | uint64(cur[3])<<32 |
				uint64(cur[4])<<24 | uint64(cur[5])<<16 | uint64(cur[6])<<8 | uint64(cur[7])
		}
		if v != have+1 {
			return fmt.Errorf("%w: have v%d, got v%d", ErrHeadConflict, have, v)
		}
		return nil
	}
}

func commitN(t *testing.T, s *Store, vol [32]byte, from, to uint64) {
	t.Helper()
	for v := from; v <= to; v++ {
		if err := s.CommitHead(vol, v, benchHead(v), []byte(fmt.Sprint("body", v)), followCheck(v)); err != nil {
			t.Fatalf("commit v%d: %v", v, err)
		}
	}
}

func checkHeads(t *testing.T, s *Store, vol [32]byte, last uint64) {
	t.Helper()
	h, err := s.Head(vol)
	if err != nil || !bytes.Equal(h, benchHead(last)) {
		t.Fatalf("head: want v%d, got %x… (%v)", last, h[:min(8, len(h))], err)
	}
	ents, err := s.Log(vol, 1, last, int(last)+10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != int(last) {
		t.Fatalf("log: %d entries, want %d", len(ents), last)
	}
	for i, e := range ents {
		v := uint64(i + 1)
		if !bytes.Equal(e.Head, benchHead(v)) || string(e.Body) != fmt.Sprint("body", v) {
			t.Fatalf("log entry %d is not v%d", i, v)
		}
	}
}

// crash drops the store as kill -9 would: no flush, files just closed.
func crash(t *testing.T, s *Store) {
	t.Helper()
	s.heads.f.Close()
	s.heads.f = nil
	if err := s.db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestHeadLogCrashRecovery: heads acknowledged only in the head log (no
// index flush yet) survive a crash, a torn record after them is cut off,
// and commits carry on from the recovered head.
func TestHeadLogCrashRecovery(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	vol, other := [32]byte{7}, [32]byte{8}
	commitN(t, s, vol, 1, 40)
	commitN(t, s, other, 1, 3)
	if _, err := s.boltHead(vol); !errors.Is(err, ErrNotFound) {
		t.Fatalf("heads reached bbolt before a flush (%v): the test would not exercise the log", err)
	}
	crash(t, s)

	// A torn append: a record cut short, as a crash mid-write leaves it.
	logPath := filepath.Join(dir, headLogName)
	rec := headRecord{vol: vol, version: 41, head: benchHead(41), entry: []byte("body41")}.marshal()
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(rec[:len(rec)-3])
	f.Close()

	s, err = Open(dir, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	checkHeads(t, s, vol, 40)
	checkHeads(t, s, other, 3)
	if st, err := os.Stat(logPath); err != nil || st.Size() != 0 {
		t.Fatalf("head log after replay: %v %v", st.Size(), err)
	}
	commitN(t, s, vol, 41, 45)
	checkHeads(t, s, vol, 45)
	if err := s.CommitHead(vol, 45, benchHead(45), nil, followCheck(45)); !errors.Is(err, ErrHeadConflict) {
		t.Fatalf("stale commit: %v", err)
	}
}

// TestHeadLogFlush: across index flushes the log reads in order (limits and
// ranges spanning bbolt and memory), and a clean Close leaves nothing to
// replay.
func TestHeadLogFlush(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	vol := [32]byte{9}
	last := uint64(flushRecords + 50)
	commitN(t, s, vol, 1, last)
	if _, err := s.boltHead(vol); err != nil {
		t.Fatalf("no flush after %d heads: %v", last, err)
	}
	checkHeads(t, s, vol, last)
	ents, err := s.Log(vol, flushRecords-5, last, 20)
	if err != nil || len(ents) != 20 {
		t.Fatalf("log across the flush: %d entries, %v", len(ents), err)
	}
	for i, e := range ents {
		if want := benchHead(uint64(flushRecords - 5 + i)); !bytes.Equal(e.Head, want) {
			t.Fatalf("entry %d out of order", i)
		}
	}
	if ents, _ := s.Log(vol, last-2, last+5, 100); len(ents) != 3 {
		t.Fatalf("log tail: %d entries", len(ents))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, headLogName)); err != nil || st.Size() != 0 {
		t.Fatalf("head log after Close: %v", err)
	}
	s, err = Open(dir, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkHeads(t, s, vol, last)
}

// TestHeadLogRewriteVersion: committing a version again (no check) replaces
// its log entry, as a bbolt Put of its key did, whether the first copy is
// still in memory or already in bbolt; the log never lists a version twice.
func TestHeadLogRewriteVersion(t *testing.T) {
	s, err := Open(t.TempDir(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	vol := [32]byte{10}
	commitN(t, s, vol, 1, 5)
	rewrite := func(v uint64, body string) {
		t.Helper()
		if err := s.CommitHead(vol, v, benchHead(v), []byte(body), func([]byte) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want map[uint64]string) {
		t.Helper()
		ents, err := s.Log(vol, 1, 100, 100)
		if err != nil || len(ents) != 5 {
			t.Fatalf("log: %d entries, %v", len(ents), err)
		}
		for i, e := range ents {
			v := uint64(i + 1)
			body := fmt.Sprint("body", v)
			if w, ok := want[v]; ok {
				body = w
			}
			if !bytes.Equal(e.Head, benchHead(v)) || string(e.Body) != body {
				t.Fatalf("entry %d: v%x body %q, want v%d %q", i, e.Head[:8], e.Body, v, body)
			}
		}
	}
	rewrite(5, "tampered5") // first copy in memory
	check(map[uint64]string{5: "tampered5"})
	s.heads.mu.Lock()
	if err := s.flushHeads(); err != nil {
		t.Fatal(err)
	}
	s.heads.mu.Unlock()
	rewrite(3, "tampered3") // first copy in bbolt
	check(map[uint64]string{5: "tampered5", 3: "tampered3"})
	if h, _ := s.Head(vol); !bytes.Equal(h, benchHead(3)) {
		t.Fatal("head is not the last one committed")
	}
}

// TestHeadLogConcurrentReaders: readers during commits and an index flush
// always see a gap-free log (the 32 versions before the head they saw, and
// on) that reaches that head (run with -race).
func TestHeadLogConcurrentReaders(t *testing.T) {
	s, err := Open(t.TempDir(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	vol := [32]byte{11}
	commitN(t, s, vol, 1, 1)
	done := make(chan struct{})
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				h, err := s.Head(vol)
				if err != nil {
					errs <- err
					return
				}
				seen := binary.BigEndian.Uint64(h)
				from := max(seen, 33) - 32
				ents, err := s.Log(vol, from, ^uint64(0), 1<<20)
				if err != nil {
					errs <- err
					return
				}
				if uint64(len(ents)) < seen-from+1 {
					errs <- fmt.Errorf("log from v%d: %d entries after head v%d", from, len(ents), seen)
					return
				}
				for i, e := range ents {
					if !bytes.Equal(e.Head, benchHead(from+uint64(i))) {
						errs <- fmt.Errorf("log entry %d is not v%d", i, from+uint64(i))
						return
					}
				}
			}
		}()
	}
	commitN(t, s, vol, 2, flushRecords+20)
	close(done)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
