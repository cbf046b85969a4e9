package node

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Full nodes record the epoch hand-offs they cross (docs/CONSENSUS.md
// §8.8, §8.11). A snapshot offer carries the hand-offs up to its anchor's
// epoch, and a light client needs them to check a later epoch's set, so a
// full node that serves snapshots and light proofs must hold them as a
// validator does. The hand-off of epoch k is a filler certified by epoch
// k's set after its last block; it is not a finalized block, so block sync
// does not bring it. When a full node moves to epoch k+1 it asks for that
// anchor beside its next sync requests (syncRequest.Handoff), checks it
// with epoch k's set exactly as a validator would have certified it,
// records it in its finalized-block log with the proof of the next set
// (proved at once, while the state of epoch k's last height is kept), and
// stops asking.

// maxPendingHandoffs bounds the epochs whose hand-off a full node still
// asks for (one per epoch crossed while catching up).
const maxPendingHandoffs = 64

// pendingHandoff is an epoch whose hand-off the node asks for, with what
// checks it: the epoch's set and signing domain and its last height.
type pendingHandoff struct {
	epoch  uint64
	end    uint64
	domain uint64
	set    *consensus.ValidatorSet
}

// handoffAsked is the hand-off anchor a sync request asks for, from l, or
// nil (none asked, or none recorded).
func handoffAsked(l *finalLog, req syncRequest) (*consensus.Anchor, error) {
	if req.Handoff == 0 {
		return nil, nil
	}
	return l.Handoff(req.Handoff - 1)
}

// wantHandoff queues the epoch the follower is leaving (called before it
// switches to the next set) unless its hand-off is already recorded.
func (f *follower) wantHandoff() {
	if a, err := f.flog.Handoff(f.ep.Number); err != nil || a != nil {
		return
	}
	if len(f.handoffs) >= maxPendingHandoffs {
		f.handoffs = f.handoffs[1:] // the oldest is given up
	}
	f.handoffs = append(f.handoffs, pendingHandoff{epoch: f.ep.Number, end: f.epochEnd, domain: f.domain, set: f.set})
}

// handoffWanted is syncRequest.Handoff for the oldest pending epoch.
func (f *follower) handoffWanted() uint64 {
	if len(f.handoffs) == 0 {
		return 0
	}
	return f.handoffs[0].epoch + 1
}

// takeHandoff checks a hand-off anchor a peer sent against the oldest
// pending epoch and records it. An anchor that does not check is the
// peer's fault (ErrSyncProof).
func (f *follower) takeHandoff(a *consensus.Anchor) error {
	if a == nil || len(f.handoffs) == 0 {
		return nil
	}
	p := f.handoffs[0]
	if err := verifyHandoff(f.n, p, a); err != nil {
		return err
	}
	if err := f.flog.PutHandoff(p.epoch, a); err != nil {
		return fmt.Errorf("node: record hand-off of epoch %d: %w", p.epoch, err)
	}
	f.handoffs = f.handoffs[1:]
	f.log.Info("epoch hand-off recorded", "epoch", p.epoch, "last_height", p.end, "filler", a.Block.Height)
	if err := f.n.store.View(func(v *store.View) error {
		_, err := lightHandoff(v, f.flog, p.epoch, a)
		return err
	}); err != nil {
		f.log.Warn("hand-off proof not recorded; it is proved when first served", "epoch", p.epoch, "err", err)
	}
	return nil
}

// verifyHandoff checks that a is epoch p's hand-off: a block certified by
// p's set in p's domain, above p's last height, whose payload commits to
// the header this node executed at that height.
func verifyHandoff(n *Node, p pendingHandoff, a *consensus.Anchor) error {
	if a.QC.BlockHash != a.Block.Hash() {
		return fmt.Errorf("%w: hand-off of epoch %d: QC of another block", ErrSyncProof, p.epoch)
	}
	if a.Block.Height <= p.end {
		return fmt.Errorf("%w: hand-off of epoch %d at height %d, not above its last block %d", ErrSyncProof, p.epoch, a.Block.Height, p.end)
	}
	if err := p.set.VerifyQC(p.domain, consensus.BLS{}, &a.QC); err != nil {
		return fmt.Errorf("%w: hand-off of epoch %d: %w", ErrSyncProof, p.epoch, err)
	}
	pl, err := decodeCertified(a.Block.Payload)
	if err != nil {
		return fmt.Errorf("%w: hand-off of epoch %d: %w", ErrSyncProof, p.epoch, err)
	}
	var want types.Hash
	if err := n.store.View(func(v *store.View) error {
		hdr, err := v.Header(p.end)
		if err != nil {
			return err
		}
		want = hdr.Hash()
		return nil
	}); err != nil {
		return fmt.Errorf("node: hand-off of epoch %d: header %d: %w", p.epoch, p.end, err)
	}
	if pl.Exec.Height != p.end || pl.Exec.Header != want {
		return fmt.Errorf("%w: hand-off of epoch %d commits to header %d %x, not the executed %d", ErrSyncProof, p.epoch, pl.Exec.Height, pl.Exec.Header[:4], p.end)
	}
	return nil
}

// recordHandoffs records the hand-offs of a verified snapshot offer
// (verifyOffer checked each from the genesis set) in a state-synced
// node's log, so that it can offer snapshots and light proofs past them
// as well.
func recordHandoffs(l *finalLog, hs []apitypes.LightHandoff) error {
	for i := range hs {
		var a consensus.Anchor
		if err := codec.Unmarshal(hs[i].Anchor, &a); err != nil {
			return fmt.Errorf("node: hand-off of epoch %d: %w", hs[i].Epoch, err)
		}
		if err := l.PutHandoff(hs[i].Epoch, &a); err != nil {
			return err
		}
		if err := l.putHandoffProof(&hs[i]); err != nil {
			return err
		}
	}
	return nil
}
