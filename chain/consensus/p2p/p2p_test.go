package p2p

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func testKey(t *testing.T, i byte) *bls.SecretKey {
	t.Helper()
	seed := sha256.Sum256([]byte{'p', i})
	k, err := bls.KeyFromSeed(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// cluster starts n transports that know each other.
func cluster(t *testing.T, n int) []*Transport {
	t.Helper()
	keys := make([]*bls.SecretKey, n)
	peers := make([]Peer, n)
	ts := make([]*Transport, n)
	for i := range n {
		keys[i] = testKey(t, byte(i))
	}
	// Listen first (port 0), then tell everyone the addresses.
	for i := range n {
		for j := range n {
			peers[j] = Peer{Index: j, Key: keys[j].PublicKey().Bytes()}
		}
		tr, err := New(Config{Key: keys[i], Peers: peers})
		if err != nil {
			t.Fatal(err)
		}
		ts[i] = tr
	}
	for i := range n {
		for j := range n {
			p := ts[i].byIndex[j]
			p.Addr = ts[j].Addr().String()
			if j != i {
				ts[i].byIndex[j] = p
				ts[i].byKey[string(p.Key)] = p
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	for _, tr := range ts {
		go func() { _ = tr.Run(ctx) }()
	}
	t.Cleanup(func() {
		cancel()
		for _, tr := range ts {
			if err := tr.Close(); err != nil {
				t.Log(err)
			}
			_ = tr.Close() // idempotent
		}
	})
	return ts
}

func recv(t *testing.T, tr *Transport) Inbound {
	t.Helper()
	select {
	case m := <-tr.Inbound():
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("timeout waiting for a message")
	}
	return Inbound{}
}

func TestLoopback(t *testing.T) {
	ts := cluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	vote := &consensus.Message{Vote: &consensus.Vote{BlockHash: types.Hash{1}, Height: 2, Round: 3, Voter: 0, Signature: []byte{4}}}
	if err := ts[0].Send(ctx, 1, KindConsensus, vote.Encode()); err != nil {
		t.Fatal(err)
	}
	m := recv(t, ts[1])
	if m.From != 0 || m.Kind != KindConsensus {
		t.Fatalf("got from %d kind %d", m.From, m.Kind)
	}
	dec, err := consensus.DecodeMessage(m.Data)
	if err != nil || dec.Vote == nil || dec.Vote.Round != 3 {
		t.Fatalf("decode: %v %+v", err, dec)
	}
	// The reverse direction, and a large message.
	big := bytes.Repeat([]byte{7}, 1<<20)
	if err := ts[1].Send(ctx, 0, KindTx, big); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, ts[0]); m.From != 1 || m.Kind != KindTx || !bytes.Equal(m.Data, big) {
		t.Fatalf("large message: from %d kind %d len %d", m.From, m.Kind, len(m.Data))
	}
	// Broadcast reaches everyone else with the sender authenticated.
	if err := ts[2].Broadcast(ctx, KindConsensus, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1} {
		if m := recv(t, ts[i]); m.From != 2 || string(m.Data) != "hello" {
			t.Fatalf("broadcast to %d: %+v", i, m)
		}
	}
	if err := ts[0].Send(ctx, 9, KindTx, nil); err == nil {
		t.Fatal("send to unknown peer succeeded")
	}
}

func TestRejectsUnknownPeer(t *testing.T) {
	ts := cluster(t, 2)
	stranger, err := New(Config{Key: testKey(t, 99), Peers: []Peer{{Index: 0, Addr: ts[0].Addr().String(), Key: testKey(t, 0).PublicKey().Bytes()}}})
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = stranger.Send(ctx, 0, KindConsensus, []byte("let me in"))
	if err == nil {
		select {
		case m := <-ts[0].Inbound():
			t.Fatalf("message from an unknown validator delivered: %+v", m)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func TestPeerKeyBinding(t *testing.T) {
	k := testKey(t, 1)
	cert, err := certificate(k)
	if err != nil {
		t.Fatal(err)
	}
	got, err := PeerKey(cert.Certificate[0])
	if err != nil || !bytes.Equal(got, k.PublicKey().Bytes()) {
		t.Fatalf("PeerKey: %v", err)
	}
	// Flip a byte inside the binding extension (the BLS key): the binding
	// or the self-signature must fail.
	der := append([]byte(nil), cert.Certificate[0]...)
	i := bytes.Index(der, k.PublicKey().Bytes())
	if i < 0 {
		t.Fatal("binding not found")
	}
	der[i+5] ^= 1
	if _, err := PeerKey(der); !errors.Is(err, ErrIdentity) {
		t.Fatalf("tampered certificate accepted: %v", err)
	}
}
