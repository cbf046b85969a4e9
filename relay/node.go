package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/internal/store"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/quic-go/quic-go"
)

// ErrClosed is returned by Run after Shutdown or Close.
var ErrClosed = errors.New("relay: closed")

// Node is a running relay.
type Node struct {
	cfg   Config
	log   *slog.Logger
	store *store.Store
	// commitMu serializes metadata commits per volume (striped by the
	// volume id's last byte).
	commitMu [256]sync.Mutex
	addr     [20]byte
	revoked  captoken.RevocationList
	reg      *prometheus.Registry
	m        *metrics
	nonces   *nonceCache
	tokens   *captoken.VerifiedCache // token chains already verified

	hardCtx    context.Context // cancelled by Close: aborts everything
	hardCancel context.CancelFunc
	softCtx    context.Context // cancelled by Shutdown: stop accepting
	softCancel context.CancelFunc

	wg       sync.WaitGroup // every goroutine
	inflight sync.WaitGroup // requests being served
	ready    chan struct{}

	mu       sync.Mutex
	udp      net.PacketConn  // the listening socket, owned here so that Close releases it
	tr       *quic.Transport // on udp
	listener *quic.Listener
	httpSrv  *http.Server
	metricsL net.Listener
	closed   bool
	closeErr error
	runOnce  sync.Once
}

// New opens the store and prepares a node. Call Run to serve.
func New(cfg Config) (*Node, error) {
	cfg = cfg.withDefaults()
	if cfg.Key == nil || cfg.DataDir == "" {
		return nil, errors.New("relay: Config.Key and Config.DataDir are required")
	}
	st, err := store.Open(cfg.DataDir, cfg.Capacity, cfg.MaxObjectSize)
	if err != nil {
		return nil, err
	}
	n := &Node{
		cfg:    cfg,
		log:    cfg.Logger,
		store:  st,
		addr:   crypto.PubkeyToAddress(cfg.Key.PublicKey),
		reg:    prometheus.NewRegistry(),
		nonces: newNonceCache(),
		tokens: captoken.NewVerifiedCache(0),
		ready:  make(chan struct{}),
	}
	if cfg.RevocationFile != "" {
		n.revoked = captoken.NewFileRevocations(cfg.RevocationFile)
	}
	n.m = newMetrics(n.reg, st)
	n.hardCtx, n.hardCancel = context.WithCancel(context.Background())
	n.softCtx, n.softCancel = context.WithCancel(n.hardCtx)
	return n, nil
}

// ID is the relay's address (keccak of its node key), its stable identity.
func (n *Node) ID() [20]byte { return n.addr }

// PubKey is the compressed node key.
func (n *Node) PubKey() []byte { return crypto.CompressPubkey(&n.cfg.Key.PublicKey) }

// Ready is closed once Run is listening.
func (n *Node) Ready() <-chan struct{} { return n.ready }

// Addr is the QUIC listen address (valid after Ready).
func (n *Node) Addr() net.Addr {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.listener == nil {
		return nil
	}
	return n.listener.Addr()
}

// MetricsAddr is the metrics HTTP address, or nil.
func (n *Node) MetricsAddr() net.Addr {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.metricsL == nil {
		return nil
	}
	return n.metricsL.Addr()
}

// Store exposes the object store to tests and the repair service (relay/heal).
func (n *Node) Store() *store.Store { return n.store }

func (n *Node) spawn(f func()) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		f()
	}()
}

// Run listens and serves until ctx ends, Shutdown or Close. It returns
// ErrClosed after a shutdown, or the listen error. Connections accepted
// before ctx ended are served until Close, which also releases the socket.
func (n *Node) Run(ctx context.Context) error {
	first := false
	n.runOnce.Do(func() { first = true })
	if !first {
		return errors.New("relay: Run called twice")
	}
	tlsConf, err := transport.ServerTLS(n.cfg.Key)
	if err != nil {
		return err
	}
	// The socket and its quic.Transport are ours, not quic.ListenAddr's:
	// that one closes its socket in the background once the last
	// connection has drained, so a relay restarted on the same address
	// just after Close could find it still bound.
	udp, err := net.ListenPacket("udp", n.cfg.Listen)
	if err != nil {
		return fmt.Errorf("relay: listen %s: %w", n.cfg.Listen, err)
	}
	tr := &quic.Transport{Conn: udp}
	ln, err := tr.Listen(tlsConf, transport.QUICConfig())
	if err != nil {
		closeUDP(tr, udp)
		return fmt.Errorf("relay: listen %s: %w", n.cfg.Listen, err)
	}
	var ml net.Listener
	if n.cfg.Metrics != "" {
		ml, err = net.Listen("tcp", n.cfg.Metrics)
		if err != nil {
			ln.Close()
			closeUDP(tr, udp)
			return fmt.Errorf("relay: metrics listen %s: %w", n.cfg.Metrics, err)
		}
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		ln.Close()
		closeUDP(tr, udp)
		if ml != nil {
			ml.Close()
		}
		return ErrClosed
	}
	n.listener, n.metricsL, n.tr, n.udp = ln, ml, tr, udp
	if ml != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(n.reg, promhttp.HandlerOpts{}))
		n.httpSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		srv := n.httpSrv
		n.spawn(func() {
			if err := srv.Serve(ml); err != nil && !errors.Is(err, http.ErrServerClosed) {
				n.log.Error("metrics server", "err", err)
			}
		})
	}
	n.mu.Unlock()
	close(n.ready)
	used, capacity, objs := n.store.Usage()
	n.log.Info("relay listening", "addr", ln.Addr().String(), "id", fmt.Sprintf("%x", n.addr), "metrics", n.cfg.Metrics,
		"used", used, "capacity", capacity, "objects", objs)

	// Stop accepting when the caller's context ends.
	stop := context.AfterFunc(ctx, n.softCancel)
	defer stop()
	n.spawn(func() {
		<-n.softCtx.Done()
		ln.Close()
	})
	for {
		conn, err := ln.Accept(n.softCtx)
		if err != nil {
			if n.softCtx.Err() != nil {
				return ErrClosed
			}
			return fmt.Errorf("relay: accept: %w", err)
		}
		n.spawn(func() { n.serveConn(conn) })
	}
}

func (n *Node) serveConn(conn *quic.Conn) {
	n.m.conns.Inc()
	defer n.m.conns.Dec()
	// Streams of this connection; on shutdown they finish before the
	// connection is closed (Close aborts them through hardCtx).
	var streams sync.WaitGroup
	defer func() {
		streams.Wait()
		// Keep the connection until the peer leaves or the node closes, so
		// responses written during a graceful shutdown are delivered.
		select {
		case <-conn.Context().Done():
		case <-n.hardCtx.Done():
		}
		conn.CloseWithError(0, "bye")
	}()
	for {
		s, err := conn.AcceptStream(n.softCtx)
		if err != nil {
			return
		}
		n.inflight.Add(1)
		streams.Add(1)
		n.spawn(func() {
			defer n.inflight.Done()
			defer streams.Done()
			n.serveStream(s)
		})
	}
}

// Shutdown stops accepting, waits for in-flight requests until ctx ends, then
// closes. Safe to call more than once.
func (n *Node) Shutdown(ctx context.Context) error {
	n.softCancel()
	n.mu.Lock()
	srv := n.httpSrv
	n.mu.Unlock()
	if srv != nil {
		srv.Shutdown(ctx)
	}
	done := make(chan struct{})
	n.spawn(func() { n.inflight.Wait(); close(done) })
	select {
	case <-done:
		// Let the last responses be acknowledged before closing connections.
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	case <-ctx.Done():
		n.log.Warn("shutdown deadline reached, closing with requests in flight")
	}
	return n.Close()
}

// Close stops everything at once, releases the listening socket (the
// address can be bound again when Close returns) and closes the store.
// Safe to call twice.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return n.closeErr
	}
	n.closed = true
	ln, srv, tr, udp := n.listener, n.httpSrv, n.tr, n.udp
	n.mu.Unlock()
	n.hardCancel()
	if ln != nil {
		ln.Close()
	}
	if srv != nil {
		srv.Close()
	}
	n.wg.Wait() // connections closed (CONNECTION_CLOSE sent) by serveConn
	if tr != nil {
		closeUDP(tr, udp) // the address is free when Close returns
	}
	err := n.store.Close()
	n.mu.Lock()
	n.closeErr = err
	n.mu.Unlock()
	return err
}

// closeUDP stops the transport (waiting for its read loop) and closes the
// socket under it.
func closeUDP(tr *quic.Transport, udp net.PacketConn) {
	tr.Close()
	udp.Close()
}

// Stat reports the relay's usage.
func (n *Node) Stat() wire.Stat {
	used, capacity, objs := n.store.Usage()
	return wire.Stat{Address: n.addr, Capacity: capacity, Used: used, Objects: objs, Version: Version}
}

type nonceCache struct {
	mu   sync.Mutex
	seen map[[16]byte]int64
	last int64
}

func newNonceCache() *nonceCache { return &nonceCache{seen: map[[16]byte]int64{}} }

// add records nonce until expiry (unix); it reports false for a replay.
func (c *nonceCache) add(nonce [16]byte, now, expiry int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now-c.last > 30 {
		for k, e := range c.seen {
			if e < now {
				delete(c.seen, k)
			}
		}
		c.last = now
	}
	if _, ok := c.seen[nonce]; ok {
		return false
	}
	c.seen[nonce] = expiry
	return true
}

var _ io.Reader = (*quic.Stream)(nil)
