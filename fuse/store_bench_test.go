package fuse

import "testing"

// BenchmarkSmallFileCache is the local cache work of writing a 1 KiB file
// and reading it back for upload: a fresh store, one block put, one get,
// and its removal.
func BenchmarkSmallFileCache(b *testing.B) {
	s, err := newSealer([32]byte{3})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	blk := make([]byte, blockSize)
	for i := range 1024 {
		blk[i] = byte(i | 1)
	}
	got := make([]byte, blockSize)
	b.ReportAllocs()
	for i := range b.N {
		st := newBlockStore(dir, s, uint64(i), 1)
		if err := st.put(0, blk); err != nil {
			b.Fatal(err)
		}
		if ok, err := st.get(0, got); !ok || err != nil {
			b.Fatal(ok, err)
		}
		st.close()
	}
}
