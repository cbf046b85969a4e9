// Package discovery finds Cowboy nodes beyond a bootstrap list (spec 002
// §Network Layer: a DHT seeded by bootstrap nodes). It runs go-ethereum's
// discv5 (a Kademlia DHT of signed node records, ENRs) on the node's own
// UDP port, beside QUIC (p2p.Transport.DiscoveryConn).
//
// A record carries, signed by the node's secp256k1 discovery key, the
// node's QUIC address (the ip and udp entries: QUIC and discovery share
// the port) and a "cby" entry: the BLS key the p2p TLS layer
// authenticates, a BLS signature by that key over the chain ID and the
// record's node ID (so a record cannot claim another node's BLS key, nor
// be replayed on another chain), and the node's role. An ENR holds at most
// 300 bytes; this one takes about 295 with an IPv4 address, so only IPv4
// addresses are announced. The discovery key is derived from the
// BLS secret key, so a node's ID is stable across restarts. A discovered
// peer is then dialled over QUIC, where the TLS binding proves that the
// peer holds the BLS key its record names.
package discovery

import (
	"crypto/ecdsa"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/p2p/enode"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
)

// Roles a record announces.
const (
	RoleValidator byte = 1
	RoleFull      byte = 2
)

// Record faults.
var (
	ErrNoEntry     = errors.New("discovery: record has no cowboy entry")
	ErrBadBinding  = errors.New("discovery: BLS key does not sign the record's node ID")
	ErrNoEndpoint  = errors.New("discovery: record has no QUIC endpoint")
	ErrBadBootnode = errors.New("discovery: bad bootnode record")
)

// bindingTag separates the record binding from every other BLS message.
const bindingTag = "cowboy/discovery/v1/node-id:"

// entry is the record's "cby" entry (RLP-encoded by enr).
type entry struct {
	Key  []byte // BLS public key, 48 bytes
	Sig  []byte // BLS signature over bindingTag ‖ chain ID ‖ node ID
	Role byte
}

// ENRKey implements enr.Entry.
func (entry) ENRKey() string { return "cby" }

func bindingMessage(chainID uint64, id enode.ID) []byte {
	m := binary.BigEndian.AppendUint64([]byte(bindingTag), chainID)
	return append(m, id[:]...)
}

// NodeKey derives the secp256k1 discovery key from a node's BLS key.
func NodeKey(k *bls.SecretKey) (*ecdsa.PrivateKey, error) {
	seed := crypto.Keccak256([]byte("cowboy/discovery/v1/key"), k.Bytes())
	for i := 0; i < 16; i++ { // a hash outside the curve order is astronomically rare
		if key, err := crypto.ToECDSA(seed); err == nil {
			return key, nil
		}
		seed = crypto.Keccak256(seed)
	}
	return nil, errors.New("discovery: cannot derive a node key")
}

// Peer is a verified record: who the node is and where it listens.
type Peer struct {
	ID   enode.ID
	Key  []byte         // BLS public key the node's TLS certificate must bind
	Addr netip.AddrPort // QUIC (and discovery) address
	Role byte
	Seq  uint64
}

// Verify checks a record's cby entry against its node ID and chain (a
// record of another chain fails as ErrBadBinding) and returns the peer it
// describes. The record's own signature (by the node
// ID's key) was checked when it was decoded.
func Verify(n *enode.Node, chainID uint64) (Peer, error) {
	var e entry
	if err := n.Load(&e); err != nil {
		return Peer{}, fmt.Errorf("%w: %w", ErrNoEntry, err)
	}
	pk, err := bls.PublicKeyFromBytes(e.Key)
	if err != nil {
		return Peer{}, fmt.Errorf("%w: %w", ErrBadBinding, err)
	}
	sig, err := bls.SignatureFromBytes(e.Sig)
	if err != nil {
		return Peer{}, fmt.Errorf("%w: %w", ErrBadBinding, err)
	}
	if !pk.Verify(bindingMessage(chainID, n.ID()), sig) {
		return Peer{}, ErrBadBinding
	}
	addr, ok := n.UDPEndpoint()
	if !ok {
		return Peer{}, ErrNoEndpoint
	}
	return Peer{ID: n.ID(), Key: e.Key, Addr: addr, Role: e.Role, Seq: n.Seq()}, nil
}

// ParseBootnode decodes a bootnode given as its record ("enr:…") or URL
// ("enode://…").
func ParseBootnode(s string) (*enode.Node, error) {
	n, err := enode.Parse(enode.ValidSchemes, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadBootnode, err)
	}
	return n, nil
}
