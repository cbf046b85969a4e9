package transport

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/quic-go/quic-go"
)

// QUICConfig is the QUIC configuration shared by relays and clients.
func QUICConfig() *quic.Config {
	return &quic.Config{
		MaxIdleTimeout:                 30 * time.Second,
		KeepAlivePeriod:                10 * time.Second,
		MaxIncomingStreams:             256,
		InitialStreamReceiveWindow:     1 << 20,
		MaxStreamReceiveWindow:         16 << 20,
		InitialConnectionReceiveWindow: 4 << 20,
		MaxConnectionReceiveWindow:     64 << 20,
	}
}

// Pool keeps one QUIC connection per relay. The zero value is not usable;
// call NewPool. Close releases all connections.
type Pool struct {
	mu     sync.Mutex
	conns  map[string]*quic.Conn
	closed bool
}

// NewPool returns an empty pool.
func NewPool() *Pool { return &Pool{conns: map[string]*quic.Conn{}} }

func (p *Pool) conn(ctx context.Context, addr string, node []byte) (*quic.Conn, error) {
	key := addr + "/" + hex.EncodeToString(node)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("transport: pool closed")
	}
	c := p.conns[key]
	p.mu.Unlock()
	if c != nil && c.Context().Err() == nil {
		return c, nil
	}
	c, err := quic.DialAddr(ctx, addr, ClientTLS(node), QUICConfig())
	if err != nil {
		return nil, fmt.Errorf("transport: dial %s: %w", addr, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.CloseWithError(0, "closed")
		return nil, errors.New("transport: pool closed")
	}
	if old := p.conns[key]; old != nil && old != c {
		if old.Context().Err() == nil {
			c.CloseWithError(0, "duplicate")
			return old, nil
		}
	}
	p.conns[key] = c
	return c, nil
}

// Forget drops the cached connection to addr (after an error).
func (p *Pool) Forget(addr string, node []byte) {
	key := addr + "/" + hex.EncodeToString(node)
	p.mu.Lock()
	c := p.conns[key]
	delete(p.conns, key)
	p.mu.Unlock()
	if c != nil {
		c.CloseWithError(0, "forget")
	}
}

// Close closes every connection.
func (p *Pool) Close() error {
	p.mu.Lock()
	conns := p.conns
	p.conns = map[string]*quic.Conn{}
	p.closed = true
	p.mu.Unlock()
	for _, c := range conns {
		c.CloseWithError(0, "client closed")
	}
	return nil
}

// Reply is a response whose body (Response.Size bytes) can be read from Body.
// Close must be called.
type Reply struct {
	wire.Response
	Body   io.Reader
	stream *quic.Stream
	stop   func() bool
}

// Close releases the stream.
func (r *Reply) Close() error {
	r.stop()
	r.stream.CancelRead(0)
	return r.stream.Close()
}

// Do runs one request on a new stream of the relay at addr with node key
// node. body (may be nil) must yield exactly req.Size bytes.
func (p *Pool) Do(ctx context.Context, addr string, node []byte, req *wire.Request, body io.Reader) (*Reply, error) {
	c, err := p.conn(ctx, addr, node)
	if err != nil {
		return nil, err
	}
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		p.Forget(addr, node)
		return nil, fmt.Errorf("transport: open stream to %s: %w", addr, err)
	}
	// Abort the stream if ctx ends while we are blocked on it.
	stop := context.AfterFunc(ctx, func() {
		s.CancelRead(1)
		s.CancelWrite(1)
	})
	fail := func(err error) (*Reply, error) {
		stop()
		s.CancelRead(1)
		s.CancelWrite(1)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("transport: %s %s: %w", req.Op, addr, ctx.Err())
		}
		return nil, fmt.Errorf("transport: %s %s: %w", req.Op, addr, err)
	}
	if err := wire.WriteFrame(s, req); err != nil {
		return fail(err)
	}
	if body != nil && req.Size > 0 {
		n, err := io.Copy(s, io.LimitReader(body, int64(req.Size)))
		if err != nil {
			return fail(err)
		}
		if uint64(n) != req.Size {
			return fail(fmt.Errorf("body short: %d of %d bytes", n, req.Size))
		}
	}
	if err := s.Close(); err != nil {
		return fail(err)
	}
	var resp wire.Response
	if err := wire.ReadFrame(s, &resp); err != nil {
		return fail(err)
	}
	return &Reply{Response: resp, Body: io.LimitReader(s, int64(resp.Size)), stream: s, stop: stop}, nil
}
