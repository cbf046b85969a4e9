package relay_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// Relay-signed peer requests (repair): a registered relay may put, check
// and get shards without an owner token; a stranger may not, nor may a
// registered relay touch anything but shards.
func TestPeerRequests(t *testing.T) {
	key, _ := crypto.GenerateKey()
	peer, _ := crypto.GenerateKey()
	stranger, _ := crypto.GenerateKey()
	peerAddr := crypto.PubkeyToAddress(peer.PublicKey)
	node, err := relay.New(relay.Config{Key: key, DataDir: t.TempDir(),
		Peers: func(_ context.Context, a [20]byte) (bool, error) { return a == [20]byte(peerAddr), nil }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- node.Run(context.Background()) }()
	<-node.Ready()
	pool := transport.NewPool()
	t.Cleanup(func() { pool.Close(); node.Close(); <-done })

	vol := [32]byte{0x11}
	data := bytes.Repeat([]byte("shard"), 1000)
	send := func(k *ecdsa.PrivateKey, req *wire.Request, body []byte) (*wire.Response, []byte) {
		t.Helper()
		req.Volume, req.Relay, req.Time, req.Token = vol, node.ID(), time.Now().Unix(), wire.PeerToken
		rand.Read(req.Nonce[:])
		req.Sig, _ = captoken.SignRequest(k, req.SigningHash())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		reply, err := pool.Do(ctx, node.Addr().String(), node.PubKey(), req, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer reply.Close()
		b, _ := io.ReadAll(reply.Body)
		return &reply.Response, b
	}
	put := func() *wire.Request {
		return &wire.Request{Op: wire.OpPut, Kind: wire.KindShard, ID: [32]byte{1}, Hash: merkle.Sum(data), Size: uint64(len(data))}
	}
	if r, _ := send(stranger, put(), data); r.Status != wire.StatusUnauthorized || !strings.Contains(r.Error, "not an active registered relay") {
		t.Fatalf("stranger's put: %s %s", r.Status, r.Error)
	}
	if r, _ := send(key, put(), data); r.Status != wire.StatusUnauthorized {
		t.Fatalf("put signed by the relay itself: %s %s", r.Status, r.Error)
	}
	if r, _ := send(peer, put(), data); r.Status != wire.StatusOK {
		t.Fatalf("peer put: %s %s", r.Status, r.Error)
	}
	if r, b := send(peer, &wire.Request{Op: wire.OpGet, Kind: wire.KindShard, ID: [32]byte{1}}, nil); r.Status != wire.StatusOK || !bytes.Equal(b, data) {
		t.Fatalf("peer get: %s %s (%d bytes)", r.Status, r.Error, len(b))
	}
	for _, req := range []*wire.Request{
		{Op: wire.OpDelete, Kind: wire.KindShard, ID: [32]byte{1}},
		{Op: wire.OpGet, Kind: wire.KindManifest, ID: [32]byte{1}},
		{Op: wire.OpList, Kind: wire.KindShard},
	} {
		if r, _ := send(peer, req, nil); r.Status != wire.StatusUnauthorized {
			t.Fatalf("peer %s of kind %d: %s", req.Op, req.Kind, r.Status)
		}
	}
}
