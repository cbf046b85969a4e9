package cbfs

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
)

// This file holds the entry points a POSIX front end (the FUSE mount) needs
// beyond Put/Get: uploading file contents without committing them, applying
// a batch of path changes as one manifest version, reading one segment of a
// known entry, and inspecting the capability the volume was opened with.

// Stage uploads the last segment, waits for every shard and returns the
// file entry without committing it: the caller commits it (possibly with
// other changes) through Volume.Update. Until then the file is invisible
// and, if never committed, its shards are garbage on the relays (Discard
// removes them). Stage and Commit/Abort are mutually exclusive.
func (u *Upload) Stage() (FileEntry, error) {
	u.mu.Lock()
	if u.done {
		u.mu.Unlock()
		return FileEntry{}, ErrUploadDone
	}
	u.mu.Unlock()
	inline := u.inline()
	u.wg.Wait()
	u.mu.Lock()
	u.done = true
	err := u.err
	segs := append([]Segment(nil), u.segments...)
	u.mu.Unlock()
	if err == nil {
		err = u.ctx.Err()
	}
	if err != nil {
		u.cleanup()
		return FileEntry{}, fmt.Errorf("cbfs: upload %s: %w", u.path, err)
	}
	u.cancel()
	return FileEntry{Path: u.path, Size: u.size, ModTime: u.v.c.cfg.Now().UnixNano(), FileID: u.fileID, Segments: segs, Inline: inline}, nil
}

// Update commits mutate applied to a copy of the latest manifest as the
// next version, retrying (with a fresh copy) on version conflicts, so
// mutate must be a pure function of its input. mutate may reorder
// m.Files; they are sorted by path afterwards. It may add, remove and
// replace entries but must not modify an entry's segments in place (the
// copy shares them). Shards of replaced or removed entries that the new
// version does not reference are then deleted (best effort). The returned
// manifest is shared: do not modify it.
func (v *Volume) Update(ctx context.Context, mutate func(m *Manifest) error) (*Manifest, error) {
	if err := v.need(captoken.PermWrite, ""); err != nil {
		return nil, err
	}
	if v.caveats.Prefix != "" {
		return nil, fmt.Errorf("%w: manifest updates need an unrestricted token", ErrPermission)
	}
	var prev *Manifest
	var cs changeSet
	next, err := v.commit(ctx, func(cur *Manifest) (*Manifest, error) {
		prev = cur
		// Entries are copied by value; their segment slices are shared,
		// which is why mutate must replace entries, never edit segments.
		next := *cur
		next.Files = append([]FileEntry(nil), cur.Files...)
		if err := mutate(&next); err != nil {
			return nil, err
		}
		if !slices.IsSortedFunc(next.Files, func(a, b FileEntry) int { return strings.Compare(a.Path, b.Path) }) {
			sort.SliceStable(next.Files, func(i, j int) bool { return next.Files[i].Path < next.Files[j].Path })
		}
		cs = diff(cur, &next)
		for i := range cs.Set {
			p, err := CleanPath(cs.Set[i].Path)
			if err != nil || p != cs.Set[i].Path {
				return nil, fmt.Errorf("cbfs: update: bad path %q", cs.Set[i].Path)
			}
		}
		return &next, nil
	}, false)
	if err != nil {
		// Never delete the copies of a version that failed here: an
		// earlier attempt may have sent its anchor transaction, which can
		// still land (its receipt wait was only cancelled). Sealing is
		// deterministic, so an identical retry is accepted by relays that
		// hold the first copy.
		return nil, fmt.Errorf("cbfs: update manifest: %w", err)
	}
	// Shards of replaced or removed entries that no new entry references
	// (a rename keeps its segments) are deleted: work proportional to the
	// change, not to the volume.
	live := map[[32]byte]bool{}
	for _, f := range cs.Set {
		for _, s := range f.Segments {
			for _, sh := range s.Shards {
				live[sh.ID] = true
			}
		}
	}
	var dead []Segment
	gone := func(p string) {
		i := prev.Lookup(p)
		if i < 0 {
			return
		}
		for _, s := range prev.Files[i].Segments {
			var g []ShardRef
			for _, sh := range s.Shards {
				if !live[sh.ID] {
					g = append(g, sh)
				}
			}
			if len(g) > 0 {
				dead = append(dead, Segment{Shards: g})
			}
		}
	}
	for _, p := range cs.Del {
		gone(p)
	}
	for _, f := range cs.Set {
		gone(f.Path)
	}
	if len(dead) > 0 {
		v.deleteShards(ctx, FileEntry{Segments: dead})
	}
	return next, nil
}

// Discard deletes the shards of a staged entry that will not be committed
// (best effort). It must not be called for an entry of the manifest.
func (v *Volume) Discard(ctx context.Context, e FileEntry) {
	v.deleteShards(ctx, e)
}

// ReadInline returns the content of an entry whose content is inline
// (len(e.Inline) > 0).
func (v *Volume) ReadInline(e *FileEntry) ([]byte, error) {
	if err := v.need(captoken.PermRead, ""); err != nil {
		return nil, err
	}
	return v.openInline(e)
}

// ReadSegment returns the plaintext of segment idx of entry e, fetching and
// verifying only that segment's shards. Unlike GetRange it does not look the
// path up again, so it reads exactly the content e describes even if the
// path was replaced or renamed since.
func (v *Volume) ReadSegment(ctx context.Context, e *FileEntry, idx int) ([]byte, error) {
	if err := v.need(captoken.PermRead, ""); err != nil {
		return nil, err
	}
	if idx < 0 || idx >= len(e.Segments) {
		return nil, fmt.Errorf("cbfs: read %s: segment %d of %d", e.Path, idx, len(e.Segments))
	}
	cd, err := v.codec(ctx)
	if err != nil {
		return nil, err
	}
	_, byID, err := v.c.relays(ctx)
	if err != nil {
		return nil, err
	}
	seg := &e.Segments[idx]
	pt, err := v.openSegment(ctx, cd, byID, subKey(v.key, "file", e.FileID[:]), segmentAAD(v.id, e.FileID, idx), seg)
	if err != nil {
		return nil, fmt.Errorf("cbfs: read %s segment %d: %w", e.Path, idx, err)
	}
	return pt, nil
}

// Caveats returns what the token the volume was opened with allows (all
// permissions and no prefix for the owner).
func (v *Volume) Caveats() captoken.Caveats { return v.caveats }
