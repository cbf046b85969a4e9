// Package merkle implements the binary SHA-256 Merkle trees used by CBFS and
// by the Storage Manager's availability challenges:
// the per-shard chunk tree (1 KiB leaves, its root is the shard hash) and the
// generic tree over a list of 32-byte hashes used by the volume manifest.
//
// Leaves and interior nodes are domain separated (0x00 / 0x01 prefix) so a
// leaf can never be confused with an interior node. An odd node at the end of
// a level is promoted unchanged to the next level. The tree of zero leaves has
// the root sha256(0x00) (the hash of one empty leaf), so an empty shard still
// has a well defined hash.
package merkle

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
)

// ChunkSize is the leaf size of the shard tree.
const ChunkSize = 1024

// Hash is a 32-byte SHA-256 digest.
type Hash = [32]byte

// ErrBadProof is returned when a proof does not verify.
var ErrBadProof = errors.New("merkle: proof does not verify")

// LeafHash hashes one leaf.
func LeafHash(data []byte) Hash {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write(data)
	var out Hash
	h.Sum(out[:0])
	return out
}

// NodeHash hashes two children.
func NodeHash(l, r Hash) Hash {
	var buf [65]byte
	buf[0] = 1
	copy(buf[1:], l[:])
	copy(buf[33:], r[:])
	return sha256.Sum256(buf[:])
}

// Root computes the root over already hashed leaves.
func Root(leaves []Hash) Hash {
	if len(leaves) == 0 {
		return LeafHash(nil)
	}
	level := append([]Hash(nil), leaves...)
	for len(level) > 1 {
		next := level[:0]
		for i := 0; i < len(level); i += 2 {
			if i+1 < len(level) {
				next = append(next, NodeHash(level[i], level[i+1]))
			} else {
				next = append(next, level[i])
			}
		}
		level = next
	}
	return level[0]
}

// Builder hashes a byte stream into chunk leaves. It implements io.Writer.
// The zero value is ready to use.
type Builder struct {
	h      hash.Hash
	fill   int
	leaves []Hash
	n      int64
}

// Write implements io.Writer; it never fails.
func (b *Builder) Write(p []byte) (int, error) {
	if b.h == nil {
		b.h = sha256.New()
		b.h.Write([]byte{0})
	}
	n := len(p)
	b.n += int64(n)
	for len(p) > 0 {
		take := ChunkSize - b.fill
		if take > len(p) {
			take = len(p)
		}
		b.h.Write(p[:take])
		b.fill += take
		p = p[take:]
		if b.fill == ChunkSize {
			b.flush()
		}
	}
	return n, nil
}

func (b *Builder) flush() {
	var out Hash
	b.h.Sum(out[:0])
	b.leaves = append(b.leaves, out)
	b.h.Reset()
	b.h.Write([]byte{0})
	b.fill = 0
}

// Size reports the number of bytes written so far.
func (b *Builder) Size() int64 { return b.n }

// Leaves finishes the last partial chunk and returns all leaf hashes.
func (b *Builder) Leaves() []Hash {
	if b.fill > 0 {
		b.flush()
	}
	return b.leaves
}

// Sum returns the root over everything written.
func (b *Builder) Sum() Hash { return Root(b.Leaves()) }

// Sum computes the chunk-tree root of data.
func Sum(data []byte) Hash {
	if len(data) == 0 {
		return LeafHash(nil)
	}
	leaves := make([]Hash, 0, (len(data)+ChunkSize-1)/ChunkSize)
	h := sha256.New()
	for off := 0; off < len(data); off += ChunkSize {
		end := min(off+ChunkSize, len(data))
		h.Reset()
		h.Write([]byte{0})
		h.Write(data[off:end])
		var out Hash
		h.Sum(out[:0])
		leaves = append(leaves, out)
	}
	return Root(leaves)
}

// SumReader computes the chunk-tree root of everything read from r.
func SumReader(r io.Reader) (Hash, int64, error) {
	var b Builder
	n, err := io.Copy(&b, r)
	if err != nil {
		return Hash{}, n, err
	}
	return b.Sum(), n, nil
}

// Proof proves one leaf against a root: the sibling hashes from the leaf up.
// A zero entry flag in Left tells whether the sibling is on the left.
type Proof struct {
	Index    uint64 `cbor:"1,keyasint"`
	Leaves   uint64 `cbor:"2,keyasint"`
	Siblings []Hash `cbor:"3,keyasint"`
}

// Prove builds the proof for leaf index i of leaves.
func Prove(leaves []Hash, i int) (Proof, error) {
	if i < 0 || i >= len(leaves) {
		return Proof{}, fmt.Errorf("merkle: leaf %d out of range %d", i, len(leaves))
	}
	p := Proof{Index: uint64(i), Leaves: uint64(len(leaves))}
	level := append([]Hash(nil), leaves...)
	idx := i
	for len(level) > 1 {
		sib := idx ^ 1
		if sib < len(level) {
			p.Siblings = append(p.Siblings, level[sib])
		}
		next := make([]Hash, 0, (len(level)+1)/2)
		for j := 0; j < len(level); j += 2 {
			if j+1 < len(level) {
				next = append(next, NodeHash(level[j], level[j+1]))
			} else {
				next = append(next, level[j])
			}
		}
		level = next
		idx /= 2
	}
	return p, nil
}

// Verify checks that leaf is at p.Index in a tree with root.
func Verify(root, leaf Hash, p Proof) error {
	if p.Leaves == 0 || p.Index >= p.Leaves || p.Leaves > 1<<40 {
		return ErrBadProof
	}
	h := leaf
	idx, width := p.Index, p.Leaves
	s := 0
	for width > 1 {
		sib := idx ^ 1
		if sib < width {
			if s >= len(p.Siblings) {
				return ErrBadProof
			}
			if idx&1 == 0 {
				h = NodeHash(h, p.Siblings[s])
			} else {
				h = NodeHash(p.Siblings[s], h)
			}
			s++
		}
		idx /= 2
		width = (width + 1) / 2
	}
	if s != len(p.Siblings) || h != root {
		return ErrBadProof
	}
	return nil
}
