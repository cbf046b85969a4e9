// Package merkle implements the Merkle trees used by CBFS and by the Storage
// Manager's availability challenges:
//
//   - the per-shard chunk tree (chunk.go): the shard hash is the BLAKE3 hash
//     of the shard, which is itself a binary tree over 1 KiB chunks, so a
//     relay proves one chunk with the chaining values of its siblings
//     (ProveChunk, VerifyChunk). Hashing a shard runs at SIMD BLAKE3 speed;
//     only proofs use the portable compression function.
//   - the generic SHA-256 tree over a list of 32-byte hashes (this file),
//     used by the volume manifest and the challenge's shards_root.
//
// In the generic tree, leaves and interior nodes are domain separated
// (0x00 / 0x01 prefix) so a leaf can never be confused with an interior node.
// An odd node at the end of a level is promoted unchanged to the next level.
// The tree of zero leaves has the root sha256(0x00).
package merkle

import (
	"crypto/sha256"
	"errors"
	"fmt"
)

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
