package cbfs

import (
	"bytes"
	"testing"
)

func sampleManifest() *Manifest {
	m := &Manifest{Volume: VolumeID{1}, Version: 3, K: 2, M: 1, SegmentSize: 1024}
	m.set(FileEntry{Path: "/b", Size: 5, FileID: [16]byte{2}, Segments: []Segment{{Size: 5, CipherSize: 21, ShardSize: 11,
		Shards: []ShardRef{{ID: [32]byte{1}}, {ID: [32]byte{2}}, {ID: [32]byte{3}}}}}})
	m.set(FileEntry{Path: "/a", FileID: [16]byte{1}})
	return m
}

func TestManifestRootCommitsToEverything(t *testing.T) {
	m := sampleManifest()
	if m.Files[0].Path != "/a" || m.Lookup("/b") != 1 || m.Lookup("/c") != -1 {
		t.Fatal("files not kept sorted")
	}
	root := m.Root()
	mutations := []func(*Manifest){
		func(m *Manifest) { m.Version++ },
		func(m *Manifest) { m.Files[0].Path = "/a2" },
		func(m *Manifest) { m.Files[1].Segments[0].Shards[2].Hash[0] = 1 },
		func(m *Manifest) { m.Files[1].Segments[0].Shards[0].Relay[0] = 1 },
		func(m *Manifest) { m.Files[1].Segments[0].Nonce[0] = 1 },
		func(m *Manifest) { m.Prev[0] = 1 },
	}
	for i, mut := range mutations {
		c := m.clone()
		mut(c)
		if c.Root() == root {
			t.Fatalf("mutation %d does not change the root", i)
		}
	}
	d, err := decodeManifest(m.encode())
	if err != nil || d.Root() != root {
		t.Fatalf("round trip: %v", err)
	}
}

func FuzzManifestDecode(f *testing.F) {
	f.Add(sampleManifest().encode())
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeManifest(b)
		if err != nil {
			return
		}
		if !bytes.Equal(m.encode(), b) {
			t.Fatal("re-encode differs")
		}
		_ = m.Root()
	})
}
