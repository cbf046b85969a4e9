package cbfs

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/fxamacker/cbor/v2"
)

// VolumeID identifies a volume (owner address || 12-byte salt).
type VolumeID = captoken.VolumeID

// ShardRef locates one shard of a segment. Index in Segment.Shards is the
// Reed-Solomon shard index (0..K-1 data, K..K+M-1 parity).
type ShardRef struct {
	ID    [32]byte `cbor:"1,keyasint"`
	Hash  [32]byte `cbor:"2,keyasint"` // chunk-tree root of the shard bytes
	Relay RelayID  `cbor:"3,keyasint"`
}

// Segment is one encrypted, erasure-coded piece of a file.
type Segment struct {
	Size       uint32     `cbor:"1,keyasint"` // plaintext bytes
	CipherSize uint32     `cbor:"2,keyasint"` // sealed bytes (Size+16)
	Nonce      [12]byte   `cbor:"3,keyasint"`
	ShardSize  uint32     `cbor:"4,keyasint"`
	Shards     []ShardRef `cbor:"5,keyasint"`
}

// FileEntry is one file of a volume.
type FileEntry struct {
	Path     string    `cbor:"1,keyasint"`
	Size     int64     `cbor:"2,keyasint"`
	ModTime  int64     `cbor:"3,keyasint"` // unix nanoseconds
	FileID   [16]byte  `cbor:"4,keyasint"`
	Segments []Segment `cbor:"5,keyasint"`
	// POSIX metadata, set by the FUSE mount (all optional: zero values are
	// not encoded, so entries written without them keep their encoding and
	// hash). Mode is a full st_mode with file-type bits; 0 means a regular
	// file with mode 0644. Directories are entries with S_IFDIR and no
	// segments; symlinks carry their target in Target.
	Mode   uint32 `cbor:"6,keyasint,omitempty"`
	UID    uint32 `cbor:"7,keyasint,omitempty"`
	GID    uint32 `cbor:"8,keyasint,omitempty"`
	Target string `cbor:"9,keyasint,omitempty"`
	// Inline holds the content of a small file, sealed (nonce || AES-GCM
	// ciphertext under the file key) inside the metadata instead of
	// erasure-coded shards; such an entry has no segments.
	Inline []byte `cbor:"10,keyasint,omitempty"`
	// Ino, when not 0, is the inode the entry is a name of: entries with
	// the same Ino are hard links of one file and carry the same content
	// and metadata (the FUSE mount keeps them in step). 0, the value of
	// every entry written before hard links existed, is an inode of its
	// own. Not encoded when 0, so older entries keep their encoding and
	// hash; a client without this field refuses manifests that have it
	// (their encoding is not canonical to it) rather than treating two
	// names of one file as independent files.
	Ino uint64 `cbor:"11,keyasint,omitempty"`
}

// Manifest is the full state of a volume at one version.
type Manifest struct {
	Volume      VolumeID    `cbor:"1,keyasint"`
	Version     uint64      `cbor:"2,keyasint"`
	K           uint8       `cbor:"3,keyasint"`
	M           uint8       `cbor:"4,keyasint"`
	SegmentSize uint32      `cbor:"5,keyasint"`
	Prev        [32]byte    `cbor:"6,keyasint"` // root of the previous version
	Files       []FileEntry `cbor:"7,keyasint"` // sorted by Path, unique
}

func leaf(parts ...[]byte) [32]byte {
	h := sha256.New()
	h.Write([]byte{0})
	for _, p := range parts {
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(p)))
		h.Write(l[:])
		h.Write(p)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// Hash commits to a segment: its header and every shard (hash, id, relay).
func (s *Segment) Hash() [32]byte {
	leaves := []merkle.Hash{leaf([]byte("seg"), u64(uint64(s.Size)), u64(uint64(s.CipherSize)), s.Nonce[:], u64(uint64(s.ShardSize)))}
	for _, sh := range s.Shards {
		leaves = append(leaves, leaf([]byte("shard"), sh.Hash[:], sh.ID[:], sh.Relay[:]))
	}
	return merkle.Root(leaves)
}

// Hash commits to a file entry and its segments.
func (f *FileEntry) Hash() [32]byte {
	segs := make([]merkle.Hash, len(f.Segments))
	for i := range f.Segments {
		segs[i] = f.Segments[i].Hash()
	}
	sr := merkle.Root(segs)
	if f.Ino != 0 {
		ih := sha256.Sum256(f.Inline)
		return leaf([]byte("file"), []byte(f.Path), u64(uint64(f.Size)), u64(uint64(f.ModTime)), f.FileID[:], sr[:],
			[]byte("posix"), u64(uint64(f.Mode)), u64(uint64(f.UID)), u64(uint64(f.GID)), []byte(f.Target), []byte("inline"), ih[:],
			[]byte("ino"), u64(f.Ino))
	}
	if len(f.Inline) > 0 {
		ih := sha256.Sum256(f.Inline)
		return leaf([]byte("file"), []byte(f.Path), u64(uint64(f.Size)), u64(uint64(f.ModTime)), f.FileID[:], sr[:],
			[]byte("posix"), u64(uint64(f.Mode)), u64(uint64(f.UID)), u64(uint64(f.GID)), []byte(f.Target), []byte("inline"), ih[:])
	}
	if f.Mode != 0 || f.UID != 0 || f.GID != 0 || f.Target != "" {
		return leaf([]byte("file"), []byte(f.Path), u64(uint64(f.Size)), u64(uint64(f.ModTime)), f.FileID[:], sr[:],
			[]byte("posix"), u64(uint64(f.Mode)), u64(uint64(f.UID)), u64(uint64(f.GID)), []byte(f.Target))
	}
	return leaf([]byte("file"), []byte(f.Path), u64(uint64(f.Size)), u64(uint64(f.ModTime)), f.FileID[:], sr[:])
}

// Root is the Merkle root that is anchored: a tree whose first leaf is the
// manifest header and whose other leaves are the files in path order, each
// the root of its segments, each the root of its shard hashes.
func (m *Manifest) Root() [32]byte {
	leaves := []merkle.Hash{leaf([]byte("manifest"), m.Volume[:], u64(m.Version), []byte{m.K, m.M}, u64(uint64(m.SegmentSize)), m.Prev[:])}
	for i := range m.Files {
		leaves = append(leaves, m.Files[i].Hash())
	}
	return merkle.Root(leaves)
}

// Lookup returns the index of path in m.Files, or -1.
func (m *Manifest) Lookup(path string) int {
	i := sort.Search(len(m.Files), func(i int) bool { return m.Files[i].Path >= path })
	if i < len(m.Files) && m.Files[i].Path == path {
		return i
	}
	return -1
}

// set inserts or replaces f, returning the replaced entry if any.
func (m *Manifest) set(f FileEntry) (FileEntry, bool) {
	i := sort.Search(len(m.Files), func(i int) bool { return m.Files[i].Path >= f.Path })
	if i < len(m.Files) && m.Files[i].Path == f.Path {
		old := m.Files[i]
		m.Files[i] = f
		return old, true
	}
	m.Files = append(m.Files, FileEntry{})
	copy(m.Files[i+1:], m.Files[i:])
	m.Files[i] = f
	return FileEntry{}, false
}

func (m *Manifest) remove(path string) (FileEntry, bool) {
	i := m.Lookup(path)
	if i < 0 {
		return FileEntry{}, false
	}
	old := m.Files[i]
	m.Files = append(m.Files[:i], m.Files[i+1:]...)
	return old, true
}

// withChanges returns m with the entries of set put and the paths of del
// removed (m is not modified). set and del may come in any order; a path in
// both is set. The runs of unchanged entries between changed paths are
// copied in bulk (a memmove), so the cost is a binary search per change
// plus one copy of the entry list, with no per-entry comparison, hashing
// or validation: the caller validates the changed entries only.
func (m *Manifest) withChanges(set []FileEntry, del []string) *Manifest {
	type op struct {
		path string
		e    *FileEntry
	}
	ops := make([]op, 0, len(set)+len(del))
	for _, p := range del {
		ops = append(ops, op{path: p})
	}
	for i := range set {
		ops = append(ops, op{set[i].Path, &set[i]})
	}
	// Stable: for a path both removed and set, the set (later) wins.
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].path < ops[j].path })
	next := *m
	next.Files = make([]FileEntry, 0, len(m.Files)+len(set))
	i := 0
	for k, o := range ops {
		if k+1 < len(ops) && ops[k+1].path == o.path {
			continue // superseded by the next op on the same path
		}
		j := i + sort.Search(len(m.Files)-i, func(x int) bool { return m.Files[i+x].Path >= o.path })
		next.Files = append(next.Files, m.Files[i:j]...)
		if j < len(m.Files) && m.Files[j].Path == o.path {
			j++
		}
		if o.e != nil {
			next.Files = append(next.Files, *o.e)
		}
		i = j
	}
	next.Files = append(next.Files, m.Files[i:]...)
	return &next
}

// linked reports whether another entry of m is a name of f's inode with
// f's content. It scans the manifest: only removals of hard-linked files
// (Ino != 0) need it.
func (m *Manifest) linked(f *FileEntry) bool {
	for i := range m.Files {
		g := &m.Files[i]
		if g.Ino == f.Ino && g.FileID == f.FileID && g.Path != f.Path {
			return true
		}
	}
	return false
}

// validHeader checks the manifest's coding parameters.
func (m *Manifest) validHeader() error {
	if m.K == 0 || int(m.K)+int(m.M) > 255 || m.SegmentSize == 0 {
		return fmt.Errorf("%w: manifest parameters K=%d M=%d segment=%d", ErrIntegrity, m.K, m.M, m.SegmentSize)
	}
	return nil
}

func (m *Manifest) clone() *Manifest {
	c := *m
	c.Files = make([]FileEntry, len(m.Files))
	for i, f := range m.Files {
		f.Segments = append([]Segment(nil), f.Segments...)
		for j := range f.Segments {
			f.Segments[j].Shards = append([]ShardRef(nil), f.Segments[j].Shards...)
		}
		c.Files[i] = f
	}
	return &c
}

func (m *Manifest) validate() error {
	if err := m.validHeader(); err != nil {
		return err
	}
	for i := range m.Files {
		f := &m.Files[i]
		if i > 0 && m.Files[i-1].Path >= f.Path {
			return fmt.Errorf("%w: manifest paths not sorted (%q, %q)", ErrIntegrity, m.Files[i-1].Path, f.Path)
		}
		if err := validEntry(m, f); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	return nil
}

func (m *Manifest) encode() []byte {
	b, err := wire.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("cbfs: encode manifest: %v", err))
	}
	return b
}

// metaDec decodes manifests and change sets: the relay wire format's
// limits, except for arrays, which hold one element per file (the wire
// format's 65,536 would make a larger volume unreadable).
var metaDec = func() cbor.DecMode {
	d, err := cbor.DecOptions{
		DupMapKey:         cbor.DupMapKeyEnforcedAPF,
		MaxArrayElements:  1 << 27,
		MaxMapPairs:       64,
		MaxNestedLevels:   8,
		IndefLength:       cbor.IndefLengthForbidden,
		ExtraReturnErrors: cbor.ExtraDecErrorUnknownField,
	}.DecMode()
	if err != nil {
		panic(fmt.Sprintf("cbfs: metadata decoder: %v", err))
	}
	return d
}()

// unmarshalMeta decodes a manifest or change set.
func unmarshalMeta(b []byte, v any) error { return metaDec.Unmarshal(b, v) }

func decodeManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := unmarshalMeta(b, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrIntegrity, err)
	}
	if !bytes.Equal(m.encode(), b) {
		return nil, fmt.Errorf("%w: manifest not canonical", ErrIntegrity)
	}
	return &m, m.validate()
}

// manifestObjectID is the relay object id of manifest version v with the
// given root. Including the root means two writers racing for the same
// version never overwrite each other's object; the anchor picks the winner.
func manifestObjectID(vol VolumeID, v uint64, root [32]byte) [32]byte {
	return crypto.Keccak256Hash([]byte("cbfs-manifest-v1"), vol[:], u64(v), root[:])
}

// CleanPath normalises a file path: absolute, no trailing slash, no "..".
func CleanPath(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	c, err := captoken.CleanPrefix(p)
	if err != nil {
		return "", err
	}
	if c == "" {
		return "", fmt.Errorf("cbfs: %q is not a file path", p)
	}
	return c, nil
}
