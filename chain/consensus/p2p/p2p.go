// Package p2p carries consensus messages and transaction gossip between
// validators over QUIC with TLS 1.3 (spec §6.2).
//
// Peer identity is the validator's BLS key: each transport generates an
// ephemeral P-256 TLS key and a self-signed certificate whose extension holds
// the validator's BLS public key and a BLS signature over the certificate's
// SubjectPublicKeyInfo. Both sides present certificates (mutual TLS) and
// accept only peers bound to a configured validator key, so a message's
// sender index is authenticated by the connection.
//
// Framing is one unidirectional QUIC stream per message: a kind byte, then
// the payload, then FIN. Messages are independent; consensus needs no
// ordering. Inbound messages that do not fit in the inbox are dropped (the
// protocol tolerates loss) and counted.
package p2p

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
)

// Message kinds.
const (
	KindConsensus byte = 1 // consensus.Message encoding
	KindTx        byte = 2 // a transaction for the mempool
	KindSync      byte = 3 // block sync request (chain/node)
	KindSyncReply byte = 4 // finalized blocks answering KindSync
	KindHello     byte = 5 // peer discovery: the sender's listen address and the addresses it knows
	// State sync (chain/node snapshot*.go, statesync.go).
	KindSnapshot      byte = 20 // a snapshot offer or chunk request
	KindSnapshotReply byte = 21 // the offer or chunk answering KindSnapshot
)

// MaxMessage bounds a message payload.
const MaxMessage = 16 << 20

// GuestBase is the first index given to a guest: a peer that is not a
// configured validator (a full node) but whose certificate binds a BLS key
// like a validator's. Guests are accepted only when Config.Guests allows
// them, only inbound, and never receive Broadcast; a node answers them on
// the connection they opened.
const GuestBase = 1 << 20

// IsGuest reports whether a peer index is a guest's.
func IsGuest(index int) bool { return index >= GuestBase }

// Frame faults, reported through Config.OnFault.
var (
	ErrOversized = errors.New("p2p: frame above the size limit")
	ErrMalformed = errors.New("p2p: malformed frame")
)

// ErrClosed is returned after Close.
var ErrClosed = errors.New("p2p: transport closed")

// Peer is a validator to talk to.
type Peer struct {
	Index int    // validator index (the consensus core's `from`/`to`)
	Addr  string // host:port
	Key   []byte // BLS public key (48 bytes)
}

// Config configures a Transport. Key and Peers are required.
type Config struct {
	Key    *bls.SecretKey // this validator's key; the TLS key is bound to it
	Listen string         // default "127.0.0.1:0"
	Peers  []Peer         // may include this validator; it is skipped
	Inbox  int            // inbound buffer; default 4096
	Logger *slog.Logger   // default slog.Default()
	// Guests is how many non-validator peers (full nodes) may be
	// connected at once; 0 accepts validators only.
	Guests int
	// MaxMessage bounds an inbound payload; default (and at most) MaxMessage.
	MaxMessage int
	// OnFault, if set, is told of every frame refused from a peer
	// (ErrOversized, ErrMalformed), so the caller can score the peer down.
	// It runs on a reader goroutine and must not block.
	OnFault func(from int, err error)
}

// Inbound is a received message; From is the sender's validator index.
type Inbound struct {
	From int
	Kind byte
	Data []byte
}

// Transport is a running endpoint. Send and Broadcast are safe for
// concurrent use.
type Transport struct {
	cfg     Config
	log     *slog.Logger
	tlsConf *tls.Config
	udp     *net.UDPConn
	qt      *quic.Transport // owns udp; QUIC and discovery share it
	ln      *quic.Listener
	byKey   map[string]Peer
	byIndex map[int]Peer
	in      chan Inbound
	dropped atomic.Uint64
	// Message bytes (kind byte + payload) written to and read from peers'
	// streams, for the node's metrics; QUIC and TLS overhead not counted.
	sent, received atomic.Uint64

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[int]*quic.Conn
	dials  map[int]chan struct{}
	closed bool
	// guests maps a guest's BLS key to its index (GuestBase + n).
	guests    map[string]int
	nextGuest int
}

// quicConfig keeps idle timeouts short: a validator killed without closing
// its connections must be noticed within seconds, so that messages are
// sent on a fresh connection once it is back.
func quicConfig() *quic.Config {
	return &quic.Config{KeepAlivePeriod: time.Second, MaxIdleTimeout: 5 * time.Second, MaxIncomingUniStreams: 4096}
}

// New listens and returns a transport; call Run to accept connections.
func New(cfg Config) (*Transport, error) {
	if cfg.Key == nil {
		return nil, errors.New("p2p: Key is required")
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Inbox <= 0 {
		cfg.Inbox = 4096
	}
	if cfg.MaxMessage <= 0 || cfg.MaxMessage > MaxMessage {
		cfg.MaxMessage = MaxMessage
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	self := cfg.Key.PublicKey().Bytes()
	t := &Transport{
		cfg: cfg, log: cfg.Logger, byKey: map[string]Peer{}, byIndex: map[int]Peer{},
		in: make(chan Inbound, cfg.Inbox), conns: map[int]*quic.Conn{}, dials: map[int]chan struct{}{},
		guests: map[string]int{}, nextGuest: GuestBase,
	}
	for _, p := range cfg.Peers {
		if bytes.Equal(p.Key, self) {
			continue
		}
		t.byKey[string(p.Key)] = p
		t.byIndex[p.Index] = p
	}
	cert, err := certificate(cfg.Key)
	if err != nil {
		return nil, err
	}
	conf := tlsConfig(cert, func(k []byte) bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		_, ok := t.byKey[string(k)]
		return ok || cfg.Guests > 0 // a guest is admitted in Run, inbound only
	})
	ua, err := net.ResolveUDPAddr("udp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("p2p: listen %s: %w", cfg.Listen, err)
	}
	if t.udp, err = net.ListenUDP("udp", ua); err != nil {
		return nil, fmt.Errorf("p2p: listen %s: %w", cfg.Listen, err)
	}
	t.qt = &quic.Transport{Conn: t.udp}
	ln, err := t.qt.Listen(conf, quicConfig())
	if err != nil {
		_ = t.udp.Close()
		return nil, fmt.Errorf("p2p: listen %s: %w", cfg.Listen, err)
	}
	t.ln = ln
	t.tlsConf = conf
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t, nil
}

// Addr is the listening address.
func (t *Transport) Addr() net.Addr { return t.ln.Addr() }

// Inbound delivers received messages.
func (t *Transport) Inbound() <-chan Inbound { return t.in }

// Dropped counts inbound messages lost to a full inbox.
func (t *Transport) Dropped() uint64 { return t.dropped.Load() }

// Traffic returns the message bytes sent to and received from peers since
// the transport started.
func (t *Transport) Traffic() (sent, received uint64) { return t.sent.Load(), t.received.Load() }

// Run accepts connections until ctx is cancelled or Close is called.
func (t *Transport) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { _ = t.Close() })
	defer stop()
	for {
		conn, err := t.ln.Accept(t.ctx)
		if err != nil {
			if t.ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("p2p: accept: %w", err)
		}
		p, err := t.peerOf(conn)
		if err != nil && t.cfg.Guests > 0 {
			p, err = t.guestOf(conn)
		}
		if err != nil {
			t.log.Debug("p2p: connection refused", "remote", conn.RemoteAddr().String(), "err", err)
			_ = conn.CloseWithError(1, "unknown peer")
			continue
		}
		// A peer that dials in is alive on this connection; an older one to
		// it may belong to a process that has since restarted, so send on
		// the new one (the old one is left to time out, not closed, because
		// the peer may be sending on it).
		t.mu.Lock()
		if !t.closed {
			t.conns[p.Index] = conn
		}
		t.mu.Unlock()
		t.goRead(conn, p)
	}
}

// connKey is the BLS key bound to a connection's peer certificate.
func connKey(conn *quic.Conn) ([]byte, error) {
	certs := conn.ConnectionState().TLS.PeerCertificates
	if len(certs) == 0 {
		return nil, fmt.Errorf("%w: no certificate", ErrIdentity)
	}
	return PeerKey(certs[0].Raw)
}

func (t *Transport) peerOf(conn *quic.Conn) (Peer, error) {
	k, err := connKey(conn)
	if err != nil {
		return Peer{}, err
	}
	t.mu.Lock()
	p, ok := t.byKey[string(k)]
	t.mu.Unlock()
	if !ok {
		return Peer{}, fmt.Errorf("%w: unknown key", ErrIdentity)
	}
	return p, nil
}

// guestOf admits the peer of an inbound connection as a guest: the same
// key keeps its index across reconnections; when Guests are connected
// already, the slots of disconnected ones are freed first.
func (t *Transport) guestOf(conn *quic.Conn) (Peer, error) {
	k, err := connKey(conn)
	if err != nil {
		return Peer{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.guests[string(k)]; ok {
		return Peer{Index: i, Key: k}, nil
	}
	if len(t.guests) >= t.cfg.Guests {
		for key, i := range t.guests {
			if c := t.conns[i]; c == nil || c.Context().Err() != nil {
				delete(t.guests, key)
				delete(t.conns, i)
			}
		}
	}
	if len(t.guests) >= t.cfg.Guests {
		return Peer{}, fmt.Errorf("%w: %d guests connected already", ErrIdentity, len(t.guests))
	}
	i := t.nextGuest
	t.nextGuest++
	t.guests[string(k)] = i
	return Peer{Index: i, Key: k}, nil
}

// fault reports a refused frame.
func (t *Transport) fault(from int, err error) {
	t.log.Warn("p2p: frame refused", "peer", from, "err", err)
	if t.cfg.OnFault != nil {
		t.cfg.OnFault(from, err)
	}
}

// goRead reads streams of conn in a tracked goroutine.
func (t *Transport) goRead(conn *quic.Conn, p Peer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		_ = conn.CloseWithError(0, "closing")
		return
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		for {
			s, err := conn.AcceptUniStream(t.ctx)
			if err != nil {
				return
			}
			t.wg.Add(1)
			go func() {
				defer t.wg.Done()
				t.readStream(s, p)
			}()
		}
	}()
}

func (t *Transport) readStream(s *quic.ReceiveStream, p Peer) {
	_ = s.SetReadDeadline(time.Now().Add(30 * time.Second))
	limit := t.cfg.MaxMessage
	b, err := io.ReadAll(io.LimitReader(s, int64(limit)+2))
	switch {
	case err != nil:
		s.CancelRead(1) // a reset or timed-out stream: the connection's business
		return
	case len(b) > limit+1:
		s.CancelRead(1)
		t.fault(p.Index, fmt.Errorf("%w: more than %d bytes", ErrOversized, limit))
		return
	case len(b) < 1:
		t.fault(p.Index, fmt.Errorf("%w: empty stream", ErrMalformed))
		return
	}
	t.received.Add(uint64(len(b)))
	select {
	case t.in <- Inbound{From: p.Index, Kind: b[0], Data: b[1:]}:
	default:
		t.dropped.Add(1)
	}
}

// SetPeers replaces the configured validators (a new epoch's set; this
// validator may be among them and is skipped). Known addresses are kept
// for keys that stay. Every validator connection is closed, because a
// peer's index may have changed; the next Send dials again. Guests keep
// theirs, except a guest whose key the new set names.
func (t *Transport) SetPeers(peers []Peer) {
	self := string(t.cfg.Key.PublicKey().Bytes())
	t.mu.Lock()
	byKey, byIndex := map[string]Peer{}, map[int]Peer{}
	for _, p := range peers {
		if string(p.Key) == self {
			continue
		}
		if old, ok := t.byKey[string(p.Key)]; ok && p.Addr == "" {
			p.Addr = t.byIndex[old.Index].Addr
		}
		byKey[string(p.Key)] = p
		byIndex[p.Index] = p
	}
	t.byKey, t.byIndex = byKey, byIndex
	conns := t.conns
	t.conns = map[int]*quic.Conn{}
	// A guest keeps its connection (its index does not depend on the set)
	// unless its key is a validator's now: then the connection is closed
	// like the others, so that it comes back under its validator index.
	for key, i := range t.guests {
		if _, ok := byKey[key]; ok {
			delete(t.guests, key)
			continue
		}
		if c, ok := conns[i]; ok {
			t.conns[i] = c
			delete(conns, i)
		}
	}
	t.mu.Unlock()
	for _, c := range conns {
		_ = c.CloseWithError(0, "reconfigured")
	}
}

// AddPeer configures one more peer (a full node found by discovery) under
// an index no other peer uses, without touching other connections; it
// reports false if the key or the index is taken. The peer is dialled and
// admitted like a validator (its TLS binding must name Key), but a
// validator's Broadcast is the caller's business: full nodes send to
// such peers one by one.
func (t *Transport) AddPeer(p Peer) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.byKey[string(p.Key)]; ok || string(p.Key) == string(t.cfg.Key.PublicKey().Bytes()) {
		return false
	}
	if _, ok := t.byIndex[p.Index]; ok || IsGuest(p.Index) {
		return false
	}
	if i, ok := t.guests[string(p.Key)]; ok { // it dialled in first: forget the guest slot
		delete(t.guests, string(p.Key))
		delete(t.conns, i)
	}
	t.byKey[string(p.Key)] = p
	t.byIndex[p.Index] = p
	return true
}

// SetAddr records the dial address of validator index (learnt through
// discovery). It reports whether the address changed.
func (t *Transport) SetAddr(index int, addr string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.byIndex[index]
	if !ok || p.Addr == addr || addr == "" {
		return false
	}
	p.Addr = addr
	t.byIndex[index] = p
	return true
}

// Addrs returns the known dial address of every configured peer by index
// ("" when unknown).
func (t *Transport) Addrs() map[int]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[int]string, len(t.byIndex))
	for i, p := range t.byIndex {
		out[i] = p.Addr
	}
	return out
}

// conn returns a connection to peer to, dialling once at a time.
func (t *Transport) conn(ctx context.Context, to int) (*quic.Conn, error) {
	for {
		t.mu.Lock()
		p, ok := t.byIndex[to]
		if !ok {
			c := t.conns[to]
			t.mu.Unlock()
			if IsGuest(to) && c != nil && c.Context().Err() == nil {
				return c, nil // a guest is answered on its own connection
			}
			return nil, fmt.Errorf("p2p: no peer %d", to)
		}
		if p.Addr == "" && (t.conns[to] == nil || t.conns[to].Context().Err() != nil) {
			t.mu.Unlock()
			return nil, fmt.Errorf("p2p: no address for peer %d yet", to)
		}
		if t.closed {
			t.mu.Unlock()
			return nil, ErrClosed
		}
		if c := t.conns[to]; c != nil && c.Context().Err() == nil {
			t.mu.Unlock()
			return c, nil
		}
		if wait := t.dials[to]; wait != nil {
			t.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		t.dials[to] = done
		t.mu.Unlock()

		c, err := t.dial(ctx, p.Addr)
		if err == nil {
			var got Peer
			if got, err = t.peerOf(c); err == nil && got.Index != to {
				err = fmt.Errorf("%w: dialled %d, reached %d", ErrIdentity, to, got.Index)
			}
			if err != nil {
				_ = c.CloseWithError(1, "identity")
			}
		}
		t.mu.Lock()
		delete(t.dials, to)
		close(done)
		if err == nil {
			t.conns[to] = c
		}
		t.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("p2p: dial %d at %s: %w", to, p.Addr, err)
		}
		t.goRead(c, p) // the peer may answer on our connection
		return c, nil
	}
}

// Send delivers one message to validator to.
func (t *Transport) Send(ctx context.Context, to int, kind byte, data []byte) error {
	if len(data) > MaxMessage {
		return fmt.Errorf("p2p: message of %d bytes exceeds %d", len(data), MaxMessage)
	}
	c, err := t.conn(ctx, to)
	if err != nil {
		return err
	}
	s, err := c.OpenUniStreamSync(ctx)
	if err != nil {
		return fmt.Errorf("p2p: open stream to %d: %w", to, err)
	}
	if _, err := s.Write(append([]byte{kind}, data...)); err != nil {
		s.CancelWrite(1)
		return fmt.Errorf("p2p: write to %d: %w", to, err)
	}
	if err := s.Close(); err != nil {
		return fmt.Errorf("p2p: close stream to %d: %w", to, err)
	}
	t.sent.Add(uint64(1 + len(data)))
	return nil
}

// Broadcast sends to every configured peer and returns the joined errors
// of the peers it could not reach.
func (t *Transport) Broadcast(ctx context.Context, kind byte, data []byte) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	t.mu.Lock()
	peers := make([]int, 0, len(t.byIndex))
	for to := range t.byIndex {
		peers = append(peers, to)
	}
	t.mu.Unlock()
	for _, to := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := t.Send(ctx, to, kind, data); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close stops the transport and waits for its goroutines. Safe to call
// more than once.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	conns := t.conns
	t.conns = map[int]*quic.Conn{}
	t.mu.Unlock()
	t.cancel()
	for _, c := range conns {
		_ = c.CloseWithError(0, "closing")
	}
	err := t.ln.Close()
	t.wg.Wait()
	err = errors.Join(err, t.qt.Close())
	_ = t.udp.Close() // the quic.Transport may have closed it already
	return err
}

// dial opens a QUIC connection from the transport's own socket, so that
// peers see the address it listens on.
func (t *Transport) dial(ctx context.Context, addr string) (*quic.Conn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	if la, ok := t.udp.LocalAddr().(*net.UDPAddr); ok && la.IP.IsLoopback() && !ua.IP.IsLoopback() {
		// A loopback socket cannot reach another host: dial from a new one.
		return quic.DialAddr(ctx, addr, t.tlsConf, quicConfig())
	}
	return t.qt.Dial(ctx, ua, t.tlsConf, quicConfig())
}
