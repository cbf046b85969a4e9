package p2p

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// startPair starts a validator transport with cfg (its Key and Listen are
// filled in) and a guest transport that knows the validator as peer 0.
func startPair(t *testing.T, cfg Config) (val, guest *Transport) {
	t.Helper()
	vk, gk := testKey(t, 10), testKey(t, 11)
	cfg.Key = vk
	val, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	guest, err = New(Config{Key: gk, Peers: []Peer{{Index: 0, Addr: val.Addr().String(), Key: vk.PublicKey().Bytes()}}})
	if err != nil {
		val.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	for _, tr := range []*Transport{val, guest} {
		go func() { _ = tr.Run(ctx) }()
	}
	t.Cleanup(func() {
		cancel()
		val.Close()
		guest.Close()
	})
	return val, guest
}

// TestGuestAcceptedAndAnswered: a validator that accepts guests takes a
// full node's message under a guest index and answers on the full node's
// own connection; without Guests the same node is refused.
func TestGuestAcceptedAndAnswered(t *testing.T) {
	val, guest := startPair(t, Config{Guests: 4})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := guest.Send(ctx, 0, KindSync, []byte("from the guest")); err != nil {
		t.Fatal(err)
	}
	in := recv(t, val)
	if !IsGuest(in.From) || in.Kind != KindSync || string(in.Data) != "from the guest" {
		t.Fatalf("validator got %+v", in)
	}
	if err := val.Send(ctx, in.From, KindSyncReply, []byte("answer")); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, guest); got.From != 0 || got.Kind != KindSyncReply || string(got.Data) != "answer" {
		t.Fatalf("guest got %+v", got)
	}
	// A guest never receives a broadcast: it is no validator.
	if err := val.Broadcast(ctx, KindConsensus, []byte("vote")); err != nil {
		t.Fatal(err)
	}

	// Without Guests the validator closes the full node's connection (in
	// TLS 1.3 the client may finish its handshake before the server has
	// checked the client's certificate, so the dial itself can succeed).
	_, guest2 := startPair(t, Config{})
	c, err := guest2.conn(ctx, 0)
	if err == nil {
		select {
		case <-c.Context().Done():
		case <-ctx.Done():
			t.Fatal("a validator without Guests kept a full node's connection")
		}
	}
}

// TestFrameFaultsReported: an oversized frame and an empty one are
// refused and reported to OnFault with the sender's index; a good frame
// after them still arrives.
func TestFrameFaultsReported(t *testing.T) {
	var (
		mu     sync.Mutex
		faults []error
	)
	val, guest := startPair(t, Config{Guests: 1, MaxMessage: 1024, OnFault: func(from int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if !IsGuest(from) {
			err = errors.New("fault blamed on a non-guest")
		}
		faults = append(faults, err)
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The receiver may stop the oversized stream before the sender closes
	// it, so the send's own error is not the point.
	_ = guest.Send(ctx, 0, KindTx, make([]byte, 4096))
	// An empty stream: no kind byte.
	c, err := guest.conn(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.OpenUniStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := guest.Send(ctx, 0, KindTx, []byte("fine")); err != nil {
		t.Fatal(err)
	}
	if in := recv(t, val); string(in.Data) != "fine" {
		t.Fatalf("got %q", in.Data)
	}
	for {
		mu.Lock()
		got := append([]error(nil), faults...)
		mu.Unlock()
		var over, bad bool
		for _, e := range got {
			over = over || errors.Is(e, ErrOversized)
			bad = bad || errors.Is(e, ErrMalformed)
		}
		if over && bad {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("faults reported: %v", got)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestGuestBecomesValidator: a node connected as a guest whose key a new
// epoch's set names is reconnected and heard under its validator index
// (a registered validator that followed the chain before its epoch).
func TestGuestBecomesValidator(t *testing.T) {
	val, guest := startPair(t, Config{Guests: 4})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := guest.Send(ctx, 0, KindHello, []byte("1")); err != nil {
		t.Fatal(err)
	}
	if in := recv(t, val); !IsGuest(in.From) {
		t.Fatalf("first message from %d, want a guest index", in.From)
	}
	gk := testKey(t, 11).PublicKey().Bytes()
	val.SetPeers([]Peer{{Index: 0, Key: testKey(t, 10).PublicKey().Bytes()}, {Index: 1, Key: gk}})
	for {
		_ = guest.Send(ctx, 0, KindHello, []byte("2")) // the first may go out on the closed connection
		select {
		case in := <-val.Inbound():
			if in.From == 1 {
				return
			}
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("never heard under its validator index")
		}
	}
}
