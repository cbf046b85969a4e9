package cbfs

import (
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"sync"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/klauspost/reedsolomon"
)

// encodeStripe is the width, per shard, of the columns erasure-coded and
// hashed together: k+m stripes stay in a core's L2 cache. It is a multiple
// of the hash's 16 KiB SIMD group, so the hash works on the stripe in place
// except for the group it keeps back for the final (root) compression.
const encodeStripe = 32 << 10

// codec seals and erasure-codes segments for one file.
type codec struct {
	k, m int
	enc  reedsolomon.Encoder
	bufs sync.Pool // *[]byte shard buffers, returned by release
}

func newCodec(k, m int) (*codec, error) {
	enc, err := reedsolomon.New(k, m)
	if err != nil {
		return nil, fmt.Errorf("cbfs: reed-solomon %d+%d: %w", k, m, err)
	}
	return &codec{k: k, m: m, enc: enc}, nil
}

// encodedSegment is a sealed, coded segment ready for upload.
type encodedSegment struct {
	seg    Segment
	shards [][]byte
	buf    []byte // backing array of shards
}

// release returns the shard buffers for reuse; es.shards must not be used
// afterwards.
func (c *codec) release(es *encodedSegment) {
	b := es.buf[:0]
	es.buf, es.shards = nil, nil
	c.bufs.Put(&b)
}

// encode seals plain with aead (aad binds volume, file and index) and splits
// it into k+m shards with their hashes.
func (c *codec) encode(aead cipher.AEAD, aad []byte, plain []byte) (*encodedSegment, error) {
	var nonce [12]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("cbfs: nonce: %w", err)
	}
	ctLen := len(plain) + aead.Overhead()
	shardSize := (ctLen + c.k - 1) / c.k
	need := shardSize * (c.k + c.m)
	var buf []byte
	if p, ok := c.bufs.Get().(*[]byte); ok && cap(*p) >= need {
		buf = (*p)[:need]
		clear(buf[ctLen : shardSize*c.k]) // padding of the last data shard
	} else {
		buf = make([]byte, need)
	}
	aead.Seal(buf[:0], nonce[:], plain, aad)
	shards := make([][]byte, c.k+c.m)
	for i := range shards {
		shards[i] = buf[i*shardSize : (i+1)*shardSize : (i+1)*shardSize]
	}
	es := &encodedSegment{
		buf:    buf,
		seg:    Segment{Size: uint32(len(plain)), CipherSize: uint32(ctLen), Nonce: nonce, ShardSize: uint32(shardSize), Shards: make([]ShardRef, c.k+c.m)},
		shards: shards,
	}
	// Erasure-code and hash in stripes small enough for the core's cache,
	// so each ciphertext byte is read from memory once after sealing rather
	// than once by the coder and again by every shard's hash.
	hs := make([]merkle.Builder, len(shards))
	stripe := make([][]byte, len(shards))
	for off := 0; off < shardSize; off += encodeStripe {
		end := min(off+encodeStripe, shardSize)
		for i, s := range shards {
			stripe[i] = s[off:end:end]
		}
		if c.m > 0 {
			if err := c.enc.Encode(stripe); err != nil {
				return nil, fmt.Errorf("cbfs: erasure encode: %w", err)
			}
		}
		for i, s := range stripe {
			hs[i].Write(s)
		}
	}
	for i := range shards {
		es.seg.Shards[i].Hash = hs[i].Sum()
		if _, err := rand.Read(es.seg.Shards[i].ID[:]); err != nil {
			return nil, fmt.Errorf("cbfs: shard id: %w", err)
		}
	}
	return es, nil
}

// reconstruct fills nil entries of shards (at least k present) in place.
func (c *codec) reconstruct(shards [][]byte, dataOnly bool) error {
	var err error
	if dataOnly {
		err = c.enc.ReconstructData(shards)
	} else {
		err = c.enc.Reconstruct(shards)
	}
	if err != nil {
		return fmt.Errorf("%w: reconstruct: %v", ErrInsufficientShards, err)
	}
	return nil
}

// decode opens a segment from its (complete data) shards.
func (c *codec) decode(aead cipher.AEAD, aad []byte, seg *Segment, shards [][]byte) ([]byte, error) {
	ct := make([]byte, 0, int(seg.ShardSize)*c.k)
	for i := 0; i < c.k; i++ {
		ct = append(ct, shards[i]...)
	}
	if int(seg.CipherSize) > len(ct) {
		return nil, fmt.Errorf("%w: segment shorter than declared", ErrIntegrity)
	}
	pt, err := aead.Open(ct[:0], seg.Nonce[:], ct[:seg.CipherSize], aad)
	if err != nil {
		return nil, fmt.Errorf("%w: segment does not decrypt: %v", ErrIntegrity, err)
	}
	return pt, nil
}
