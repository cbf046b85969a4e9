package merkle

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestSumMatchesBuilderAndProofs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 1023, 1024, 1025, 3 * 1024, 5*1024 + 7, 64 * 1024} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(r.IntN(256))
		}
		want := Sum(data)
		var b Builder
		// write in odd pieces
		for off := 0; off < n; {
			k := min(n-off, 1+r.IntN(3000))
			b.Write(data[off : off+k])
			off += k
		}
		if got := b.Sum(); got != want {
			t.Fatalf("n=%d builder root mismatch", n)
		}
		got, _, _ := SumReader(bytes.NewReader(data))
		if got != want {
			t.Fatalf("n=%d reader root mismatch", n)
		}
		var b2 Builder
		b2.Write(data)
		leaves := b2.Leaves()
		for i := range leaves {
			p, err := Prove(leaves, i)
			if err != nil {
				t.Fatal(err)
			}
			if err := Verify(want, leaves[i], p); err != nil {
				t.Fatalf("n=%d leaf %d: %v", n, i, err)
			}
			bad := leaves[i]
			bad[0] ^= 1
			if Verify(want, bad, p) == nil {
				t.Fatalf("n=%d leaf %d: tampered leaf verified", n, i)
			}
		}
	}
}

func BenchmarkSum1MiB(b *testing.B) {
	data := make([]byte, 1<<20)
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		Sum(data)
	}
}
