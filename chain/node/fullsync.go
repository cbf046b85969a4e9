package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
)

// A full node's block sync: requests, answers checked against the epoch's
// validator set, peer scoring, and the validators' addresses it learns.

// request asks the best-scored validator or full peer for the blocks
// after the root.
func (f *follower) request() {
	addrs := f.tr.Addrs()
	var cands []int
	for i := range f.set.Len() {
		if addrs[i] != "" {
			cands = append(cands, i)
		}
	}
	for _, p := range f.fullPeers {
		if time.Since(f.behind[p.Index]) > 2*time.Second {
			cands = append(cands, p.Index)
		}
	}
	peer := f.scores.pickAmong(cands)
	if peer < 0 {
		f.log.Warn("no address for any validator of the epoch nor any full node; add them to the bootstrap list or --bootnodes", "epoch", f.ep.Number)
		return
	}
	f.asked, f.askedAt, f.waiting = peer, time.Now(), true
	req := codec.MustMarshal(&syncRequest{From: f.root.Height + 1, Handoff: f.handoffWanted()})
	if !isFullPeer(peer) {
		f.out.send(peer, p2p.KindSync, req)
		return
	}
	f.goTracked(func() { // one request at a time: no queue needed
		ctx, cancel := context.WithTimeout(context.Background(), syncStall)
		defer cancel()
		if err := f.tr.Send(ctx, peer, p2p.KindSync, req); err != nil {
			f.log.Debug("ask a full node", "peer", peer, "err", err)
		}
	})
}

func (f *follower) onInbound(ctx context.Context, in p2p.Inbound) {
	if in.Kind != p2p.KindSyncReply {
		return // validators send a full node nothing else
	}
	fromAsked := f.waiting && in.From == f.asked
	if fromAsked {
		f.waiting = false
	}
	n, err := f.onSyncReply(ctx, in)
	switch {
	case errors.Is(err, ErrSyncProof):
		f.penalize(in.From, penaltyProof, err)
	case errors.Is(err, ErrSyncBroken), errors.Is(err, ErrSyncGarbage):
		f.penalize(in.From, penaltyBroken, err)
	case err != nil:
		f.log.Error("block sync: storing or executing synced blocks", "err", err)
	case n > 0:
		f.scores.up(in.From)
		if fromAsked && f.root.Height < f.epochEnd {
			// Ask again at once: catching up, the next batch is there;
			// caught up, the validator holds the request until the next
			// block is final (guests.go).
			f.request()
		}
	}
}

// penalize logs a peer's fault and scores it down; the node keeps going
// with the best-scored peer.
func (f *follower) penalize(peer, by int, err error) {
	if p2p.IsGuest(peer) || peer < 0 {
		return
	}
	score := f.scores.down(peer, by)
	f.log.Warn("peer scored down", "peer", peer, "score", score, "err", err)
}

// onSyncReply verifies a batch against the epoch's set, logs it as final
// and executes it. It returns how many blocks it took.
func (f *follower) onSyncReply(ctx context.Context, in p2p.Inbound) (int, error) {
	var rep syncReply
	if err := codec.Unmarshal(in.Data, &rep); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrSyncGarbage, err)
	}
	if isFullPeer(in.From) && rep.Finalized <= f.root.Height {
		f.behind[in.From] = time.Now()
	}
	if err := f.takeHandoff(rep.Handoff); err != nil {
		return 0, err
	}
	recs, err := verifySynced(syncEpoch{rootHeight: f.root.Height, rootHash: f.rootHash, epochEnd: f.epochEnd, domain: f.domain, set: f.set}, rep.Records)
	if err != nil {
		return 0, err
	}
	// A reported height is believed only as a target to sync towards, and
	// addresses only as where to dial (the transport checks who answers).
	f.target = max(f.target, rep.Finalized)
	f.learn(rep.Validators)
	if len(recs) == 0 {
		return 0, nil
	}
	if err := f.flog.Put(recs...); err != nil {
		return 0, err
	}
	last := &recs[len(recs)-1]
	f.root, f.rootHash = &last.Block, last.Block.Hash()
	f.target = max(f.target, f.root.Height)
	if len(recs) > 1 {
		f.log.Info("synced finalized blocks", "from", recs[0].Block.Height, "to", last.Block.Height, "peer", in.From)
	}
	if err := f.executePending(ctx); err != nil {
		return len(recs), err
	}
	if f.root.Height == f.epochEnd {
		return len(recs), f.reconfigure(ctx)
	}
	return len(recs), nil
}

// maxLearnt bounds the validator addresses a full node remembers.
const maxLearnt = 1024

// learn records validators' addresses and gives the transport those of
// the current set's members it has none for.
func (f *follower) learn(vs []validatorAddr) {
	if len(vs) == 0 {
		return
	}
	known := f.tr.Addrs()
	for _, va := range vs {
		if va.Addr == "" || len(f.learnt) >= maxLearnt && f.learnt[va.Address] == "" {
			continue
		}
		f.learnt[va.Address] = va.Addr
		for i, m := range f.ep.Members {
			if m.Address == va.Address && known[i] == "" && f.tr.SetAddr(i, va.Addr) {
				f.log.Info("validator address learnt", "validator", m.Address, "addr", va.Addr, "via", "sync")
			}
		}
	}
}
