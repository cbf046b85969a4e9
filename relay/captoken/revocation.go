package captoken

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// MemoryRevocations is an in-memory RevocationList.
type MemoryRevocations struct {
	mu  sync.RWMutex
	ids map[[32]byte]struct{}
}

// NewMemoryRevocations returns an empty list.
func NewMemoryRevocations() *MemoryRevocations {
	return &MemoryRevocations{ids: map[[32]byte]struct{}{}}
}

// Revoke adds id.
func (m *MemoryRevocations) Revoke(id [32]byte) {
	m.mu.Lock()
	m.ids[id] = struct{}{}
	m.mu.Unlock()
}

// Revoked implements RevocationList.
func (m *MemoryRevocations) Revoked(_ context.Context, id [32]byte) (bool, error) {
	m.mu.RLock()
	_, ok := m.ids[id]
	m.mu.RUnlock()
	return ok, nil
}

// FileRevocations reads revoked link ids (hex, one per line, '#' comments)
// from a file, re-reading it when its modification time changes. A missing
// file means nothing is revoked.
type FileRevocations struct {
	path string
	mu   sync.Mutex
	mod  time.Time
	size int64
	ids  map[[32]byte]struct{}
}

// NewFileRevocations returns a list backed by path.
func NewFileRevocations(path string) *FileRevocations {
	return &FileRevocations{path: path}
}

// Revoked implements RevocationList.
func (f *FileRevocations) Revoked(_ context.Context, id [32]byte) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reload(); err != nil {
		return false, err
	}
	_, ok := f.ids[id]
	return ok, nil
}

func (f *FileRevocations) reload() error {
	st, err := os.Stat(f.path)
	if os.IsNotExist(err) {
		f.ids = nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("captoken: stat revocations: %w", err)
	}
	if f.ids != nil && st.ModTime().Equal(f.mod) && st.Size() == f.size {
		return nil
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return fmt.Errorf("captoken: open revocations: %w", err)
	}
	defer fh.Close()
	ids := map[[32]byte]struct{}{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b, err := hex.DecodeString(strings.TrimPrefix(line, "0x"))
		if err != nil || len(b) != 32 {
			return fmt.Errorf("captoken: bad revocation line %q", line)
		}
		ids[[32]byte(b)] = struct{}{}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("captoken: read revocations: %w", err)
	}
	f.ids, f.mod, f.size = ids, st.ModTime(), st.Size()
	return nil
}

// AppendRevocation appends id to a revocation file (creating it), fsynced.
func AppendRevocation(path string, id [32]byte) error {
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("captoken: open revocations: %w", err)
	}
	if _, err := fmt.Fprintf(fh, "%x\n", id); err != nil {
		fh.Close()
		return fmt.Errorf("captoken: append revocation: %w", err)
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return fmt.Errorf("captoken: sync revocations: %w", err)
	}
	return fh.Close()
}

// Revocations combines lists: an id is revoked if any list revokes it. Nil
// entries are skipped.
type Revocations []RevocationList

// Revoked implements RevocationList.
func (rs Revocations) Revoked(ctx context.Context, id [32]byte) (bool, error) {
	for _, r := range rs {
		if r == nil {
			continue
		}
		ok, err := r.Revoked(ctx, id)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}
