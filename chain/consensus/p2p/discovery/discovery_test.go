package discovery

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/p2p/enode"
	"github.com/ethereum/go-ethereum/p2p/enr"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
)

const testChain = 7

func testKey(t *testing.T, i byte) *bls.SecretKey {
	t.Helper()
	seed := sha256.Sum256([]byte{'d', i})
	k, err := bls.KeyFromSeed(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// node is a p2p transport with discovery on its socket.
type node struct {
	key *bls.SecretKey
	tr  *p2p.Transport
	d   *Service
}

// startNode starts a transport that knows peers' keys (no addresses) and
// discovery seeded with boot.
func startNode(t *testing.T, key *bls.SecretKey, chainID uint64, peers []p2p.Peer, boot []*enode.Node) *node {
	t.Helper()
	tr, err := p2p.New(p2p.Config{Key: key, Peers: peers})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = tr.Run(ctx) }()
	addr := tr.Addr().(*net.UDPAddr).AddrPort()
	d, err := Start(Config{Key: key, ChainID: chainID, Role: RoleFull, Conn: tr.PacketConn(), Addr: addr, Bootnodes: boot})
	if err != nil {
		t.Fatal(err)
	}
	dctx, dcancel := context.WithCancel(context.Background())
	ddone := make(chan struct{})
	go func() { defer close(ddone); d.Run(dctx) }()
	t.Cleanup(func() {
		dcancel()
		d.Close()
		<-ddone
		cancel()
		_ = tr.Close()
		<-done
	})
	return &node{key: key, tr: tr, d: d}
}

func hasKey(ps []Peer, key []byte) bool {
	for _, p := range ps {
		if bytes.Equal(p.Key, key) {
			return true
		}
	}
	return false
}

// TestDiscoveryFindsAllFromOneBootnode: six nodes on real UDP sockets
// (shared with their QUIC transports), each seeded with only the first
// node's record, all find each other; a node on another chain, a record
// claiming another node's BLS key and garbage packets are refused without
// stopping anyone. A discovered address is then dialled over QUIC, and the
// TLS binding must match the record's key.
func TestDiscoveryFindsAllFromOneBootnode(t *testing.T) {
	const n = 6
	keys := make([]*bls.SecretKey, n)
	peers := make([]p2p.Peer, n)
	for i := range keys {
		keys[i] = testKey(t, byte(i))
		peers[i] = p2p.Peer{Index: i, Key: keys[i].PublicKey().Bytes()}
	}
	nodes := []*node{startNode(t, keys[0], testChain, peers, nil)}
	boot := []*enode.Node{nodes[0].d.Self()}

	// Garbage at the bootnode's socket, with and without the discovery prefix.
	junk, err := net.DialUDP("udp", nil, nodes[0].tr.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 64 {
		b := bytes.Repeat([]byte{byte(i)}, 20+i*10)
		if i%2 == 0 {
			b[0] = 0
		}
		_, _ = junk.Write(b)
	}
	junk.Close()

	for i := 1; i < n; i++ {
		nodes = append(nodes, startNode(t, keys[i], testChain, peers, boot))
	}
	// Another chain's node and an impostor claiming node 1's BLS key.
	other := startNode(t, testKey(t, 100), testChain+1, nil, boot)
	impostor := startNode(t, testKey(t, 101), testChain, nil, boot)
	real := nodes[1].d.Self()
	var stolen entry
	if err := real.Load(&stolen); err != nil {
		t.Fatal(err)
	}
	impostor.d.udp.LocalNode().Set(stolen)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		missing := 0
		for i, nd := range nodes {
			ps := nd.d.Peers()
			for j := range n {
				if j != i && !hasKey(ps, keys[j].PublicKey().Bytes()) {
					missing++
				}
			}
		}
		if missing == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("discovery incomplete after 60 s: %d (node, peer) pairs missing", missing)
		case <-time.After(50 * time.Millisecond):
		}
	}
	for i, nd := range nodes {
		for _, p := range nd.d.Peers() {
			if bytes.Equal(p.Key, other.key.PublicKey().Bytes()) || p.ID == impostor.d.Self().ID() || p.ID == other.d.Self().ID() {
				t.Fatalf("node %d kept a record it must refuse: %+v", i, p)
			}
		}
	}

	// The last node dials every peer at its discovered address.
	last := nodes[n-1]
	for _, p := range last.d.Peers() {
		for j := range n - 1 {
			if bytes.Equal(p.Key, keys[j].PublicKey().Bytes()) {
				last.tr.SetAddr(j, p.Addr.String())
			}
		}
	}
	for j := range n - 1 {
		if err := last.tr.Send(ctx, j, p2p.KindTx, []byte{1}); err != nil {
			t.Fatalf("send to discovered peer %d: %v", j, err)
		}
	}
	// A record pointing at another node's address fails the TLS check.
	fresh := startNode(t, testKey(t, 102), testChain, peers, nil)
	fresh.tr.SetAddr(1, nodes[2].tr.Addr().String())
	if err := fresh.tr.Send(ctx, 1, p2p.KindTx, []byte{1}); !errors.Is(err, p2p.ErrIdentity) {
		t.Fatalf("dial of a wrong address: %v, want ErrIdentity", err)
	}
}

// record builds a signed record with the given cowboy entry.
func record(t *testing.T, seed byte, e *entry) *enode.Node {
	t.Helper()
	key, err := crypto.ToECDSA(bytes.Repeat([]byte{seed}, 32))
	if err != nil {
		t.Fatal(err)
	}
	var r enr.Record
	r.Set(enr.IPv4(net.IPv4(127, 0, 0, 1)))
	r.Set(enr.UDP(30000 + int(seed)))
	if e != nil {
		r.Set(*e)
	}
	if err := enode.SignV4(&r, key); err != nil {
		t.Fatal(err)
	}
	n, err := enode.New(enode.ValidSchemes, &r)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestVerifyRefusesBadRecords: each forged or foreign record is refused
// with its sentinel; the honest one gives the key and QUIC address.
func TestVerifyRefusesBadRecords(t *testing.T) {
	k := testKey(t, 1)
	honest := func(n *enode.Node) entry {
		return entry{Key: k.PublicKey().Bytes(), Sig: k.Sign(bindingMessage(testChain, n.ID())).Bytes(), Role: RoleValidator}
	}
	base := record(t, 1, nil)
	e := honest(base)
	good := record(t, 1, &e)
	p, err := Verify(good, testChain)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.Key, k.PublicKey().Bytes()) || p.Addr != netip.MustParseAddrPort("127.0.0.1:30001") || p.Role != RoleValidator {
		t.Fatalf("verified peer %+v", p)
	}
	// Another node's record copying the entry: the signature names node 1.
	if _, err := Verify(record(t, 2, &e), testChain); !errors.Is(err, ErrBadBinding) {
		t.Fatalf("stolen entry: %v", err)
	}
	if _, err := Verify(good, testChain+1); !errors.Is(err, ErrBadBinding) {
		t.Fatalf("other chain: %v", err)
	}
	if _, err := Verify(base, testChain); !errors.Is(err, ErrNoEntry) {
		t.Fatalf("no entry: %v", err)
	}
	bad := e
	bad.Sig = bytes.Repeat([]byte{0xab}, 96)
	if _, err := Verify(record(t, 1, &bad), testChain); !errors.Is(err, ErrBadBinding) {
		t.Fatalf("garbage signature: %v", err)
	}
	bad = e
	bad.Key = []byte{1, 2, 3}
	if _, err := Verify(record(t, 1, &bad), testChain); !errors.Is(err, ErrBadBinding) {
		t.Fatalf("garbage key: %v", err)
	}
	if _, err := ParseBootnode("enr:garbage"); !errors.Is(err, ErrBadBootnode) {
		t.Fatalf("garbage bootnode: %v", err)
	}
	if n, err := ParseBootnode(good.String()); err != nil || n.ID() != good.ID() {
		t.Fatalf("bootnode round trip: %v", err)
	}
}
