package cbfs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/wire"
)

// A writer whose token is restricted to a path prefix cannot replace the
// volume manifest (relays refuse it: they cannot see paths). Its Commit
// instead stores the sealed file entry as a pending object whose id is
// wire.PendingID(prefix, suffix): relays check that derivation against the
// token's prefix, so the object is bound to the prefix without revealing
// the path. A whole-volume writer later merges pending entries into the
// manifest with MergePending, accepting only entries whose path lies under
// the prefix their id was derived from.

type pendingEntry struct {
	Prefix string    `cbor:"1,keyasint"`
	Suffix [32]byte  `cbor:"2,keyasint"`
	Entry  FileEntry `cbor:"3,keyasint"`
}

// pendingAAD binds a sealed pending entry to its volume and object id
// (which commits to the prefix and suffix).
func pendingAAD(vol VolumeID, id [32]byte) []byte {
	return append(append([]byte("cbfs-pending"), vol[:]...), id[:]...)
}

func (v *Volume) storePending(ctx context.Context, e FileEntry) error {
	m, err := v.latest(ctx)
	if err != nil {
		return err
	}
	pe := pendingEntry{Prefix: v.caveats.Prefix, Entry: e}
	if _, err := rand.Read(pe.Suffix[:]); err != nil {
		return fmt.Errorf("cbfs: pending suffix: %w", err)
	}
	plain, err := wire.Marshal(&pe)
	if err != nil {
		return fmt.Errorf("cbfs: encode pending entry: %w", err)
	}
	id := wire.PendingID(pe.Prefix, pe.Suffix[:])
	g := subKey(v.key, "pending", nil)
	nonce := make([]byte, g.NonceSize())
	rand.Read(nonce)
	sealed := g.Seal(nonce, nonce, plain, pendingAAD(v.id, id))
	relays, err := v.liveRelays(ctx)
	if err != nil {
		return err
	}
	req := wire.Request{Op: wire.OpPut, Kind: wire.KindPending, ID: id, Suffix: pe.Suffix[:]}
	if err := v.replicate(ctx, relays, req, sealed, int(m.M)+1); err != nil {
		return fmt.Errorf("cbfs: store pending entry: %w", err)
	}
	return nil
}

// MergePending merges the entries committed by path-prefix-restricted
// writers into the manifest and removes them from the relays. It returns
// how many files became visible. It needs an unrestricted token with read,
// write and list permission (e.g. the owner).
func (v *Volume) MergePending(ctx context.Context) (int, error) {
	need := captoken.PermRead | captoken.PermWrite | captoken.PermList
	if !v.hasKey || v.caveats.Prefix != "" || v.caveats.Perms&need != need {
		return 0, fmt.Errorf("%w: merging needs an unrestricted read+write+list token", ErrPermission)
	}
	m, err := v.latest(ctx)
	if err != nil {
		return 0, err
	}
	relays, err := v.liveRelays(ctx)
	if err != nil {
		return 0, err
	}
	holders := map[[32]byte][]RelayInfo{}
	var errs []error
	for _, r := range relays {
		resp, err := v.c.call(ctx, v.sess, r, &wire.Request{Op: wire.OpList, Kind: wire.KindPending}, nil)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, o := range resp.Objects {
			holders[o.ID] = append(holders[o.ID], r)
		}
	}
	if len(holders) == 0 {
		if len(errs) == len(relays) && len(errs) > 0 {
			return 0, fmt.Errorf("cbfs: list pending entries: %w", errors.Join(errs...))
		}
		return 0, nil
	}
	g := subKey(v.key, "pending", nil)
	var entries []pendingEntry
	var ids [][32]byte
	for id, rs := range holders {
		var pe *pendingEntry
		for _, r := range rs {
			sealed, _, err := v.c.fetch(ctx, v.sess, r, wire.KindPending, id, 16<<20)
			if err != nil || len(sealed) < g.NonceSize() {
				continue
			}
			plain, err := g.Open(nil, sealed[:g.NonceSize()], sealed[g.NonceSize():], pendingAAD(v.id, id))
			if err != nil {
				v.c.log.Warn("pending entry does not decrypt", "id", fmt.Sprintf("%x", id[:6]))
				continue
			}
			var e pendingEntry
			if err := wire.Unmarshal(plain, &e); err != nil {
				continue
			}
			pe = &e
			break
		}
		if pe == nil {
			continue
		}
		if wire.PendingID(pe.Prefix, pe.Suffix[:]) != id {
			v.c.log.Warn("pending entry not bound to its prefix, ignored", "id", fmt.Sprintf("%x", id[:6]))
			continue
		}
		if p, err := CleanPath(pe.Entry.Path); err != nil || p != pe.Entry.Path ||
			(captoken.Caveats{Prefix: pe.Prefix}).AllowsPath(p) != nil {
			v.c.log.Warn("pending entry outside its prefix, ignored", "path", pe.Entry.Path, "prefix", pe.Prefix)
			continue
		}
		if err := validEntry(m, &pe.Entry); err != nil {
			v.c.log.Warn("pending entry invalid, ignored", "path", pe.Entry.Path, "err", err)
			continue
		}
		entries = append(entries, *pe)
		ids = append(ids, id)
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Entry.ModTime < entries[j].Entry.ModTime })
	if len(entries) > 0 {
		// The newest entry of a path wins.
		changes := map[string]*FileEntry{}
		for i := range entries {
			changes[entries[i].Entry.Path] = &entries[i].Entry
		}
		if _, err := v.Apply(ctx, changes); err != nil {
			return 0, fmt.Errorf("cbfs: merge pending entries: %w", err)
		}
	}
	// Remove merged (and ignored) pending objects.
	var wg sync.WaitGroup
	for id, rs := range holders {
		for _, r := range rs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v.c.call(ctx, v.sess, r, &wire.Request{Op: wire.OpDelete, Kind: wire.KindPending, ID: id}, nil)
			}()
		}
	}
	wg.Wait()
	return len(entries), nil
}

// validEntry checks a file entry against the volume's coding parameters.
func validEntry(m *Manifest, f *FileEntry) error {
	if len(f.Inline) > 0 {
		if len(f.Segments) > 0 || int64(len(f.Inline)) != f.Size+inlineOverhead {
			return fmt.Errorf("%w: inline content of %d bytes for size %d", ErrIntegrity, len(f.Inline), f.Size)
		}
		return nil
	}
	var total int64
	for _, s := range f.Segments {
		if len(s.Shards) != int(m.K)+int(m.M) {
			return fmt.Errorf("%w: segment with %d shards", ErrIntegrity, len(s.Shards))
		}
		total += int64(s.Size)
	}
	if total != f.Size {
		return fmt.Errorf("%w: segments sum to %d, size %d", ErrIntegrity, total, f.Size)
	}
	return nil
}
