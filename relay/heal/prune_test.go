package heal

import (
	"bytes"
	"context"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/relay/internal/store"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// placedChain reports one placement and every relay healthy.
type placedChain struct{ pl *Placement }

func (c placedChain) Relays(context.Context) ([]Relay, error) {
	var rs []Relay
	for i := 1; i <= 5; i++ {
		rs = append(rs, Relay{ID: [20]byte{byte(i)}, Healthy: true})
	}
	return rs, nil
}
func (c placedChain) Placement(context.Context, [32]byte) (*Placement, error) { return c.pl, nil }
func (c placedChain) Moved(context.Context, [32]byte) (map[[32]byte]Move, error) {
	return nil, nil
}
func (c placedChain) Repair(context.Context, *types.RepairPlacement) error { return nil }

// Once a stripe map matches the on-chain placement, older maps are deleted;
// a healthy volume needs no repair.
func TestOldStripeMapsPruned(t *testing.T) {
	st, err := store.Open(t.TempDir(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sm, pl := stripeFixture(t)
	put := func(m *wire.StripeMap) {
		b, err := wire.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(context.Background(), m.Volume, wire.StripesID(m.Volume, m.Version),
			store.Meta{Kind: wire.KindStripes, Version: m.Version, Size: uint64(len(b)), Hash: merkle.Sum(b)}, bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	old := *sm
	old.Version = 2
	put(&old)
	put(sm)
	key, _ := crypto.GenerateKey()
	s := New(Config{Key: key, Store: st, Chain: placedChain{pl}})
	rep, err := s.Pass(context.Background())
	if err != nil || rep.Stripes != len(sm.Stripes) || rep.Degraded != 0 {
		t.Fatalf("pass %+v: %v", rep, err)
	}
	objs, _ := st.List(sm.Volume, wire.KindStripes, 0)
	if len(objs) != 1 || objs[0].Version != sm.Version {
		t.Fatalf("stripe maps left: %+v", objs)
	}
}
