package node

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"go.etcd.io/bbolt"
)

// A hand-off's proof of the next validator set is taken from the state at
// the epoch's last height. A pruning node (--prune-keep) deletes that
// state once the height falls out of its window, so the proof is recorded
// beside the anchor in the finalized-block log, when the hand-off is
// certified or the first time it is served, and read from there after.

var bucketHandoffProof = []byte("handoff_proof") // big-endian epoch k → apitypes.LightHandoff

func (l *finalLog) putHandoffProof(h *apitypes.LightHandoff) error {
	enc, err := codec.Marshal(h)
	if err != nil {
		return fmt.Errorf("node: encode hand-off proof of epoch %d: %w", h.Epoch, err)
	}
	return l.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketHandoffProof)
		if err != nil {
			return err
		}
		return b.Put(be8(h.Epoch), enc)
	})
}

func (l *finalLog) handoffProof(epoch uint64) (*apitypes.LightHandoff, error) {
	var h *apitypes.LightHandoff
	err := l.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketHandoffProof)
		if b == nil {
			return nil
		}
		v := b.Get(be8(epoch))
		if v == nil {
			return nil
		}
		h = new(apitypes.LightHandoff)
		return codec.Unmarshal(v, h)
	})
	if err != nil {
		return nil, fmt.Errorf("node: read hand-off proof of epoch %d: %w", epoch, err)
	}
	return h, nil
}

// lightHandoff is epoch k's hand-off (anchor a) with the proof of the next
// validator set: as recorded, or proved now from v and recorded.
func lightHandoff(v *store.View, l *finalLog, epoch uint64, a *consensus.Anchor) (apitypes.LightHandoff, error) {
	if h, err := l.handoffProof(epoch); err != nil || h != nil {
		if err != nil {
			return apitypes.LightHandoff{}, err
		}
		return *h, nil
	}
	p, err := consensus.DecodePayload(a.Block.Payload)
	if err != nil {
		return apitypes.LightHandoff{}, err
	}
	key := validators.EpochKey()
	lp, err := lightProofAt(v, key, p.Exec.Height, a)
	if err != nil {
		return apitypes.LightHandoff{}, fmt.Errorf("node: prove the hand-off of epoch %d at height %d: %w", epoch, p.Exec.Height, err)
	}
	var val types.Bytes
	if lp.Value != nil {
		val = *lp.Value
	}
	h := apitypes.LightHandoff{Epoch: epoch, Header: lp.Header, Anchor: lp.Anchor, Key: key, Value: val, Proof: lp.Proof}
	if err := l.putHandoffProof(&h); err != nil {
		return apitypes.LightHandoff{}, err
	}
	return h, nil
}
