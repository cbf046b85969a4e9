package relay_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/quic-go/quic-go"
)

// slotRounds is more requests than one connection may have open at once
// (transport.QUICConfig's MaxIncomingStreams), so a relay that leaks a
// stream slot per request runs out of them within the test.
const slotRounds = 3 * 256

// dialRelay opens a raw QUIC connection to the harness relay.
func dialRelay(t *testing.T, ctx context.Context, h *harness) *quic.Conn {
	t.Helper()
	c, err := quic.DialAddr(ctx, h.node.Addr().String(), transport.ClientTLS(h.node.PubKey()), transport.QUICConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseWithError(0, "test done") })
	return c
}

// TestStreamSlotsReleasedAfterLateFIN: a client may send its request frame,
// read the answer and only then close its side of the stream (the FIN
// arrives after the relay has read the request). The relay must still
// release the stream's slot; before the fix it never read the late FIN, so
// every such request kept one of the connection's MaxIncomingStreams slots
// until the connection closed, and OpenStreamSync then blocked for good.
func TestStreamSlotsReleasedAfterLateFIN(t *testing.T) {
	h := newHarness(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := dialRelay(t, ctx, h)
	for i := range slotRounds {
		octx, ocancel := context.WithTimeout(ctx, 20*time.Second)
		s, err := c.OpenStreamSync(octx)
		ocancel()
		if err != nil {
			t.Fatalf("request %d: open stream: %v (the relay keeps the slots of finished requests)", i, err)
		}
		if err := wire.WriteFrame(s, &wire.Request{Op: wire.OpStat}); err != nil {
			t.Fatal(err)
		}
		var resp wire.Response
		s.SetReadDeadline(time.Now().Add(20 * time.Second))
		if err := wire.ReadFrame(s, &resp); err != nil || resp.Status != wire.StatusOK {
			t.Fatalf("request %d: %v %v", i, err, resp.Status)
		}
		s.Close() // the FIN comes after the answer
		s.CancelRead(0)
	}
}

// blockingRevocations blocks every check until its context ends, counting
// the checks in progress: a relay handler waiting on a slow chain query.
type blockingRevocations struct{ waiting, entered atomic.Int64 }

func (b *blockingRevocations) Revoked(ctx context.Context, _ [32]byte) (bool, error) {
	b.entered.Add(1)
	b.waiting.Add(1)
	defer b.waiting.Add(-1)
	<-ctx.Done()
	return false, ctx.Err()
}

// TestCancelledRequestsStopHandlers: a client that gives up on a request
// resets its stream; the relay's handler must see that and return, freeing
// the stream's slot. Before the fix a handler waiting on something slow (a
// revocation query to the chain, a lock, the disk) went on waiting, the
// abandoned requests piled up, and once MaxIncomingStreams of them were
// held the client's next request could not open a stream at all.
func TestCancelledRequestsStopHandlers(t *testing.T) {
	rl := &blockingRevocations{}
	h := newHarness(t, 0, rl)
	tok := h.token(captoken.Caveats{Perms: captoken.PermAll})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	addr, node := h.node.Addr().String(), h.node.PubKey()
	for i := range slotRounds {
		req := h.signed(&wire.Request{Op: wire.OpHas, ID: [32]byte{1}}, tok)
		rctx, rcancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			r, err := h.pool.Do(rctx, addr, node, req, nil)
			if err == nil {
				r.Close()
			}
			done <- err
		}()
		// Give up only once the relay's handler is waiting.
		for rl.entered.Load() <= int64(i) {
			select {
			case err := <-done:
				t.Fatalf("request %d ended before the relay handled it: %v", i, err)
			case <-ctx.Done():
				t.Fatalf("request %d never reached the relay's handler (%d handlers still waiting)", i, rl.waiting.Load())
			case <-time.After(time.Millisecond):
			}
		}
		rcancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("request %d: %v, want context.Canceled", i, err)
		}
	}
	for rl.waiting.Load() > 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("%d relay handlers still wait for requests their client gave up", rl.waiting.Load())
		case <-time.After(5 * time.Millisecond):
		}
	}
	if h.pool.Down(addr, node) {
		t.Fatal("requests cancelled by their caller marked the relay down")
	}
}
