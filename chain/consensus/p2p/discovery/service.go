package discovery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/log"
	"github.com/ethereum/go-ethereum/p2p/discover"
	"github.com/ethereum/go-ethereum/p2p/enode"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
)

// protocolID replaces discv5's "discv5" in packet headers, so Cowboy nodes
// and Ethereum nodes do not answer each other.
var protocolID = [6]byte{'c', 'o', 'w', 'b', 'o', 'y'}

// DefaultMaxPeers bounds the verified records a node remembers.
const DefaultMaxPeers = 256

// Config configures a Service. Key, Conn and Addr are required.
type Config struct {
	Key     *bls.SecretKey
	ChainID uint64
	Role    byte
	// Conn carries the discovery packets (p2p.Transport.PacketConn).
	Conn discover.UDPConn
	// Addr is the QUIC address this node announces; an unspecified IP is
	// replaced by the one peers report seeing.
	Addr      netip.AddrPort
	Bootnodes []*enode.Node
	// MaxPeers bounds the records kept; default DefaultMaxPeers.
	MaxPeers int
	Logger   *slog.Logger
}

// Service is a running discovery node.
type Service struct {
	cfg     Config
	log     *slog.Logger
	db      *enode.DB
	udp     *discover.UDPv5
	self    enode.ID
	boot    map[enode.ID]bool
	refused atomic.Uint64

	mu         sync.Mutex
	peers      map[enode.ID]Peer
	loggedOnce map[enode.ID]bool // refused records already logged
}

// Start announces this node's record and joins the DHT through the
// bootnodes. Call Run to keep looking for peers, Close to stop.
func Start(cfg Config) (*Service, error) {
	if cfg.Key == nil || cfg.Conn == nil {
		return nil, errors.New("discovery: Key and Conn are required")
	}
	if cfg.MaxPeers <= 0 {
		cfg.MaxPeers = DefaultMaxPeers
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	key, err := NodeKey(cfg.Key)
	if err != nil {
		return nil, err
	}
	db, err := enode.OpenDB("") // in memory: records are re-learnt on start
	if err != nil {
		return nil, fmt.Errorf("discovery: node db: %w", err)
	}
	ln := enode.NewLocalNode(db, key)
	if ip := cfg.Addr.Addr().Unmap(); ip.Is4() && !ip.IsUnspecified() {
		ln.SetStaticIP(net.IP(ip.AsSlice()))
	} else {
		ln.SetFallbackIP(net.IPv4(127, 0, 0, 1))
	}
	ln.SetFallbackUDP(int(cfg.Addr.Port()))
	ln.Set(entry{Key: cfg.Key.PublicKey().Bytes(), Sig: cfg.Key.Sign(bindingMessage(cfg.ChainID, ln.ID())).Bytes(), Role: cfg.Role})

	s := &Service{cfg: cfg, log: cfg.Logger.With("component", "discovery"), db: db, self: ln.ID(), boot: map[enode.ID]bool{}, peers: map[enode.ID]Peer{}, loggedOnce: map[enode.ID]bool{}}
	var boots []*enode.Node
	for _, b := range cfg.Bootnodes {
		if b.ID() == ln.ID() {
			continue
		}
		s.boot[b.ID()] = true
		boots = append(boots, b)
		s.consider(b)
	}
	// discv5 logs through go-ethereum's logger; keep only its warnings.
	glog := log.NewLogger(levelFloor{cfg.Logger.Handler(), slog.LevelWarn})
	s.udp, err = discover.ListenV5(cfg.Conn, ln, discover.Config{
		PrivateKey: key, Bootnodes: boots, V5ProtocolID: &protocolID, Log: glog,
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("discovery: %w", err)
	}
	return s, nil
}

// Self is this node's current record (give it to others as a bootnode).
func (s *Service) Self() *enode.Node { return s.udp.Self() }

// Run walks the DHT for records until ctx ends, keeping those that verify.
func (s *Service) Run(ctx context.Context) {
	it := s.udp.RandomNodes()
	stop := context.AfterFunc(ctx, it.Close)
	defer stop()
	defer it.Close()
	for it.Next() {
		s.consider(it.Node())
	}
}

// consider verifies a record and keeps it.
func (s *Service) consider(n *enode.Node) {
	if n.ID() == s.self {
		return
	}
	p, err := Verify(n, s.cfg.ChainID)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.refused.Add(1)
		// Once per record, and boundedly: a flood must not flood the log.
		if !s.loggedOnce[n.ID()] && len(s.loggedOnce) < 1024 {
			s.loggedOnce[n.ID()] = true
			s.log.Warn("discovery: record refused", "node", n.ID().TerminalString(), "err", err)
		}
		return
	}
	old, known := s.peers[p.ID]
	if known && old.Seq > p.Seq {
		return
	}
	if !known && len(s.peers) >= s.cfg.MaxPeers {
		return
	}
	if !known || !bytes.Equal(old.Key, p.Key) || old.Addr != p.Addr {
		s.log.Debug("discovery: peer found", "node", p.ID.TerminalString(), "addr", p.Addr.String(), "role", p.Role)
	}
	s.peers[p.ID] = p
}

// Peers returns the verified records found so far, by node ID.
func (s *Service) Peers() []Peer {
	s.mu.Lock()
	out := make([]Peer, 0, len(s.peers))
	for _, p := range s.peers {
		out = append(out, p)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].ID[:], out[j].ID[:]) < 0 })
	return out
}

// IsBootnode reports whether a peer came from the bootnode list.
func (s *Service) IsBootnode(id enode.ID) bool { return s.boot[id] }

// Refused counts records that did not verify.
func (s *Service) Refused() uint64 { return s.refused.Load() }

// Close stops discovery; the packet connection is closed, the socket is
// its owner's.
func (s *Service) Close() {
	s.udp.Close()
	s.db.Close()
}

// levelFloor drops records below a level.
type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (h levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}
