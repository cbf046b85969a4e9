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
// manifest is shared: do not modify it. Update costs O(files) of client
// CPU (copy, sort check, diff); Apply costs what the change costs.
func (v *Volume) Update(ctx context.Context, mutate func(m *Manifest) error) (*Manifest, error) {
	if err := v.needManifestWrite(); err != nil {
		return nil, err
	}
	var prev *Manifest
	var cs changeSet
	next, err := v.commitChanges(ctx, func(cur *Manifest) (*Manifest, *changeSet, error) {
		prev = cur
		// Entries are copied by value; their segment slices are shared,
		// which is why mutate must replace entries, never edit segments.
		next := *cur
		next.Files = append([]FileEntry(nil), cur.Files...)
		if err := mutate(&next); err != nil {
			return nil, nil, err
		}
		less := func(a, b FileEntry) int { return strings.Compare(a.Path, b.Path) }
		if !slices.IsSortedFunc(next.Files, less) {
			sort.SliceStable(next.Files, func(i, j int) bool { return next.Files[i].Path < next.Files[j].Path })
		}
		for i := 1; i < len(next.Files); i++ {
			if next.Files[i-1].Path == next.Files[i].Path {
				return nil, nil, fmt.Errorf("cbfs: update: path %q twice", next.Files[i].Path)
			}
		}
		cs = diff(cur, &next)
		// Unchanged entries were valid in cur: check what changed only.
		if err := cs.check(&next); err != nil {
			return nil, nil, fmt.Errorf("cbfs: update: %w", err)
		}
		return &next, &cs, nil
	}, false)
	if err != nil {
		// Never delete the copies of a version that failed here: an
		// earlier attempt may have sent its anchor transaction, which can
		// still land (its receipt wait was only cancelled). Sealing is
		// deterministic, so an identical retry is accepted by relays that
		// hold the first copy.
		return nil, fmt.Errorf("cbfs: update manifest: %w", err)
	}
	v.dropReplaced(ctx, prev, next, &cs)
	return next, nil
}

// Apply commits path operations on the latest manifest as the next
// version: changes maps a path to its new entry (nil: remove the path).
// Like Update it retries on version conflicts and deletes the shards that
// replaced or removed entries no longer reference, but its work is
// proportional to the change: only the changed entries are validated and
// compared, and the change set written to the relays is exactly them.
// Removing a path that does not exist, or setting an entry identical to
// the current one, is no change. The returned manifest is shared: do not
// modify it.
func (v *Volume) Apply(ctx context.Context, changes map[string]*FileEntry) (*Manifest, error) {
	if err := v.needManifestWrite(); err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(changes))
	for p, e := range changes {
		if c, err := CleanPath(p); err != nil || c != p {
			return nil, fmt.Errorf("cbfs: apply: bad path %q", p)
		}
		if e != nil && e.Path != p {
			return nil, fmt.Errorf("cbfs: apply: entry for %q names %q", p, e.Path)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var prev *Manifest
	var cs changeSet
	next, err := v.commitChanges(ctx, func(cur *Manifest) (*Manifest, *changeSet, error) {
		prev = cur
		cs = changeSet{}
		for _, p := range paths {
			e := changes[p]
			i := cur.Lookup(p)
			switch {
			case e == nil && i >= 0:
				cs.Del = append(cs.Del, p)
			case e != nil && (i < 0 || !sameFile(&cur.Files[i], e)):
				cs.Set = append(cs.Set, *e)
			}
		}
		if err := cs.check(cur); err != nil {
			return nil, nil, fmt.Errorf("cbfs: apply: %w", err)
		}
		return cs.apply(cur), &cs, nil
	}, false)
	if err != nil {
		return nil, fmt.Errorf("cbfs: update manifest: %w", err)
	}
	v.dropReplaced(ctx, prev, next, &cs)
	return next, nil
}

// needManifestWrite checks that this Volume may replace the manifest.
func (v *Volume) needManifestWrite() error {
	if err := v.need(captoken.PermWrite, ""); err != nil {
		return err
	}
	if v.caveats.Prefix != "" {
		return fmt.Errorf("%w: manifest updates need an unrestricted token", ErrPermission)
	}
	return nil
}

// dropReplaced deletes the shards of the entries that cs (applied to prev,
// giving next) replaced or removed and that no new entry references (a
// rename keeps its segments; a hard link's other names keep theirs): work
// proportional to the change, not to the volume (best effort).
func (v *Volume) dropReplaced(ctx context.Context, prev, next *Manifest, cs *changeSet) {
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
		old := &prev.Files[i]
		if old.Ino != 0 && len(old.Segments) > 0 && next.linked(old) {
			return // another name of the same inode still holds the content
		}
		for _, s := range old.Segments {
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
		v.doom(ctx, next.Version, dead)
	}
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
