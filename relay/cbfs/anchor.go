package cbfs

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Anchor commits manifest roots. The Storage Manager system actor (0x0A)
// will implement it on chain; FileAnchor keeps them in a local JSON file.
//
// CommitManifest must accept only version == latest+1 (or 1 for a new
// volume) and return an error wrapping ErrConflict otherwise.
// LatestManifest returns an error wrapping ErrNotFound for an unknown volume.
type Anchor interface {
	CommitManifest(ctx context.Context, vol VolumeID, root [32]byte, version uint64) error
	LatestManifest(ctx context.Context, vol VolumeID) (root [32]byte, version uint64, err error)
}

// FileAnchor stores anchors in a JSON file, guarded by an flock so several
// processes can share it.
type FileAnchor struct {
	Path string
	mu   sync.Mutex
}

type anchorRecord struct {
	Root    string `json:"root"`
	Version uint64 `json:"version"`
}

func (a *FileAnchor) locked(f func(map[string]anchorRecord) (bool, error)) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(a.Path), 0o700); err != nil {
		return fmt.Errorf("cbfs: anchor dir: %w", err)
	}
	lf, err := os.OpenFile(a.Path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("cbfs: anchor lock: %w", err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("cbfs: anchor flock: %w", err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	recs := map[string]anchorRecord{}
	b, err := os.ReadFile(a.Path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cbfs: read anchor: %w", err)
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &recs); err != nil {
			return fmt.Errorf("cbfs: parse anchor: %w", err)
		}
	}
	dirty, err := f(recs)
	if err != nil || !dirty {
		return err
	}
	nb, _ := json.MarshalIndent(recs, "", "  ")
	return writeAtomic(a.Path, nb)
}

// CommitManifest implements Anchor.
func (a *FileAnchor) CommitManifest(ctx context.Context, vol VolumeID, root [32]byte, version uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return a.locked(func(m map[string]anchorRecord) (bool, error) {
		cur := m[vol.String()]
		if version != cur.Version+1 {
			return false, fmt.Errorf("%w: anchor at version %d, commit of %d", ErrConflict, cur.Version, version)
		}
		m[vol.String()] = anchorRecord{Root: hex.EncodeToString(root[:]), Version: version}
		return true, nil
	})
}

// LatestManifest implements Anchor.
func (a *FileAnchor) LatestManifest(ctx context.Context, vol VolumeID) ([32]byte, uint64, error) {
	var root [32]byte
	var ver uint64
	if err := ctx.Err(); err != nil {
		return root, 0, err
	}
	err := a.locked(func(m map[string]anchorRecord) (bool, error) {
		rec, ok := m[vol.String()]
		if !ok {
			return false, fmt.Errorf("%w: volume %s has no anchored manifest", ErrNotFound, vol)
		}
		b, err := hex.DecodeString(rec.Root)
		if err != nil || len(b) != 32 {
			return false, fmt.Errorf("cbfs: anchor for %s corrupt", vol)
		}
		copy(root[:], b)
		ver = rec.Version
		return false, nil
	})
	return root, ver, err
}

// MemAnchor is an in-memory Anchor for tests and single-process use.
type MemAnchor struct {
	mu   sync.Mutex
	recs map[VolumeID]anchorMem
}

type anchorMem struct {
	root    [32]byte
	version uint64
}

// CommitManifest implements Anchor.
func (a *MemAnchor) CommitManifest(_ context.Context, vol VolumeID, root [32]byte, version uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.recs == nil {
		a.recs = map[VolumeID]anchorMem{}
	}
	cur := a.recs[vol]
	if version != cur.version+1 {
		return fmt.Errorf("%w: anchor at version %d, commit of %d", ErrConflict, cur.version, version)
	}
	a.recs[vol] = anchorMem{root, version}
	return nil
}

// LatestManifest implements Anchor.
func (a *MemAnchor) LatestManifest(_ context.Context, vol VolumeID) ([32]byte, uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.recs[vol]
	if !ok {
		return [32]byte{}, 0, fmt.Errorf("%w: volume %s has no anchored manifest", ErrNotFound, vol)
	}
	return r.root, r.version, nil
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("cbfs: write %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("cbfs: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("cbfs: fsync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cbfs: close %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cbfs: rename %s: %w", path, err)
	}
	return nil
}
