package challenge_test

import (
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/storage/challenge"
	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
)

func TestLeavesAndSummary(t *testing.T) {
	a := challenge.Leaf{ID: [32]byte{2}, Hash: [32]byte{9}, Size: 10}
	b := challenge.Leaf{ID: [32]byte{1}, Hash: [32]byte{8}, Size: 5}
	sorted, err := challenge.SortLeaves([]challenge.Leaf{a, b, a})
	if err != nil || len(sorted) != 2 || sorted[0] != b {
		t.Fatalf("sort: %v %v", sorted, err)
	}
	c := a
	c.Size++
	if _, err := challenge.SortLeaves([]challenge.Leaf{a, c}); err == nil {
		t.Fatal("conflicting leaves for one shard id accepted")
	}
	if _, err := challenge.Summarize([]challenge.Leaf{a, b}); err == nil {
		t.Fatal("unsorted leaves summarised")
	}
	sum, err := challenge.Summarize(sorted)
	if err != nil || sum.Count != 2 || sum.Bytes != 15 {
		t.Fatalf("summary %+v %v", sum, err)
	}
	if challenge.Chunks(0) != 1 || challenge.Chunks(1024) != 1 || challenge.Chunks(1025) != 2 {
		t.Fatal("chunk counts")
	}
}

func TestVerifyRejects(t *testing.T) {
	shard := make([]byte, 5000)
	for i := range shard {
		shard[i] = byte(i * 31 / 7)
	}
	leaves, _ := challenge.SortLeaves([]challenge.Leaf{{ID: [32]byte{1}, Hash: merkle.Sum(shard), Size: 5000}})
	sum, _ := challenge.Summarize(leaves)
	seed := challenge.Seed([32]byte{7}, [32]byte{1}, [20]byte{2}, 3)
	ci := challenge.ChunkIndex(seed, 5000)
	p, _ := merkle.ProveChunk(shard, ci)
	good := challenge.Answer{Leaf: leaves[0], Chunk: shard[ci*1024 : min(5000, (ci+1)*1024)], ChunkPath: p.Siblings}
	if err := challenge.Verify(sum, seed, &good); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(a *challenge.Answer){
		"flipped byte":  func(a *challenge.Answer) { a.Chunk = append([]byte{a.Chunk[0] ^ 1}, a.Chunk[1:]...) },
		"short chunk":   func(a *challenge.Answer) { a.Chunk = a.Chunk[:len(a.Chunk)-1] },
		"other hash":    func(a *challenge.Answer) { a.Leaf.Hash[0] ^= 1 },
		"extra sibling": func(a *challenge.Answer) { a.LeafPath = append(a.LeafPath, merkle.Hash{}) },
		"deep path":     func(a *challenge.Answer) { a.ChunkPath = make([]merkle.Hash, challenge.MaxProofDepth+1) },
	}
	for name, mut := range cases {
		a := good
		a.Leaf = good.Leaf
		a.ChunkPath = append([]merkle.Hash(nil), good.ChunkPath...)
		mut(&a)
		if err := challenge.Verify(sum, seed, &a); !errors.Is(err, challenge.ErrBadAnswer) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := challenge.Verify(challenge.Summary{}, seed, &good); err == nil {
		t.Error("an empty placement verified")
	}
}
