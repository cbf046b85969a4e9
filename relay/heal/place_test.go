package heal

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// A rebuilt shard goes to the first target in rank order that takes it: a
// full relay answers "relay full" and the next one gets it, by a
// relay-signed peer request.
func TestPlaceSkipsFullRelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	key, _ := crypto.GenerateKey()
	me := crypto.PubkeyToAddress(key.PublicKey)
	peers := func(_ context.Context, a [20]byte) (bool, error) { return a == [20]byte(me), nil }
	start := func(capacity uint64) (*relay.Node, Relay) {
		nk, _ := crypto.GenerateKey()
		n, err := relay.New(relay.Config{Key: nk, DataDir: t.TempDir(), Capacity: capacity, Peers: peers})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- n.Run(context.Background()) }()
		t.Cleanup(func() { n.Close(); <-done })
		<-n.Ready()
		return n, Relay{ID: n.ID(), Addr: n.Addr().String(), PubKey: n.PubKey(), Healthy: true}
	}
	_, full := start(1 << 10)
	roomy, free := start(0)
	pool := transport.NewPool()
	t.Cleanup(func() { pool.Close() })
	s := New(Config{Key: key, Pool: pool})
	data := bytes.Repeat([]byte("rebuilt "), 1000)
	sh := wire.StripeShard{Hash: merkle.Sum(data)}
	// A shard id whose rank puts the full relay first.
	for i := 0; ; i++ {
		sh.ID = [32]byte{byte(i), 1}
		if Targets([][20]byte{full.ID, free.ID}, nil, sh.ID)[0] == full.ID {
			break
		}
	}
	byID := map[[20]byte]Relay{full.ID: full, free.ID: free}
	vol := [32]byte{0x42}
	to, err := s.place(ctx, vol, sh, data, map[[20]byte]bool{}, byID, [][20]byte{full.ID, free.ID})
	if err != nil || to != free.ID {
		t.Fatalf("placed on %x: %v", to, err)
	}
	if m, err := roomy.Store().Stat(vol, sh.ID); err != nil || m.Hash != sh.Hash {
		t.Fatalf("shard on the target: %+v %v", m, err)
	}
	// With only the full relay left, the error says so.
	_, err = s.place(ctx, vol, sh, data, map[[20]byte]bool{free.ID: true}, byID, [][20]byte{full.ID, free.ID})
	if !errors.Is(err, ErrNoTarget) || !errors.Is(err, ErrRelayFull) {
		t.Fatalf("only a full relay: %v", err)
	}
}
