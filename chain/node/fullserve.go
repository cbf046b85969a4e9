package node

import (
	"bytes"
	"context"
	"net"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p/discovery"
)

// Full nodes serving full nodes: a full node answers other full nodes'
// block sync and snapshot requests like a validator answers a guest's
// (the same records from its finalized-block log, the same offers and
// chunks from its snapshots), and a full node follows the full nodes it
// finds through discovery as well as the validators: every batch is
// verified against the validator set whoever sent it, so a full peer is
// trusted no more than a validator.

// fullBase is the first transport index of a full peer (a full node this
// one syncs from): above any validator index, below p2p.GuestBase.
const fullBase = 1 << 16

// maxFullPeers bounds the full nodes a full node follows.
const maxFullPeers = 16

// isFullPeer reports whether a transport index is a full peer's.
func isFullPeer(i int) bool { return i >= fullBase && !p2p.IsGuest(i) }

// serveRequest answers another full node's (a guest's or a full peer's)
// sync or snapshot request off the loop, in at most guestServing answers
// at once; a request that finds every slot busy is dropped and asked
// again. It reports false for other kinds.
func (f *follower) serveRequest(in p2p.Inbound) bool {
	switch in.Kind {
	case p2p.KindSync:
		var req syncRequest
		if err := codec.Unmarshal(in.Data, &req); err != nil {
			return true
		}
		rep := syncReply{Finalized: f.root.Height, Validators: f.validatorAddrs()}
		f.answer(in.From, func() (byte, []byte, error) {
			var err error
			if rep.Handoff, err = handoffAsked(f.flog, req); err != nil {
				return 0, nil, err
			}
			rep.Records, err = f.flog.Range(req.From, 256, 4<<20)
			return p2p.KindSyncReply, codec.MustMarshal(&rep), err
		})
		return true
	case p2p.KindSnapshot:
		var req snapshotRequest
		if err := codec.Unmarshal(in.Data, &req); err != nil {
			return true
		}
		f.answer(in.From, func() (byte, []byte, error) {
			rep, err := f.n.answerSnapshot(f.flog, req)
			return p2p.KindSnapshotReply, codec.MustMarshal(&rep), err
		})
		return true
	}
	return false
}

// answer builds and sends an answer in a tracked goroutine.
func (f *follower) answer(to int, build func() (byte, []byte, error)) {
	select {
	case f.serving <- struct{}{}:
	default:
		return
	}
	f.goTracked(func() {
		defer func() { <-f.serving }()
		kind, data, err := build()
		if err != nil {
			f.log.Debug("serve a full node's request", "peer", to, "err", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.tr.Send(ctx, to, kind, data); err != nil {
			f.log.Debug("answer a full node", "peer", to, "err", err)
		}
	})
}

// validatorAddrs lists the epoch's validators whose address this node
// knows, for the full nodes it serves.
func (f *follower) validatorAddrs() []validatorAddr {
	addrs := f.tr.Addrs()
	var out []validatorAddr
	for i, m := range f.ep.Members {
		if a := addrs[i]; a != "" {
			out = append(out, validatorAddr{Address: m.Address, Addr: a})
		}
	}
	return out
}

// learnDiscovered takes what discovery found: the addresses of the
// epoch's validators the node has none for, and full nodes to follow. It
// reports whether it added a full peer.
func (f *follower) learnDiscovered() (added bool) {
	if f.disc == nil {
		return false
	}
	addrs := f.tr.Addrs()
	for _, p := range f.disc.Peers() {
		member := -1
		for i, m := range f.ep.Members {
			if bytes.Equal(m.BLSKey, p.Key) {
				member = i
			}
		}
		addr := p.Addr.String()
		switch {
		case member >= 0:
			if addrs[member] == "" && f.tr.SetAddr(member, addr) {
				f.source[member] = sourceDiscovered
				f.log.Info("validator address learnt", "validator", f.ep.Members[member].Address, "addr", addr, "via", "discovery")
			}
		case p.Role == discovery.RoleFull:
			if i, ok := f.fullIdx[string(p.Key)]; ok {
				f.tr.SetAddr(i, addr)
				continue
			}
			if len(f.fullPeers) >= maxFullPeers {
				continue
			}
			fp := p2p.Peer{Index: fullBase + len(f.fullPeers), Addr: addr, Key: p.Key}
			if !f.tr.AddPeer(fp) {
				continue
			}
			f.fullPeers = append(f.fullPeers, fp)
			added = true
			f.fullIdx[string(p.Key)] = fp.Index
			f.source[fp.Index] = sourceDiscovered
			if f.disc.IsBootnode(p.ID) {
				f.source[fp.Index] = sourceBootstrap
			}
			f.log.Info("full node found", "addr", addr, "peer", fp.Index, "source", f.source[fp.Index])
		}
	}
	return added
}

// Where a peer's address came from (metrics).
const (
	sourceBootstrap  = "bootstrap"
	sourceDiscovered = "discovered"
)

// sourceOf is where peer i's address came from; a guest dialled in.
func (f *follower) sourceOf(i int) string {
	if s, ok := f.source[i]; ok {
		return s
	}
	if p2p.IsGuest(i) {
		return "inbound"
	}
	return sourceDiscovered
}

// stateSyncDiscovery is how long a state-syncing node looks for full
// nodes through discovery before it asks for snapshot offers.
const stateSyncDiscovery = 3 * time.Second

// findFullPeers runs discovery on the state syncer's transport (when
// enabled and given bootnodes) for stateSyncDiscovery, adds the full nodes
// it finds as peers, and returns their indices: they are asked for offers
// beside the genesis validators, and their offers are verified the same.
func (s *stateSyncer) findFullPeers(ctx context.Context, spawn func(func())) []int {
	nc := s.n.cfg.Network
	if !nc.Discovery || len(nc.Bootnodes) == 0 {
		return nil
	}
	dctx, cancel := context.WithCancel(ctx)
	disc, err := s.n.startDiscovery(dctx, s.tr, discovery.RoleFull, spawn)
	if err != nil || disc == nil {
		cancel()
		s.log.Warn("state sync without discovery", "err", err)
		return nil
	}
	defer cancel() // the walk stops; the records found are kept below
	select {
	case <-ctx.Done():
	case <-time.After(stateSyncDiscovery):
	}
	var out []int
	for _, p := range disc.Peers() {
		if p.Role != discovery.RoleFull || len(out) >= maxFullPeers {
			continue
		}
		fp := p2p.Peer{Index: fullBase + len(out), Addr: p.Addr.String(), Key: p.Key}
		if s.tr.AddPeer(fp) {
			out = append(out, fp.Index)
			s.log.Info("full node found for state sync", "addr", fp.Addr, "peer", fp.Index)
		}
	}
	return out
}

// ephemeralListen is listen's host with port 0 (a second socket beside
// the node's own), or 127.0.0.1:0.
func ephemeralListen(listen string) string {
	host, _, err := net.SplitHostPort(listen)
	if err != nil || host == "" {
		return "127.0.0.1:0"
	}
	return net.JoinHostPort(host, "0")
}
