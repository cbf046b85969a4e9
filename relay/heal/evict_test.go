package heal

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/internal/store"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// evictedChain is a chain on which one volume is evicted and nothing else
// is known.
type evictedChain struct{ vol [32]byte }

func (c evictedChain) Relays(context.Context) ([]Relay, error) { return nil, nil }
func (c evictedChain) Placement(_ context.Context, vol [32]byte) (*Placement, error) {
	if vol == c.vol {
		return &Placement{Evicted: true}, nil
	}
	return nil, nil
}
func (c evictedChain) Moved(context.Context, [32]byte) (map[[32]byte]Move, error) { return nil, nil }
func (c evictedChain) Repair(context.Context, *types.RepairPlacement) error       { return nil }

// The shards of an evicted volume are deleted once the retention period
// has passed since the relay saw the eviction (not before), and other
// volumes are untouched.
func TestEvictedRetention(t *testing.T) {
	st, err := store.Open(t.TempDir(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	evicted, live := [32]byte{1}, [32]byte{2}
	put := func(vol, id [32]byte, kind wire.Kind) {
		data := bytes.Repeat([]byte{id[0]}, 3000)
		if err := st.Put(context.Background(), vol, id, store.Meta{Kind: kind, Size: uint64(len(data)), Hash: merkle.Sum(data)}, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	put(evicted, [32]byte{10}, wire.KindShard)
	put(evicted, [32]byte{11}, wire.KindShard)
	put(evicted, [32]byte{12}, wire.KindStripes)
	put(live, [32]byte{13}, wire.KindShard)
	key, _ := crypto.GenerateKey()
	now := time.Unix(1000, 0)
	s := New(Config{Key: key, Store: st, Chain: evictedChain{evicted}, Retention: time.Hour, Now: func() time.Time { return now }})
	count := func(vol [32]byte) int {
		n := 0
		for k := wire.KindShard; k <= wire.KindStripes; k++ {
			objs, _ := st.List(vol, k, 0)
			n += len(objs)
		}
		return n
	}
	for _, step := range []struct {
		advance time.Duration
		want    int
	}{{0, 3}, {59 * time.Minute, 3}, {2 * time.Minute, 0}} {
		now = now.Add(step.advance)
		if _, err := s.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := count(evicted); got != step.want {
			t.Fatalf("after %v: %d objects of the evicted volume, want %d", step.advance, got, step.want)
		}
	}
	if count(live) != 1 {
		t.Fatal("a live volume lost objects")
	}
	if vols, _ := st.Volumes(); len(vols) != 1 || vols[0] != live {
		t.Fatalf("volumes %x", vols)
	}
}
