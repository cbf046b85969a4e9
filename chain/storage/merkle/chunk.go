package merkle

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"lukechampine.com/blake3/guts"
)

// ChunkSize is the leaf size of the shard tree: one BLAKE3 chunk.
const ChunkSize = guts.ChunkSize

// Sum computes the shard hash of data: its unkeyed 32-byte BLAKE3 hash, the
// root of BLAKE3's tree over 1 KiB chunks.
func Sum(data []byte) Hash {
	var b Builder
	b.Write(data)
	return b.Sum()
}

// group is the number of bytes compressed by one SIMD call: 16 chunks, a
// complete subtree of height 4.
const group = guts.MaxSIMD * ChunkSize

// Builder hashes a byte stream into the shard hash (BLAKE3). It implements
// io.Writer; the zero value is ready to use. Unlike blake3.Hasher it hashes
// on the calling goroutine only: callers already hash many shards in
// parallel, and goroutines per write cost more than they save there.
type Builder struct {
	stack   [64][8]uint32 // subtree roots, at most one per height
	counter uint64        // chunks hashed into the stack; bit i = stack[i] used
	buf     [group]byte
	fill    int
	n       int64
}

// Write implements io.Writer; it never fails.
func (b *Builder) Write(p []byte) (int, error) {
	k := len(p)
	b.n += int64(k)
	for len(p) > 0 {
		if b.fill == group {
			b.push(guts.ChainingValue(guts.CompressBuffer(&b.buf, group, &guts.IV, b.counter, 0)))
			b.fill = 0
		}
		// Whole groups straight from p, keeping at least one byte back: the
		// last group is compressed by Sum, with the root flag.
		for b.fill == 0 && len(p) > group {
			b.push(guts.ChainingValue(guts.CompressBuffer((*[group]byte)(p[:group]), group, &guts.IV, b.counter, 0)))
			p = p[group:]
		}
		c := copy(b.buf[b.fill:], p)
		b.fill += c
		p = p[c:]
	}
	return k, nil
}

// push adds the root of the next complete group to the stack, merging equal
// subtrees as BLAKE3's left-balanced tree requires.
func (b *Builder) push(cv [8]uint32) {
	const height = 4 // log2(MaxSIMD)
	i := height
	for b.counter&(1<<i) != 0 {
		cv = guts.ChainingValue(guts.ParentNode(b.stack[i], cv, &guts.IV, 0))
		i++
	}
	b.stack[i] = cv
	b.counter += 1 << height
}

// Size reports the number of bytes written so far.
func (b *Builder) Size() int64 { return b.n }

// Sum returns the shard hash of everything written; the Builder can still
// be written to afterwards.
func (b *Builder) Sum() Hash {
	var n guts.Node
	if b.fill <= ChunkSize {
		n = guts.CompressChunk(b.buf[:b.fill], &guts.IV, b.counter, 0)
	} else {
		// CompressBuffer hashes whole chunks of the array in SIMD and uses
		// only the first fill bytes of the result.
		n = guts.CompressBuffer(&b.buf, b.fill, &guts.IV, b.counter, 0)
	}
	for i := 4; i < 64; i++ {
		if b.counter&(1<<i) != 0 {
			n = guts.ParentNode(b.stack[i], guts.ChainingValue(n), &guts.IV, 0)
		}
	}
	n.Flags |= guts.FlagRoot
	return cvBytes(guts.ChainingValue(n))
}

// SumReader computes the shard hash of everything read from r.
func SumReader(r io.Reader) (Hash, int64, error) {
	var b Builder
	n, err := io.Copy(&b, r)
	if err != nil {
		return Hash{}, n, err
	}
	return b.Sum(), n, nil
}

// Chunks is the number of chunks (tree leaves) of a shard of size bytes; an
// empty shard has one empty chunk.
func Chunks(size uint64) uint64 { return max(1, (size+ChunkSize-1)/ChunkSize) }

// ProveChunk returns the proof that chunk i is part of data (a whole shard):
// the chaining values of its siblings, from the chunk up to the root. Whole
// 16-chunk groups away from the chunk are hashed with SIMD; only the
// chunks of the challenged chunk's group are compressed one by one.
func ProveChunk(data []byte, i uint64) (Proof, error) {
	n := Chunks(uint64(len(data)))
	if i >= n {
		return Proof{}, fmt.Errorf("merkle: chunk %d out of range %d", i, n)
	}
	p := Proof{Index: i, Leaves: n}
	lo := uint64(0)
	var top []Hash // siblings from the root down
	for n > 1 {
		l := leftSize(n)
		if i-lo < l {
			top = append(top, cvBytes(subtreeCV(data, lo+l, n-l)))
			n = l
		} else {
			top = append(top, cvBytes(subtreeCV(data, lo, l)))
			lo += l
			n -= l
		}
	}
	for j := len(top) - 1; j >= 0; j-- {
		p.Siblings = append(p.Siblings, top[j])
	}
	return p, nil
}

// subtreeCV is the chaining value of the BLAKE3 subtree over chunks
// [lo, lo+n) of data (never the root). A subtree of up to 16 chunks that
// starts on a group boundary is one SIMD call: BLAKE3 subtrees start at a
// multiple of their left half, so larger ones split into such groups.
func subtreeCV(data []byte, lo, n uint64) [8]uint32 {
	if n == 1 {
		return guts.ChainingValue(guts.CompressChunk(chunkAt(data, lo), &guts.IV, lo, 0))
	}
	if n <= guts.MaxSIMD && lo%guts.MaxSIMD == 0 {
		var buf [group]byte
		k := copy(buf[:], data[lo*ChunkSize:min(uint64(len(data)), (lo+n)*ChunkSize)])
		return guts.ChainingValue(guts.CompressBuffer(&buf, k, &guts.IV, lo, 0))
	}
	l := leftSize(n)
	return guts.ChainingValue(guts.ParentNode(subtreeCV(data, lo, l), subtreeCV(data, lo+l, n-l), &guts.IV, 0))
}

func chunkAt(data []byte, i uint64) []byte {
	return data[min(uint64(len(data)), i*ChunkSize):min(uint64(len(data)), (i+1)*ChunkSize)]
}

// leftSize is the number of chunks in the left subtree of a BLAKE3 node over
// n > 1 chunks: the largest power of two below n.
func leftSize(n uint64) uint64 { return 1 << (bits.Len64(n-1) - 1) }

// VerifyChunk checks that chunk is chunk p.Index of a shard of p.Leaves
// chunks whose shard hash is root. Every chunk but the last must be full;
// the last must be non-empty unless it is the only one.
func VerifyChunk(root Hash, chunk []byte, p Proof) error {
	if p.Leaves == 0 || p.Index >= p.Leaves || p.Leaves > 1<<40 || len(chunk) > ChunkSize {
		return ErrBadProof
	}
	if last := p.Index == p.Leaves-1; (!last && len(chunk) != ChunkSize) || (last && len(chunk) == 0 && p.Leaves > 1) {
		return ErrBadProof
	}
	// The path from the root down: true where the chunk is in the left subtree.
	var left []bool
	idx, n := p.Index, p.Leaves
	for n > 1 {
		l := leftSize(n)
		if idx < l {
			left = append(left, true)
			n = l
		} else {
			left = append(left, false)
			idx -= l
			n -= l
		}
	}
	if len(p.Siblings) != len(left) {
		return ErrBadProof
	}
	node := guts.CompressChunk(chunk, &guts.IV, p.Index, 0)
	for j := len(left) - 1; j >= 0; j-- {
		var flags uint32
		if j == 0 {
			flags = guts.FlagRoot
		}
		sib := cvWords(p.Siblings[len(left)-1-j])
		if left[j] {
			node = guts.ParentNode(guts.ChainingValue(node), sib, &guts.IV, flags)
		} else {
			node = guts.ParentNode(sib, guts.ChainingValue(node), &guts.IV, flags)
		}
	}
	if len(left) == 0 {
		node.Flags |= guts.FlagRoot
	}
	if cvBytes(guts.ChainingValue(node)) != root {
		return ErrBadProof
	}
	return nil
}

func cvBytes(cv [8]uint32) (h Hash) {
	for i, w := range cv {
		binary.LittleEndian.PutUint32(h[4*i:], w)
	}
	return h
}

func cvWords(h Hash) (cv [8]uint32) {
	for i := range cv {
		cv[i] = binary.LittleEndian.Uint32(h[4*i:])
	}
	return cv
}
