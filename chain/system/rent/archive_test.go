package rent

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

func entries(sizes ...int) []types.StorageEntry {
	out := make([]types.StorageEntry, len(sizes))
	for i, n := range sizes {
		out[i] = types.StorageEntry{Key: types.Bytes(fmt.Sprintf("k%04d", i)), Value: bytes.Repeat([]byte{'v'}, n)}
	}
	return out
}

func TestChunkEntries(t *testing.T) {
	for _, c := range []struct {
		name  string
		sizes []int
		want  []int // entries per chunk
	}{
		{"empty", nil, nil},
		{"one small", []int{10}, []int{1}},
		{"fills a chunk exactly", []int{ChunkBytes/2 - 5, ChunkBytes/2 - 5}, []int{2}},
		{"spills into a second", []int{ChunkBytes/2 - 5, ChunkBytes/2 - 5, 1}, []int{2, 1}},
		{"an oversized entry is a chunk of its own", []int{10, 2 * ChunkBytes, 10}, []int{1, 1, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			chunks := ChunkEntries(entries(c.sizes...))
			if len(chunks) != len(c.want) {
				t.Fatalf("%d chunks, want %d", len(chunks), len(c.want))
			}
			for i, ch := range chunks {
				if len(ch) != c.want[i] {
					t.Fatalf("chunk %d holds %d entries, want %d", i, len(ch), c.want[i])
				}
			}
		})
	}
}

func TestArchiveRootCommitsToContentAndOrder(t *testing.T) {
	es := entries(100, ChunkBytes-200, 300)
	_, a := BuildArchive(es)
	if a.Entries != 3 || a.Bytes != uint64(3*5+100+ChunkBytes-200+300) || len(a.Chunks) != 2 {
		t.Fatalf("archive %+v", a)
	}
	changed := entries(100, ChunkBytes-200, 300)
	changed[2].Value[0] = 'w'
	if _, b := BuildArchive(changed); b.Root == a.Root || b.Chunks[0] != a.Chunks[0] || b.Chunks[1] == a.Chunks[1] {
		t.Fatal("a changed value must change its chunk's hash and the root, and only those")
	}
	if !sorted(es) || sorted([]types.StorageEntry{es[1], es[0]}) {
		t.Fatal("sorted")
	}
	if ChunkHash(nil) != ChunkHash([]types.StorageEntry{}) {
		t.Fatal("an empty chunk has one hash")
	}
}
