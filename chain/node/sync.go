package node

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Block sync. A validator that is behind (peers certify blocks far above
// what it has finalized, and its own finality has not moved for a second)
// asks one peer at a time for finalized blocks after its root. The answer
// ends with a block carrying a finality proof; the batch is accepted only
// if it links by hash to the root and the proof's QCs verify, so a peer
// can delay sync but never make this node finalize a block that is not
// final. The consensus core restarts on the new root (its WAL keeps it
// from equivocating).

type syncRequest struct {
	_    struct{} `cbor:",toarray"`
	From uint64
	// Handoff, when not 0, asks also for the hand-off anchor of epoch
	// Handoff-1 (a full node records the hand-offs it crosses, so that it
	// can offer snapshots past them: fullhandoff.go).
	Handoff uint64
}

type syncReply struct {
	_       struct{} `cbor:",toarray"`
	Records []finalRecord
	// Finalized is the sender's finalized height: a full node learns the
	// network's progress (its sync target) from it.
	Finalized uint64
	// Validators are the sender's epoch's members with the addresses it
	// knows (answers to full nodes only): a full node dials a new epoch's
	// validators without being told their addresses.
	Validators []validatorAddr
	// Handoff is the hand-off anchor the request asked for, if the sender
	// has it (answers to full nodes only).
	Handoff *consensus.Anchor
}

// validatorAddr is a validator's account address and the host:port its
// transport listens on.
type validatorAddr struct {
	_       struct{} `cbor:",toarray"`
	Address types.Address
	Addr    string
}

func (v *validator) maybeSync() {
	st := v.core.Status()
	now := time.Now()
	ahead := st.CommittedHeight
	for _, h := range v.peerFinal {
		ahead = max(ahead, h)
	}
	if v.switching || ahead <= st.FinalizedHeight+2 || now.Sub(v.lastFin) < time.Second || now.Before(v.syncAt) {
		return
	}
	v.syncAt = now.Add(time.Second)
	n := v.set.Len()
	for range n {
		v.syncNext = (v.syncNext + 1) % n
		if v.syncNext != v.self {
			break
		}
	}
	v.log.Info("behind the network; syncing", "finalized", st.FinalizedHeight, "ahead", ahead, "peer", v.syncNext)
	v.send(v.syncNext, p2p.KindSync, codec.MustMarshal(&syncRequest{From: st.FinalizedHeight + 1}))
}

func (v *validator) onSyncRequest(in p2p.Inbound) {
	var req syncRequest
	if err := codec.Unmarshal(in.Data, &req); err != nil {
		return
	}
	if p2p.IsGuest(in.From) {
		v.onGuestSync(in.From, req)
		return
	}
	recs, err := v.flog.Range(req.From, 256, 4<<20)
	if err != nil || len(recs) == 0 {
		return
	}
	v.send(in.From, p2p.KindSyncReply, codec.MustMarshal(&syncReply{Records: recs, Finalized: v.root.Height}))
}

func (v *validator) onSyncReply(in p2p.Inbound) error {
	var rep syncReply
	if err := codec.Unmarshal(in.Data, &rep); err != nil {
		return fmt.Errorf("%w: %w", ErrSyncGarbage, err)
	}
	if v.switching {
		return nil
	}
	recs, err := verifySynced(syncEpoch{rootHeight: v.root.Height, rootHash: v.rootHash, epochEnd: v.epochEnd, domain: v.domain, set: v.set}, rep.Records)
	if err != nil || len(recs) == 0 {
		return err
	}
	last := &recs[len(recs)-1]
	if err := v.flog.Put(recs...); err != nil {
		return err
	}
	v.log.Info("synced finalized blocks", "from", recs[0].Block.Height, "to", last.Block.Height, "peer", in.From)
	v.advance(recs)
	if v.cancelB != nil {
		v.cancelB()
	}
	if last.Block.Height == v.epochEnd {
		v.switching = true // reconfigure once executed
		v.syncSwitch = true
		return nil
	}
	return v.newCore(last.QC)
}

// Discovery: every few seconds a validator tells its peers its listen
// address and the addresses it knows; unknown or changed ones are adopted.
// A validator configured with a single bootstrap peer learns the rest.

type hello struct {
	_         struct{} `cbor:",toarray"`
	Addr      string
	Peers     []peerAddr
	Finalized uint64 // the sender's finalized height: a node that is behind syncs
}

type peerAddr struct {
	_     struct{} `cbor:",toarray"`
	Index uint32
	Addr  string
}

// listenAddr is the address peers dial this validator on.
func (v *validator) listenAddr() string {
	if a := v.n.cfg.Network.Listen; a != "" && !strings.HasSuffix(a, ":0") {
		return a
	}
	return v.tr.Addr().String()
}

func (v *validator) hello(ctx context.Context) {
	h := hello{Addr: v.listenAddr(), Finalized: v.core.Status().FinalizedHeight}
	addrs := v.tr.Addrs()
	for i := range v.set.Len() {
		if a := addrs[i]; a != "" {
			h.Peers = append(h.Peers, peerAddr{Index: uint32(i), Addr: a})
		}
	}
	v.send(consensus.Broadcast, p2p.KindHello, codec.MustMarshal(&h))
}

func (v *validator) onHello(ctx context.Context, in p2p.Inbound) {
	var h hello
	if err := codec.Unmarshal(in.Data, &h); err != nil {
		return
	}
	v.peerFinal[in.From] = h.Finalized
	if v.tr.SetAddr(in.From, h.Addr) {
		v.log.Info("peer address learnt", "peer", in.From, "addr", h.Addr)
	}
	known := v.tr.Addrs()
	for _, p := range h.Peers {
		i := int(p.Index)
		if i != v.self && i < v.set.Len() && known[i] == "" && v.tr.SetAddr(i, p.Addr) {
			v.log.Info("peer address learnt", "peer", i, "addr", p.Addr, "via", in.From)
		}
	}
}
