package node

import (
	"fmt"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"go.etcd.io/bbolt"
)

// Validator-set hand-offs for light clients (docs/CONSENSUS.md §8.8). The
// set of epoch k+1 is in the state after epoch k's last block S. Before a
// validator switches, the old core certifies one more filler whose payload
// commits to S's header: that certified filler, signed by epoch k's set,
// is the hand-off a light client holding epoch k's set checks epoch k+1's
// against. The node keeps it in the finalized-block log by epoch.

var bucketHandoff = []byte("handoff") // big-endian epoch k → consensus.Anchor committing to k's last header

// handoffWait is how long, in view timeouts, a validator whose epoch's
// last block is executed waits for the hand-off certificate before it
// switches without one (it missed the QC, or the others have switched).
const handoffWait = 4

// PutHandoff records the hand-off anchor of epoch k.
func (l *finalLog) PutHandoff(epoch uint64, a *consensus.Anchor) error {
	return l.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketHandoff)
		if err != nil {
			return err
		}
		return b.Put(be8(epoch), codec.MustMarshal(a))
	})
}

// Handoff returns the hand-off anchor of epoch k, or nil.
func (l *finalLog) Handoff(epoch uint64) (*consensus.Anchor, error) {
	var a *consensus.Anchor
	err := l.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketHandoff)
		if b == nil {
			return nil
		}
		v := b.Get(be8(epoch))
		if v == nil {
			return nil
		}
		a = new(consensus.Anchor)
		return codec.Unmarshal(v, a)
	})
	return a, err
}

// readyToSwitch says whether the validator may leave its epoch now that
// the last block is executed: once the old core has certified a filler
// committing to that block (recorded as the epoch's hand-off), or, as a
// fallback that keeps the network live, when a peer is already past the
// boundary or handoffWait view timeouts have passed. A switch driven by
// block sync does not wait.
func (v *validator) readyToSwitch() (bool, error) {
	if v.syncSwitch {
		return true, nil
	}
	if a, err := v.flog.Handoff(v.ep.Number); err != nil || a != nil {
		return a != nil, err
	}
	head, err := v.n.store.Head()
	if err != nil {
		return false, err
	}
	if b, qc, ok := v.core.Certified(); ok && b.Height > v.epochEnd && head.Height == v.epochEnd {
		if p, err := decodeCertified(b.Payload); err == nil && p.Exec.Height == v.epochEnd && p.Exec.Header == head.Hash() {
			if err := v.flog.PutHandoff(v.ep.Number, &consensus.Anchor{Block: *b, QC: qc}); err != nil {
				return false, fmt.Errorf("node: record hand-off of epoch %d: %w", v.ep.Number, err)
			}
			v.log.Info("epoch hand-off certified", "epoch", v.ep.Number, "last_height", v.epochEnd, "filler", b.Height, "round", qc.Round)
			// Prove the next set now, while the epoch's last state is the
			// head: a pruning node deletes it later.
			if err := v.n.store.View(func(sv *store.View) error {
				_, err := lightHandoff(sv, v.flog, v.ep.Number, &consensus.Anchor{Block: *b, QC: qc})
				return err
			}); err != nil {
				v.log.Warn("hand-off proof not recorded; it is proved when first served", "epoch", v.ep.Number, "err", err)
			}
			return true, nil
		}
	}
	if v.handoffSince.IsZero() {
		v.handoffSince = time.Now()
	}
	for _, h := range v.peerFinal {
		if h > v.epochEnd {
			v.log.Warn("switching epochs without a hand-off certificate: peers are past the boundary", "epoch", v.ep.Number)
			return true, nil
		}
	}
	if time.Since(v.handoffSince) > handoffWait*v.tick*time.Duration(v.timeout) {
		v.log.Warn("switching epochs without a hand-off certificate: none certified in time", "epoch", v.ep.Number)
		return true, nil
	}
	return false, nil
}

// LightHandoffs returns the recorded hand-offs of epochs from, from+1, …
// up to the first missing one, each with the proof of the next validator
// set (handoffproof.go).
func (n *Node) LightHandoffs(from uint64, max int) ([]apitypes.LightHandoff, error) {
	l := n.flog.Load()
	if l == nil {
		return nil, ErrNoAnchor
	}
	out := []apitypes.LightHandoff{}
	err := n.store.View(func(v *store.View) error {
		for k := from; len(out) < max; k++ {
			a, err := l.Handoff(k)
			if err != nil {
				return err
			}
			if a == nil {
				return nil
			}
			h, err := lightHandoff(v, l, k, a)
			if err != nil {
				return err
			}
			out = append(out, h)
		}
		return nil
	})
	return out, err
}
