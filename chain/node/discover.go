package node

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/ethereum/go-ethereum/p2p/enode"

	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p/discovery"
)

// Peer discovery (chain/consensus/p2p/discovery): every node of a network
// runs discv5 on its p2p socket, announcing a record that binds its BLS
// key to its QUIC address. Full nodes dial the validators it finds where
// their bootstrap list has no address (fullsync.go learnDiscovered), and
// full nodes it finds serve them blocks and snapshots; validators announce
// themselves but keep their configured links.

// NodeRecordPath is where a node writes its discovery record ("enr:…"),
// for others' --bootnodes.
func NodeRecordPath(home string) string { return filepath.Join(home, "node.enr") }

// startDiscovery starts discovery on tr's socket when the configuration
// enables it; it returns nil when it does not. The service stops with ctx
// (go runs its walk, tracked by the caller).
func (n *Node) startDiscovery(ctx context.Context, tr *p2p.Transport, role byte, goTracked func(func())) (*discovery.Service, error) {
	nc := n.cfg.Network
	if !nc.Discovery {
		return nil, nil
	}
	boots := make([]*enode.Node, 0, len(nc.Bootnodes))
	for _, s := range nc.Bootnodes {
		b, err := discovery.ParseBootnode(s)
		if err != nil {
			return nil, err
		}
		boots = append(boots, b)
	}
	ua, ok := tr.Addr().(*net.UDPAddr)
	if !ok {
		return nil, fmt.Errorf("node: p2p address %v is not UDP", tr.Addr())
	}
	svc, err := discovery.Start(discovery.Config{
		Key: nc.Key, ChainID: n.gen.ChainID, Role: role, Conn: tr.PacketConn(), Addr: ua.AddrPort(),
		Bootnodes: boots, MaxPeers: nc.MaxPeers, Logger: n.log,
	})
	if err != nil {
		return nil, err
	}
	rec := svc.Self().String()
	if err := os.WriteFile(NodeRecordPath(n.cfg.Home), []byte(rec+"\n"), 0o644); err != nil {
		n.log.Warn("write the node record", "err", err)
	}
	n.log.Info("discovery running", "record", rec, "bootnodes", len(boots))
	goTracked(func() {
		svc.Run(ctx)
		svc.Close()
	})
	return svc, nil
}

// PeerCount is how many peers of a role whose address came from a source
// ("bootstrap" or "discovered") were heard from recently.
type PeerCount struct {
	Role, Source string
	N            int
}

func addPeerCount(cs []PeerCount, role, source string) []PeerCount {
	for i := range cs {
		if cs[i].Role == role && cs[i].Source == source {
			cs[i].N++
			return cs
		}
	}
	return append(cs, PeerCount{Role: role, Source: source, N: 1})
}
