package mempool

import (
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// BenchmarkSelectLanes measures lane-by-lane selection from a full pool of
// 5,000 transactions (500 senders × 10 nonces, every tenth sender a runner
// sending heartbeats, fees spread over 100 levels) against Select, the
// single-queue fee merge, on the same pool in the same run:
//
//	go test -run XXX -bench Select -benchtime 200x ./chain/mempool
func BenchmarkSelectLanes(b *testing.B) {
	p := New(Config{MaxTotal: 10_000})
	ks := keys(500)
	for i, k := range ks {
		for n := uint64(0); n < 10; n++ {
			tx, in := laneTx(b, k, n, 100_000, 1_000, uint64(i%100), i%10 == 0)
			if _, err := p.Add(tx, in, rich(), bf); err != nil {
				b.Fatal(err)
			}
		}
	}
	zero := func(types.Address) (uint64, error) { return 0, nil }
	lanes := fees.DefaultLanes()
	caps := lanes.Caps(fees.Default())
	b.Run("lanes", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if got, err := p.SelectLanes(zero, bf, 5_000, lanes, caps); err != nil || len(got) != 200 {
				b.Fatalf("%d selected, %v", len(got), err)
			}
		}
	})
	b.Run("baseline-select", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if got, err := p.Select(zero, bf, 200); err != nil || len(got) != 200 {
				b.Fatalf("%d selected, %v", len(got), err)
			}
		}
	})
}
