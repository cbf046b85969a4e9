package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay/wire"
)

func TestPutGetCorruptFullRecover(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, 8_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	vol, id := [32]byte{1}, [32]byte{2}
	data := bytes.Repeat([]byte("abc"), 1500)
	m := Meta{Size: uint64(len(data)), Hash: merkle.Sum(data)}
	if err := s.Put(ctx, vol, id, m, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, vol, id, m, bytes.NewReader(data)); err != nil {
		t.Fatalf("idempotent put: %v", err)
	}
	bad := m
	bad.Hash[0] ^= 1
	if err := s.Put(ctx, vol, [32]byte{3}, Meta{Size: 100, Hash: bad.Hash}, bytes.NewReader(data)); !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("bad hash: %v", err)
	}
	if err := s.Put(ctx, vol, [32]byte{4}, m, bytes.NewReader(data)); !errors.Is(err, ErrFull) {
		t.Fatalf("full: %v", err)
	}
	_, r, n, err := s.Get(ctx, vol, id, 10, 20)
	if err != nil || n != 20 {
		t.Fatal(err, n)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if !bytes.Equal(got, data[10:30]) {
		t.Fatal("range mismatch")
	}
	ch, err := s.Challenge(ctx, vol, id, 1000, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Verify(m.Hash, 1000, 100); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(vol, wire.KindShard, 0); len(list) != 1 {
		t.Fatalf("list %v", list)
	}
	// Reopen: state survives, orphan files vanish.
	s.Close()
	os.WriteFile(s.Path(vol, [32]byte{9})+"", []byte("x"), 0o600)
	s, err = Open(dir, 8_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if used, _, objs := s.Usage(); used != m.Size || objs != 1 {
		t.Fatalf("usage %d %d", used, objs)
	}
	// Tamper.
	f, _ := os.OpenFile(s.Path(vol, id), os.O_WRONLY, 0)
	f.WriteAt([]byte("X"), 5)
	f.Close()
	if _, _, _, err := s.Get(ctx, vol, id, 0, 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("tamper: %v", err)
	}
	// Read leaves content checks to the reader but refuses a file whose
	// size no longer matches the index.
	if _, r, n, err := s.Read(vol, id, 0, 0); err != nil || n != m.Size {
		t.Fatalf("read of tampered object: %v (%d bytes)", err, n)
	} else {
		r.Close()
	}
	os.Truncate(s.Path(vol, id), int64(m.Size-1))
	if _, _, _, err := s.Read(vol, id, 0, 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read of truncated object: %v", err)
	}
	if err := s.Delete(vol, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(vol, id); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}
