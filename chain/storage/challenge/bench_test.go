package challenge_test

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
)

// benchSetup is a relay holding 1024 shards of 1 MiB (leaves only; one
// shard's bytes are kept for proofs) and a challenge on it.
func benchSetup(b *testing.B) ([]challenge.Leaf, []byte, challenge.Summary, [32]byte) {
	shard := make([]byte, 1<<20)
	rand.Read(shard)
	seed := challenge.Seed([32]byte{1}, [32]byte{2}, [20]byte{3}, 4)
	leaves := make([]challenge.Leaf, 1024)
	for i := range leaves {
		rand.Read(leaves[i].ID[:])
		rand.Read(leaves[i].Hash[:])
		leaves[i].Size = 1 << 20
	}
	leaves, _ = challenge.SortLeaves(leaves)
	// The challenged leaf is the real shard.
	leaves[challenge.LeafIndex(seed, uint64(len(leaves)))].Hash = merkle.Sum(shard)
	sum, err := challenge.Summarize(leaves)
	if err != nil {
		b.Fatal(err)
	}
	return leaves, shard, sum, seed
}

// prove is what a relay does: hash the shard into its chunk tree, prove the
// chunk, and prove the leaf in its placement tree.
func prove(b *testing.B, leaves []challenge.Leaf, shard []byte, sum challenge.Summary, seed [32]byte) *challenge.Answer {
	li := challenge.LeafIndex(seed, sum.Count)
	lp, err := challenge.LeafProof(leaves, li)
	if err != nil {
		b.Fatal(err)
	}
	if merkle.Sum(shard) != leaves[li].Hash {
		b.Fatal("shard does not match its leaf")
	}
	ci := challenge.ChunkIndex(seed, uint64(len(shard)))
	cp, err := merkle.ProveChunk(shard, ci)
	if err != nil {
		b.Fatal(err)
	}
	return &challenge.Answer{Leaf: leaves[li], LeafPath: lp, Chunk: shard[ci*merkle.ChunkSize : (ci+1)*merkle.ChunkSize], ChunkPath: cp.Siblings}
}

// BenchmarkChunkHash is the baseline: hashing the challenged 1 KiB chunk.
func BenchmarkChunkHash(b *testing.B) {
	chunk := make([]byte, merkle.ChunkSize)
	rand.Read(chunk)
	b.SetBytes(merkle.ChunkSize)
	for b.Loop() {
		merkle.Sum(chunk)
	}
}

// BenchmarkVerify is the chain's cost of checking one answer.
func BenchmarkVerify(b *testing.B) {
	leaves, shard, sum, seed := benchSetup(b)
	a := prove(b, leaves, shard, sum, seed)
	for b.Loop() {
		if err := challenge.Verify(sum, seed, a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProve is the relay's cost of answering: the whole 1 MiB shard
// is hashed (a relay that kept only the chunk tree could skip it, but then
// it would not notice a corrupt shard), plus the placement path.
func BenchmarkProve(b *testing.B) {
	leaves, shard, sum, seed := benchSetup(b)
	b.SetBytes(int64(len(shard)))
	for b.Loop() {
		prove(b, leaves, shard, sum, seed)
	}
}

// BenchmarkRatios interleaves the chunk hash (baseline), the chain's
// verification and the relay's proof so that the reported ratios hold on a
// loaded machine: verify/chunk_hash and prove/chunk_hash.
func BenchmarkRatios(b *testing.B) {
	leaves, shard, sum, seed := benchSetup(b)
	a := prove(b, leaves, shard, sum, seed)
	chunk := a.Chunk
	var th, tv, tp time.Duration
	for b.Loop() {
		t0 := time.Now()
		for range 16 {
			merkle.Sum(chunk)
		}
		t1 := time.Now()
		for range 16 {
			if err := challenge.Verify(sum, seed, a); err != nil {
				b.Fatal(err)
			}
		}
		t2 := time.Now()
		prove(b, leaves, shard, sum, seed)
		t3 := time.Now()
		th += t1.Sub(t0)
		tv += t2.Sub(t1)
		tp += t3.Sub(t2) * 16
	}
	b.ReportMetric(float64(tv)/float64(th), "verify/chunk_hash")
	b.ReportMetric(float64(tp)/float64(th), "prove/chunk_hash")
	b.ReportMetric(float64(th.Nanoseconds())/float64(16*b.N), "chunk_hash_ns")
	b.ReportMetric(float64(tv.Nanoseconds())/float64(16*b.N), "verify_ns")
}
