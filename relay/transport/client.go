package transport

import (
	"bytes"
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
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[string]*quic.Conn
	dials map[string]*dialing
	down  map[string]time.Time // recent failures, to fail fast
	// downFor is how long a failed relay is avoided (DownFor by default).
	downFor time.Duration
	closed  bool
}

// PoolOption configures a Pool.
type PoolOption func(*Pool)

// WithDownFor sets how long a relay that failed is avoided (default
// DownFor); d <= 0 keeps the default.
func WithDownFor(d time.Duration) PoolOption {
	return func(p *Pool) {
		if d > 0 {
			p.downFor = d
		}
	}
}

// ErrRelayDown is returned without dialing for a relay that failed within
// the pool's down period.
var ErrRelayDown = errors.New("transport: relay recently unreachable")

// DownFor is how long a pool avoids a relay that failed, by default.
const DownFor = 15 * time.Second

// Down reports whether the relay failed within the pool's down period.
func (p *Pool) Down(addr string, node []byte) bool {
	return time.Now().Before(p.DownUntil(addr, node))
}

// DownUntil is when the relay's down mark ends (the zero time, or a time
// in the past, when it is not marked down).
func (p *Pool) DownUntil(addr string, node []byte) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.down[addr+"/"+hex.EncodeToString(node)]
	if !ok {
		return time.Time{}
	}
	return t.Add(p.downFor)
}

// DownFor is how long this pool avoids a relay that failed.
func (p *Pool) DownFor() time.Duration { return p.downFor }

// NewPool returns an empty pool.
func NewPool(opts ...PoolOption) *Pool {
	p := &Pool{conns: map[string]*quic.Conn{}, dials: map[string]*dialing{}, down: map[string]time.Time{}, downFor: DownFor}
	for _, o := range opts {
		o(p)
	}
	return p
}

type dialing struct {
	done chan struct{}
	conn *quic.Conn
	err  error
}

// conn returns a live connection, dialing at most once at a time per relay.
// The dial runs detached from ctx (bounded by the handshake timeout) so a
// caller giving up early still lets the pool learn whether the relay is down.
func (p *Pool) conn(ctx context.Context, addr string, node []byte) (*quic.Conn, error) {
	key := addr + "/" + hex.EncodeToString(node)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("transport: pool closed")
	}
	if c := p.conns[key]; c != nil && c.Context().Err() == nil {
		p.mu.Unlock()
		return c, nil
	}
	if t, ok := p.down[key]; ok && time.Since(t) < p.downFor {
		p.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrRelayDown, addr)
	}
	d := p.dials[key]
	if d == nil {
		d = &dialing{done: make(chan struct{})}
		p.dials[key] = d
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := quic.DialAddr(dctx, addr, ClientTLS(node), QUICConfig())
			p.mu.Lock()
			delete(p.dials, key)
			switch {
			case err != nil:
				p.down[key] = time.Now()
				d.err = fmt.Errorf("transport: dial %s: %w", addr, err)
			case p.closed:
				c.CloseWithError(0, "closed")
				d.err = errors.New("transport: pool closed")
			default:
				delete(p.down, key)
				p.conns[key] = c
				d.conn = c
			}
			p.mu.Unlock()
			close(d.done)
		}()
	}
	p.mu.Unlock()
	select {
	case <-d.done:
		return d.conn, d.err
	case <-ctx.Done():
		return nil, fmt.Errorf("transport: dial %s: %w", addr, ctx.Err())
	}
}

// Forget drops the cached connection to addr. The pool already drops the
// connection of a relay that failed a request; a request its caller gave up
// leaves the connection to the others sharing it.
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

// failed records that the relay at addr failed a request: it is down for
// DownFor and its connection is dropped, so the next request dials again
// instead of queueing on a dead connection.
func (p *Pool) failed(addr string, node []byte) {
	p.mu.Lock()
	p.down[addr+"/"+hex.EncodeToString(node)] = time.Now()
	p.mu.Unlock()
	p.Forget(addr, node)
}

// ErrRequestTimeout is the cause of a context made by WithRequestTimeout
// when its time runs out.
var ErrRequestTimeout = errors.New("transport: relay did not answer within the request timeout")

// WithRequestTimeout bounds one request to d. Running out of it is the
// relay's fault (it is marked down for DownFor); a caller that cancels ctx,
// or whose own deadline passes first, only abandons its request.
func WithRequestTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, ErrRequestTimeout)
}

// relayAtFault reports whether a request that failed with ctx in this state
// says the relay failed: its connection broke or it stalled while the
// caller still waited, or it used up the request timeout. A caller that gave
// up (cancelled, or its own deadline passed) says nothing about the relay,
// and closing the connection that other requests share would fail them all.
func relayAtFault(ctx context.Context) bool {
	return ctx.Err() == nil || errors.Is(context.Cause(ctx), ErrRequestTimeout)
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
	p.wg.Wait()
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
	// Opening waits for a free stream slot, never past ctx.
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		if relayAtFault(ctx) {
			p.failed(addr, node)
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("transport: open stream to %s: %w", addr, err)
	}
	// If ctx ends while the request runs, reset this stream both ways (and
	// only it): the relay's handler sees the reset, stops and frees the
	// stream's slot; the connection stays for the requests sharing it.
	stop := context.AfterFunc(ctx, func() {
		s.CancelRead(CodeCancelled)
		s.CancelWrite(CodeCancelled)
	})
	fail := func(err error) (*Reply, error) {
		stop()
		s.CancelRead(CodeCancelled)
		s.CancelWrite(CodeCancelled)
		if relayAtFault(ctx) {
			p.failed(addr, node)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("transport: %s %s: %w", req.Op, addr, ctx.Err())
		}
		return nil, fmt.Errorf("transport: %s %s: %w", req.Op, addr, err)
	}
	// QUIC's idle timeout does not fire while we keep sending to a peer
	// that died, so every write and read carries a stall deadline.
	s.SetWriteDeadline(time.Now().Add(StallTimeout))
	if err := wire.WriteFrame(s, req); err != nil {
		return fail(err)
	}
	if body != nil && req.Size > 0 {
		src := io.LimitReader(body, int64(req.Size))
		if br, ok := body.(*bytes.Reader); ok && br.Len() == int(req.Size) {
			src = br // its WriteTo hands the stream the whole body at once
		}
		n, err := io.Copy(stallWriter{s}, src)
		if err == nil && uint64(n) != req.Size {
			return fail(fmt.Errorf("body short: %d of %d bytes", n, req.Size))
		}
		if err == nil {
			err = s.Close()
		}
		if err != nil {
			// The relay stopped reading: it refused the body (relay full,
			// not authorized), or it already has all of it and answered
			// before our FIN. Its answer says which.
			s.SetReadDeadline(time.Now().Add(StallTimeout))
			var resp wire.Response
			if rerr := wire.ReadFrame(s, &resp); rerr == nil {
				if resp.Status != wire.StatusOK {
					resp.Size = 0
				}
				return &Reply{Response: resp, Body: io.LimitReader(stallReader{s}, int64(resp.Size)), stream: s, stop: stop}, nil
			}
			return fail(err)
		}
	} else if err := s.Close(); err != nil {
		return fail(err)
	}
	s.SetReadDeadline(time.Now().Add(2 * StallTimeout)) // the relay hashes and fsyncs first
	var resp wire.Response
	if err := wire.ReadFrame(s, &resp); err != nil {
		return fail(err)
	}
	return &Reply{Response: resp, Body: io.LimitReader(stallReader{s}, int64(resp.Size)), stream: s, stop: stop}, nil
}

// CodeCancelled is the QUIC stream error code a client resets a request's
// stream with when it abandons the request.
const CodeCancelled quic.StreamErrorCode = 1

// StallTimeout is how long a request may make no progress.
const StallTimeout = 5 * time.Second

type stallWriter struct{ s *quic.Stream }

// stallPiece bounds one stream write so the stall deadline measures progress
// even for a large body handed over in one Write; it is large enough that
// quic-go fills many packets per call.
const stallPiece = 256 << 10

func (w stallWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), stallPiece)
		w.s.SetWriteDeadline(time.Now().Add(StallTimeout))
		m, err := w.s.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

type stallReader struct{ s *quic.Stream }

func (r stallReader) Read(p []byte) (int, error) {
	r.s.SetReadDeadline(time.Now().Add(StallTimeout))
	return r.s.Read(p)
}
