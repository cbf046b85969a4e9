// Package challenge owns the rules of CBFS availability challenges that the
// Storage Manager (0x…0A) and the relays must agree on byte for byte: the
// placement tree a volume owner commits per relay (its shards_root), how a
// challenge's shard leaf and chunk are derived from block randomness, how a
// relay builds its answer, and how the chain verifies it.
//
// A relay's placement tree has one leaf per shard it holds for the volume,
// (shard_id, shard_hash, size), sorted by shard id; shard_hash is the shard's
// chunk-tree root (package merkle), so one Merkle path takes the chain from
// the commitment to a leaf and a second one from the leaf's shard hash to a
// 1 KiB chunk of shard bytes.
package challenge

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
)

// ErrBadAnswer reports an answer that does not prove the challenged data.
var ErrBadAnswer = errors.New("challenge: answer does not verify")

// MaxProofDepth bounds the sibling lists of an answer: 2^40 leaves.
const MaxProofDepth = 40

// Leaf is one shard in a relay's placement tree.
type Leaf struct {
	_    struct{} `cbor:",toarray"`
	ID   [32]byte // shard id (the relay's object id)
	Hash [32]byte // chunk-tree root of the shard bytes
	Size uint64   // shard bytes
}

// LeafHash is the placement-tree leaf of l, domain separated from every
// other CBFS tree.
func (l Leaf) LeafHash() merkle.Hash {
	var b [16 + 32 + 32 + 8]byte
	copy(b[:], "cbfs-placement/1")
	copy(b[16:], l.ID[:])
	copy(b[48:], l.Hash[:])
	binary.BigEndian.PutUint64(b[80:], l.Size)
	return merkle.LeafHash(b[:])
}

// SortLeaves sorts leaves by shard id and drops exact duplicates; two
// different leaves with the same id are an error.
func SortLeaves(leaves []Leaf) ([]Leaf, error) {
	out := append([]Leaf(nil), leaves...)
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].ID[:], out[j].ID[:]) < 0 })
	w := 0
	for i := range out {
		if w > 0 && out[w-1].ID == out[i].ID {
			if out[w-1] != out[i] {
				return nil, fmt.Errorf("challenge: shard %x listed twice with different hash or size", out[i].ID[:8])
			}
			continue
		}
		out[w] = out[i]
		w++
	}
	return out[:w], nil
}

// Summary is what a commitment records per relay.
type Summary struct {
	Bytes      uint64
	Count      uint64
	ShardsRoot [32]byte
}

// Summarize computes the summary of sorted, unique leaves (see SortLeaves).
func Summarize(leaves []Leaf) (Summary, error) {
	hs := make([]merkle.Hash, len(leaves))
	var s Summary
	for i, l := range leaves {
		if i > 0 && bytes.Compare(leaves[i-1].ID[:], l.ID[:]) >= 0 {
			return Summary{}, errors.New("challenge: leaves not sorted by unique shard id")
		}
		hs[i] = l.LeafHash()
		s.Bytes += l.Size
	}
	s.Count = uint64(len(leaves))
	s.ShardsRoot = merkle.Root(hs)
	return s, nil
}

// Chunks is the number of chunk-tree leaves of a shard of size bytes (an
// empty shard has one empty leaf).
func Chunks(size uint64) uint64 {
	if size == 0 {
		return 1
	}
	return (size + merkle.ChunkSize - 1) / merkle.ChunkSize
}

// Seed binds a challenge to its block randomness, volume, relay and epoch.
func Seed(random [32]byte, volume [32]byte, relay [20]byte, epoch uint64) [32]byte {
	h := sha256.New()
	h.Write([]byte("cbfs-challenge/1"))
	h.Write(random[:])
	h.Write(volume[:])
	h.Write(relay[:])
	h.Write(binary.BigEndian.AppendUint64(nil, epoch))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func pick(seed [32]byte, label string, n uint64) uint64 {
	if n <= 1 {
		return 0
	}
	h := sha256.Sum256(append([]byte(label), seed[:]...))
	// n is at most 2^40, so the modulo bias is below 2^-24.
	return binary.BigEndian.Uint64(h[:8]) % n
}

// LeafIndex is the challenged placement leaf among count.
func LeafIndex(seed [32]byte, count uint64) uint64 { return pick(seed, "leaf", count) }

// ChunkIndex is the challenged chunk of a shard of size bytes.
func ChunkIndex(seed [32]byte, size uint64) uint64 { return pick(seed, "chunk", Chunks(size)) }

// Answer is a relay's answer to one challenge.
type Answer struct {
	Leaf      Leaf
	LeafPath  []merkle.Hash // siblings from the leaf to shards_root
	Chunk     []byte        // the challenged chunk of the shard
	ChunkPath []merkle.Hash // siblings from the chunk to the shard hash
}

// LeafProof builds the path of leaf i in sorted leaves.
func LeafProof(leaves []Leaf, i uint64) ([]merkle.Hash, error) {
	hs := make([]merkle.Hash, len(leaves))
	for j, l := range leaves {
		hs[j] = l.LeafHash()
	}
	p, err := merkle.Prove(hs, int(i))
	if err != nil {
		return nil, err
	}
	return p.Siblings, nil
}

// Verify checks an answer to the challenge with seed against a relay's
// summary. It costs two Merkle paths and the hash of one chunk.
func Verify(sum Summary, seed [32]byte, a *Answer) error {
	if sum.Count == 0 {
		return fmt.Errorf("%w: the relay holds no shards of this volume", ErrBadAnswer)
	}
	if len(a.LeafPath) > MaxProofDepth || len(a.ChunkPath) > MaxProofDepth {
		return fmt.Errorf("%w: proof deeper than %d", ErrBadAnswer, MaxProofDepth)
	}
	li := LeafIndex(seed, sum.Count)
	if err := merkle.Verify(sum.ShardsRoot, a.Leaf.LeafHash(), merkle.Proof{Index: li, Leaves: sum.Count, Siblings: a.LeafPath}); err != nil {
		return fmt.Errorf("%w: leaf %d is not in shards_root", ErrBadAnswer, li)
	}
	chunks := Chunks(a.Leaf.Size)
	ci := ChunkIndex(seed, a.Leaf.Size)
	want := uint64(merkle.ChunkSize)
	if ci == chunks-1 {
		want = a.Leaf.Size - ci*merkle.ChunkSize
	}
	if uint64(len(a.Chunk)) != want {
		return fmt.Errorf("%w: chunk %d of shard %x has %d bytes, want %d", ErrBadAnswer, ci, a.Leaf.ID[:8], len(a.Chunk), want)
	}
	if err := merkle.VerifyChunk(a.Leaf.Hash, a.Chunk, merkle.Proof{Index: ci, Leaves: chunks, Siblings: a.ChunkPath}); err != nil {
		return fmt.Errorf("%w: chunk %d is not in shard %x", ErrBadAnswer, ci, a.Leaf.ID[:8])
	}
	return nil
}
