package rent

import (
	"bytes"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// ChunkBytes bounds a restore chunk: entries are grouped, in key order,
// into chunks of at most ChunkBytes of key+value (an entry larger than
// that is a chunk of its own). The chunking is part of the archive format.
const ChunkBytes = 48 << 10

// ChunkEntries splits key-sorted storage entries into restore chunks.
func ChunkEntries(entries []types.StorageEntry) [][]types.StorageEntry {
	var out [][]types.StorageEntry
	var cur []types.StorageEntry
	n := 0
	for _, e := range entries {
		sz := len(e.Key) + len(e.Value)
		if len(cur) > 0 && n+sz > ChunkBytes {
			out = append(out, cur)
			cur, n = nil, 0
		}
		cur = append(cur, e)
		n += sz
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// ChunkHash is the content address of one chunk: Keccak-256 of its
// canonical CBOR.
func ChunkHash(chunk []types.StorageEntry) types.Hash {
	if chunk == nil {
		chunk = []types.StorageEntry{}
	}
	return types.Keccak256(codec.MustMarshal(chunk))
}

// ArchiveRoot is the storage root kept at eviction: Keccak-256 over a
// domain tag and the chunk hashes in order.
func ArchiveRoot(chunks []types.Hash) types.Hash {
	parts := [][]byte{[]byte("cowboy/rent/archive/v1")}
	for _, h := range chunks {
		parts = append(parts, h[:])
	}
	return types.Keccak256(parts...)
}

// BuildArchive chunks key-sorted entries and returns the chunks and the
// archive record they make (Height and Next unset). The CLI uses it to
// check a fetched archive against the chain's record.
func BuildArchive(entries []types.StorageEntry) ([][]types.StorageEntry, *Archive) {
	chunks := ChunkEntries(entries)
	a := &Archive{Chunks: make([]types.Hash, len(chunks)), Entries: uint64(len(entries))}
	for i, c := range chunks {
		a.Chunks[i] = ChunkHash(c)
	}
	for _, e := range entries {
		a.Bytes += uint64(len(e.Key) + len(e.Value))
	}
	a.Root = ArchiveRoot(a.Chunks)
	return chunks, a
}

// sorted reports whether entries are in strictly increasing key order.
func sorted(entries []types.StorageEntry) bool {
	for i := 1; i < len(entries); i++ {
		if bytes.Compare(entries[i-1].Key, entries[i].Key) >= 0 {
			return false
		}
	}
	return true
}
