package transport

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/quic-go/quic-go"
)

// holdServer is a QUIC server with a relay's TLS identity that reads each
// request frame and answers it only when release is closed, so a test can
// keep a request in flight on the pool's shared connection.
func holdServer(t *testing.T, release <-chan struct{}) (addr string, node []byte) {
	t.Helper()
	key, _ := crypto.GenerateKey()
	conf, err := ServerTLS(key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := quic.ListenAddr("127.0.0.1:0", conf, QUICConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		ln.Close()
		<-done
	})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				for {
					s, err := c.AcceptStream(ctx)
					if err != nil {
						return
					}
					go func() {
						var req wire.Request
						if err := wire.ReadFrame(s, &req); err != nil {
							return
						}
						io.Copy(io.Discard, s)
						select {
						case <-release:
						case <-ctx.Done():
							return
						}
						wire.WriteFrame(s, &wire.Response{Status: wire.StatusOK})
						s.Close()
					}()
				}
			}()
		}
	}()
	return ln.Addr().String(), crypto.CompressPubkey(&key.PublicKey)
}

// TestCancelledRequestSparesOthers: a request whose caller gives up (a
// read-ahead the kernel no longer wants, a killed program's FUSE op) says
// nothing about the relay. It must not close the connection that other
// requests to the same relay share, nor mark the relay down; before the fix
// the shared connection was closed, the request in flight on it failed,
// and the relay was marked down for DownFor, so a mount's next upload found
// "not enough healthy relays" and returned EIO.
func TestCancelledRequestSparesOthers(t *testing.T) {
	release := make(chan struct{})
	addr, node := holdServer(t, release)
	p := NewPool()
	t.Cleanup(func() { p.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type result struct {
		reply *Reply
		err   error
	}
	inFlight := make(chan result, 1)
	go func() {
		r, err := p.Do(ctx, addr, node, &wire.Request{Op: wire.OpStat}, nil)
		inFlight <- result{r, err}
	}()
	// Wait until the first request holds the shared connection.
	for {
		p.mu.Lock()
		n := len(p.conns)
		p.mu.Unlock()
		if n == 1 {
			break
		}
		select {
		case r := <-inFlight:
			t.Fatalf("first request ended early: %v", r.err)
		case <-ctx.Done():
			t.Fatal("no connection was made")
		case <-time.After(10 * time.Millisecond):
		}
	}

	// Requests whose caller already gave up, and one cancelled while it waits.
	gone, stop := context.WithCancel(ctx)
	stop()
	for range 3 {
		if _, err := p.Do(gone, addr, node, &wire.Request{Op: wire.OpStat}, nil); err == nil {
			t.Fatal("a request with a cancelled context succeeded")
		}
	}
	soon, stopSoon := context.WithTimeout(ctx, 50*time.Millisecond)
	if _, err := p.Do(soon, addr, node, &wire.Request{Op: wire.OpStat}, nil); err == nil {
		t.Fatal("a request the server holds succeeded before its deadline")
	}
	stopSoon()
	if p.Down(addr, node) {
		t.Fatal("cancelled requests marked the relay down")
	}
	p.mu.Lock()
	n := len(p.conns)
	p.mu.Unlock()
	if n != 1 {
		t.Fatal("cancelled requests closed the shared connection")
	}

	close(release)
	r := <-inFlight
	if r.err != nil {
		t.Fatalf("the request in flight failed because others were cancelled: %v", r.err)
	}
	r.reply.Close()
	if r.reply.Status != wire.StatusOK {
		t.Fatalf("status %v", r.reply.Status)
	}
	if p.Down(addr, node) {
		t.Fatal("relay marked down")
	}
}

// TestFailedRelayForgotten: a relay that does not answer within the
// request timeout is marked down and its connection dropped, so the next
// request dials again instead of queueing on a dead connection.
func TestFailedRelayForgotten(t *testing.T) {
	release := make(chan struct{})
	addr, node := holdServer(t, release)
	defer close(release)
	p := NewPool()
	t.Cleanup(func() { p.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The server holds the request past the request timeout: the relay's
	// failure, not the caller's.
	rctx, rcancel := WithRequestTimeout(ctx, 200*time.Millisecond)
	defer rcancel()
	_, err := p.Do(rctx, addr, node, &wire.Request{Op: wire.OpStat}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a held request: %v, want its deadline", err)
	}
	if !p.Down(addr, node) {
		t.Fatal("a relay that used up the request timeout was not marked down")
	}
	p.mu.Lock()
	n := len(p.conns)
	p.mu.Unlock()
	if n != 0 {
		t.Fatal("the failed relay's connection was kept")
	}
	if _, err := p.Do(ctx, addr, node, &wire.Request{Op: wire.OpStat}, nil); !errors.Is(err, ErrRelayDown) {
		t.Fatalf("request to a relay just marked down: %v, want ErrRelayDown", err)
	}
}
