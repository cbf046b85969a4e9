package fuse

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cowboy-foundation/cowboy/relay/cbfs"
)

// The journal keeps the changes of a mount that could not be committed
// (an unmount whose final flush failed, or one that was refused), so that
// nothing written through the mount is lost: the next mount of the volume
// with the same cache directory and cache key re-applies and commits it.
//
// Layout: Options.JournalDir holds journal.json (written atomically, last)
// and one file per dirty regular file: a copy of its encrypted block store.

// Format 2: block slots carry their sealed length (store.go).
const journalFormat = 2

type journalFile struct {
	Format  int             `json:"format"`
	Volume  string          `json:"volume"`
	Base    uint64          `json:"base_version"` // manifest the changes were made against
	Changes []journalChange `json:"changes"`
}

type journalChange struct {
	Path  string          `json:"path"`
	Entry *cbfs.FileEntry `json:"entry,omitempty"` // nil: the path was removed
	// A regular file with content not uploaded yet: its size, the
	// uploaded content it started from, and its encrypted blocks.
	Dirty   bool            `json:"dirty,omitempty"`
	Size    int64           `json:"size,omitempty"`
	Base    *cbfs.FileEntry `json:"base,omitempty"`
	BaseLim int64           `json:"base_lim,omitempty"`
	Ino     uint64          `json:"ino,omitempty"` // block AAD of the store
	Seq     uint64          `json:"seq,omitempty"`
	Blocks  []int64         `json:"blocks,omitempty"`
	Store   string          `json:"store,omitempty"`
}

// pendingChanges lists the namespace's differences from the base manifest
// and the files with unuploaded content. The caller holds m.mu.
func (m *mfs) pendingChanges() []journalChange {
	d := m.desired()
	var out []journalChange
	for p, e := range d {
		n := m.lookupPath(p)
		dirty := n != nil && n.dirty
		if !dirty && sameEntry(m.baseEntry(p), &e) {
			continue
		}
		e := e
		out = append(out, journalChange{Path: p, Entry: &e, Dirty: dirty})
	}
	for i := range m.base.Files {
		if p := m.base.Files[i].Path; !hasKey(d, p) {
			out = append(out, journalChange{Path: p})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func hasKey[V any](d map[string]V, k string) bool {
	_, ok := d[k]
	return ok
}

// persistJournal writes every pending change to the journal directory. It
// returns how many changes were kept.
func (m *mfs) persistJournal() (int, error) {
	if err := os.MkdirAll(m.opts.JournalDir, 0o700); err != nil {
		return 0, fmt.Errorf("fuse: journal dir: %w", err)
	}
	m.mu.Lock()
	changes := m.pendingChanges()
	var dirty []*inode
	for i := range changes {
		if changes[i].Dirty {
			dirty = append(dirty, m.lookupPath(changes[i].Path))
		}
	}
	baseVer := m.base.Version
	m.mu.Unlock()
	k := 0
	for i := range changes {
		if !changes[i].Dirty {
			continue
		}
		n := dirty[k]
		k++
		if err := m.journalContent(n, &changes[i], i); err != nil {
			return 0, err
		}
	}
	b, err := json.MarshalIndent(journalFile{Format: journalFormat, Volume: m.vol.ID().String(), Base: baseVer, Changes: changes}, "", " ")
	if err != nil {
		return 0, fmt.Errorf("fuse: encode journal: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(m.opts.JournalDir, "journal.json"), b); err != nil {
		return 0, err
	}
	m.journaled.Store(true)
	return len(changes), nil
}

// journalContent copies n's encrypted block store into the journal.
func (m *mfs) journalContent(n *inode, c *journalChange, i int) error {
	n.fmu.RLock()
	defer n.fmu.RUnlock()
	m.mu.Lock()
	c.Size, c.BaseLim = n.size, n.baseLim
	if n.base != nil {
		b := *n.base
		c.Base = &b
	}
	st := n.store
	m.mu.Unlock()
	if st == nil {
		return nil // only truncated or extended: no blocks of its own
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	c.Ino, c.Seq = st.ino, st.seq
	for blk := range st.present {
		c.Blocks = append(c.Blocks, blk)
	}
	sort.Slice(c.Blocks, func(a, b int) bool { return c.Blocks[a] < c.Blocks[b] })
	if st.f == nil {
		return nil
	}
	// Written beside and renamed over: the store being copied may itself
	// be a journal file restored by this mount.
	c.Store = fmt.Sprintf("%d.blk", i)
	tmp := filepath.Join(m.opts.JournalDir, c.Store+".tmp")
	dst, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("fuse: journal %s: %w", c.Path, err)
	}
	if _, err := io.Copy(dst, io.NewSectionReader(st.f, 0, 1<<62)); err != nil {
		dst.Close()
		return fmt.Errorf("fuse: journal %s: %w", c.Path, err)
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return fmt.Errorf("fuse: journal %s: %w", c.Path, err)
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("fuse: journal %s: %w", c.Path, err)
	}
	if err := os.Rename(tmp, filepath.Join(m.opts.JournalDir, c.Store)); err != nil {
		return fmt.Errorf("fuse: journal %s: %w", c.Path, err)
	}
	return nil
}

// restoreJournal re-applies a journal left by an earlier mount to the
// namespace (which must have just been loaded). It reports whether there
// was one.
func (m *mfs) restoreJournal() (bool, error) {
	b, err := os.ReadFile(filepath.Join(m.opts.JournalDir, "journal.json"))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("fuse: read journal: %w", err)
	}
	var j journalFile
	if err := json.Unmarshal(b, &j); err != nil {
		return false, fmt.Errorf("fuse: journal %s is corrupt: %w", m.opts.JournalDir, err)
	}
	if (j.Format != journalFormat && j.Format != 1) || j.Volume != m.vol.ID().String() {
		return false, fmt.Errorf("fuse: journal %s is for volume %s (format %d), not %s", m.opts.JournalDir, j.Volume, j.Format, m.vol.ID())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// Removals children first, then creations parents first.
	for i := len(j.Changes) - 1; i >= 0; i-- {
		if c := j.Changes[i]; c.Entry == nil {
			m.markPath(c.Path)
			if n := m.detachPath(c.Path); n != nil && n.parent == nil {
				m.dropStore(n)
			}
		}
	}
	for _, c := range j.Changes {
		if c.Entry == nil {
			continue
		}
		m.markPath(c.Path)
		if n := m.lookupPath(c.Path); n != nil && n.dirty {
			continue
		}
		m.applyRemote(c.Path, c.Entry)
		n := m.lookupPath(c.Path)
		if n == nil || !c.Dirty || n.typ != sIFREG {
			continue
		}
		m.dropStore(n)
		st := &blockStore{s: m.seal, ino: c.Ino, seq: c.Seq, path: filepath.Join(m.opts.JournalDir, c.Store), present: map[int64]bool{}}
		if c.Store != "" && j.Format == 1 {
			if err := upgradeStoreV1(st, c.Blocks); err != nil {
				return true, fmt.Errorf("fuse: journal content of %s: %w", c.Path, err)
			}
		}
		if c.Store != "" {
			f, err := os.OpenFile(st.path, os.O_RDWR, 0)
			if err != nil {
				return true, fmt.Errorf("fuse: journal content of %s: %w", c.Path, err)
			}
			st.f = f
			for _, blk := range c.Blocks {
				st.present[blk] = true
			}
		}
		n.store, n.base, n.baseLim, n.size, n.dirty = st, c.Base, c.BaseLim, c.Size, true
		n.mtime = c.Entry.ModTime
	}
	m.changed()
	return true, nil
}

// dropJournal removes the journal once everything in it is committed.
func (m *mfs) dropJournal() error {
	if err := os.Remove(filepath.Join(m.opts.JournalDir, "journal.json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("fuse: remove journal: %w", err)
	}
	ents, _ := os.ReadDir(m.opts.JournalDir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".blk") {
			os.Remove(filepath.Join(m.opts.JournalDir, e.Name()))
		}
	}
	os.Remove(m.opts.JournalDir)
	m.journaled.Store(false)
	return nil
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("fuse: write %s: %w", path, err)
	}
	if _, err := f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("fuse: write %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// upgradeStoreV1 rewrites a block store file of journal format 1 (every
// slot a whole sealed block: nonce || ciphertext+tag of blockSize bytes)
// in the current slot layout, in place (written beside, then renamed).
func upgradeStoreV1(st *blockStore, blocks []int64) error {
	const oldSlot = 12 + blockSize + 16
	f, err := os.Open(st.path)
	if err != nil {
		return err
	}
	defer f.Close()
	next := &blockStore{s: st.s, ino: st.ino, seq: st.seq, path: st.path + ".v2", present: map[int64]bool{}}
	slot := make([]byte, oldSlot)
	buf := make([]byte, blockSize)
	for _, blk := range blocks {
		if _, err := f.ReadAt(slot, blk*oldSlot); err != nil {
			return fmt.Errorf("read format-1 block %d: %w", blk, err)
		}
		if _, err := st.s.aead.Open(buf[:0], slot[:12], slot[12:], st.aad(blk)); err != nil {
			return fmt.Errorf("format-1 block %d does not decrypt: %w", blk, err)
		}
		if err := next.put(blk, buf); err != nil {
			return err
		}
	}
	if next.f == nil {
		if _, err := next.file(); err != nil {
			return err
		}
	}
	if err := next.f.Sync(); err != nil {
		return fmt.Errorf("sync upgraded store: %w", err)
	}
	next.f.Close()
	return os.Rename(next.path, st.path)
}
