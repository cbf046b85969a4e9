package cbfs

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/klauspost/reedsolomon"
)

// Run with -cpu 1 for per-core numbers.
//
// BenchmarkSegmentEncode is the full client write path per segment:
// AES-256-GCM seal, Reed-Solomon 4+2, chunk-tree hash of every shard.
// BenchmarkReedSolomonEncode is klauspost/reedsolomon's Encode alone on the
// same segment size. Both report throughput over plaintext bytes.
func benchData(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func BenchmarkSegmentEncode(b *testing.B) {
	cd, err := newCodec(DefaultK, DefaultM)
	if err != nil {
		b.Fatal(err)
	}
	plain := benchData(DefaultSegmentSize)
	aead := subKey([32]byte{1}, "file", []byte("f"))
	aad := []byte("aad")
	b.SetBytes(int64(len(plain)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		es, err := cd.encode(aead, aad, plain)
		if err != nil {
			b.Fatal(err)
		}
		cd.release(es) // as the upload path does once the shards are stored
	}
}

func BenchmarkSegmentDecode(b *testing.B) {
	cd, _ := newCodec(DefaultK, DefaultM)
	plain := benchData(DefaultSegmentSize)
	aead := subKey([32]byte{1}, "file", []byte("f"))
	es, _ := cd.encode(aead, nil, plain)
	b.SetBytes(int64(len(plain)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		shards := make([][]byte, len(es.shards))
		copy(shards, es.shards)
		shards[0], shards[2] = nil, nil // force reconstruction
		if err := cd.reconstruct(shards, true); err != nil {
			b.Fatal(err)
		}
		if _, err := cd.decode(aead, nil, &es.seg, shards); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReedSolomonEncode(b *testing.B) {
	enc, err := reedsolomon.New(DefaultK, DefaultM)
	if err != nil {
		b.Fatal(err)
	}
	data := benchData(DefaultSegmentSize)
	shards, err := enc.Split(data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := enc.Encode(shards); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeVsReedSolomon interleaves the full segment encode and a
// bare reedsolomon Encode of the same segment in every iteration, so noise
// from other processes hits both alike, and reports the throughput ratio.
func BenchmarkEncodeVsReedSolomon(b *testing.B) {
	cd, _ := newCodec(DefaultK, DefaultM)
	plain := benchData(DefaultSegmentSize)
	aead := subKey([32]byte{1}, "file", []byte("f"))
	enc, _ := reedsolomon.New(DefaultK, DefaultM)
	shards, _ := enc.Split(benchData(DefaultSegmentSize))
	var ours, rs time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		es, err := cd.encode(aead, nil, plain)
		if err != nil {
			b.Fatal(err)
		}
		cd.release(es)
		t1 := time.Now()
		if err := enc.Encode(shards); err != nil {
			b.Fatal(err)
		}
		ours += t1.Sub(t0)
		rs += time.Since(t1)
	}
	mb := float64(b.N) * float64(len(plain)) / 1e6
	b.ReportMetric(mb/ours.Seconds(), "encode_MB/s")
	b.ReportMetric(mb/rs.Seconds(), "rs_MB/s")
	b.ReportMetric(rs.Seconds()/ours.Seconds(), "ratio")
}
