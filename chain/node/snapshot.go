package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// State snapshots (docs/CONSENSUS.md §8.10). Every SnapshotInterval
// heights a validator or full node writes the state of the height it just
// committed, from one bbolt read view (a consistent state that later
// commits do not disturb), off the execution path, to
// home/data/snapshots/<height>/: chunk files of at most snapshotChunkBytes
// of entries each and a manifest listing their hashes. A directory
// appears under its final name only once complete.

const (
	defaultSnapshotInterval = 1000
	defaultSnapshotKeep     = 2
	// snapshotChunkBytes bounds a chunk's entries (a single larger entry
	// is a chunk of its own; state values are far below the p2p limit).
	snapshotChunkBytes = 1 << 20
	// maxSnapshotChunks bounds the chunks a manifest may list.
	maxSnapshotChunks = 1 << 16
)

// snapshotManifest names a snapshot: its height, the header of that height
// (whose state root the rebuilt state must have) and each chunk's hash.
type snapshotManifest struct {
	_      struct{} `cbor:",toarray"`
	Height uint64
	Header types.Header
	Chunks []types.Hash
}

// SnapshotDir is where a home keeps its state snapshots.
func SnapshotDir(home string) string { return filepath.Join(home, "data", "snapshots") }

func (n *Node) snapshotInterval() uint64 {
	nc := n.cfg.Network
	switch {
	case nc == nil || nc.SnapshotInterval < 0:
		return 0
	case nc.SnapshotInterval == 0:
		return defaultSnapshotInterval
	}
	return uint64(nc.SnapshotInterval)
}

// maybeSnapshot starts writing a snapshot of height if it is due and no
// other is being written.
func (n *Node) maybeSnapshot(height uint64) {
	iv := n.snapshotInterval()
	if iv == 0 || height == 0 || height%iv != 0 || !n.snapBusy.CompareAndSwap(false, true) {
		return
	}
	opened := make(chan struct{})
	n.bg.Add(1)
	go func() {
		defer n.bg.Done()
		defer n.snapBusy.Store(false)
		if err := n.writeSnapshot(height, opened); err != nil {
			n.log.Warn("state snapshot failed", "height", height, "err", err)
		}
	}()
	// The read view is opened before the next block commits, so it sees
	// this height's state; writing it out does not hold execution up.
	<-opened
}

// writeSnapshot writes the snapshot of height, closing opened once its read
// view is open. A view of a later head is refused (that height's flat state
// is gone).
func (n *Node) writeSnapshot(height uint64, opened chan struct{}) error {
	once := sync.OnceFunc(func() { close(opened) })
	defer once()
	dir := SnapshotDir(n.cfg.Home)
	tmp := filepath.Join(dir, fmt.Sprintf("%d.tmp", height))
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var m snapshotManifest
	err := n.store.View(func(v *store.View) error {
		once()
		if v.Height() != height {
			return fmt.Errorf("head moved to %d before the snapshot view opened", v.Height())
		}
		m = snapshotManifest{Height: height, Header: *v.Head()}
		return v.ExportState(snapshotChunkBytes, func(c []store.KV) error {
			b := codec.MustMarshal(c)
			if err := os.WriteFile(filepath.Join(tmp, chunkName(len(m.Chunks))), b, 0o600); err != nil {
				return err
			}
			m.Chunks = append(m.Chunks, types.Keccak256(b))
			return nil
		})
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "manifest"), codec.MustMarshal(&m), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, strconv.FormatUint(height, 10))); err != nil {
		return err
	}
	n.log.Info("state snapshot written", "height", height, "chunks", len(m.Chunks))
	keep := defaultSnapshotKeep
	if k := n.cfg.Network.SnapshotKeep; k > 0 {
		keep = k
	}
	hs, err := snapshotHeights(dir)
	if err != nil {
		return err
	}
	for _, h := range hs[min(keep, len(hs)):] {
		if err := os.RemoveAll(filepath.Join(dir, strconv.FormatUint(h, 10))); err != nil {
			return err
		}
	}
	return nil
}

func chunkName(i int) string { return fmt.Sprintf("chunk-%06d", i) }

// snapshotHeights lists the complete snapshots in dir, newest first.
func snapshotHeights(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var hs []uint64
	for _, e := range ents {
		if h, err := strconv.ParseUint(e.Name(), 10, 64); err == nil && e.IsDir() {
			hs = append(hs, h)
		}
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i] > hs[j] })
	return hs, nil
}

func readManifest(dir string, height uint64) (*snapshotManifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, strconv.FormatUint(height, 10), "manifest"))
	if err != nil {
		return nil, err
	}
	var m snapshotManifest
	if err := codec.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("node: snapshot manifest %d: %w", height, err)
	}
	return &m, nil
}

func readChunk(dir string, height uint64, i uint32) ([]byte, error) {
	return os.ReadFile(filepath.Join(dir, strconv.FormatUint(height, 10), chunkName(int(i))))
}
