package node

import (
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Why a peer's block sync reply is refused. Each is the peer's fault: a
// node that gets one logs it, scores the peer down and asks another.
var (
	// ErrSyncGarbage: the reply does not decode.
	ErrSyncGarbage = errors.New("node: sync reply does not decode")
	// ErrSyncBroken: the blocks do not extend this node's chain by hash, a
	// record's QC is of another block, or a payload is oversized.
	ErrSyncBroken = errors.New("node: synced blocks do not extend the chain")
	// ErrSyncProof: the batch's finality proof or its QCs do not verify
	// against the validator set of those heights (forged, or signed by
	// keys that are not the epoch's validators), or there is none.
	ErrSyncProof = errors.New("node: synced blocks' finality proof does not verify")
)

// syncEpoch is what a batch of synced blocks is checked against: the last
// finalized block here and the validator set in force after it.
type syncEpoch struct {
	rootHeight uint64
	rootHash   types.Hash
	epochEnd   uint64 // the set's last height; later blocks are checked with the next set
	domain     uint64 // consensus.EpochDomain of the set's epoch
	set        *consensus.ValidatorSet
}

// verifySynced returns the records of a sync reply that this node may
// take as final: those above the root and up to the epoch's last height,
// which must link by hash to the root and end with a finality proof whose
// QCs verify against the epoch's validators. Nothing is returned with an
// error, so a peer can delay sync but never make a node finalize a block
// that is not final.
func verifySynced(e syncEpoch, recs []finalRecord) ([]finalRecord, error) {
	for len(recs) > 0 && recs[0].Block.Height <= e.rootHeight {
		recs = recs[1:]
	}
	for len(recs) > 0 && recs[len(recs)-1].Block.Height > e.epochEnd {
		recs = recs[:len(recs)-1] // the next epoch is checked with its own set
	}
	if len(recs) == 0 {
		return nil, nil
	}
	prev := e.rootHash
	for i := range recs {
		b := &recs[i].Block
		if b.Height != e.rootHeight+uint64(i)+1 || b.Parent != prev || b.Justify.BlockHash != prev {
			return nil, fmt.Errorf("%w: block %d does not link to %d", ErrSyncBroken, b.Height, b.Height-1)
		}
		prev = b.Hash()
		if recs[i].QC.BlockHash != prev {
			return nil, fmt.Errorf("%w: block %d: QC of another block", ErrSyncBroken, b.Height)
		}
		if len(b.Payload) > maxPayload {
			return nil, fmt.Errorf("%w: block %d: payload of %d bytes", ErrSyncBroken, b.Height, len(b.Payload))
		}
	}
	last := &recs[len(recs)-1]
	if last.Proof == nil {
		return nil, fmt.Errorf("%w: block %d has none", ErrSyncProof, last.Block.Height)
	}
	if err := last.Proof.Verify(e.domain, e.set, consensus.BLS{}, &last.Block); err != nil {
		return nil, fmt.Errorf("%w: block %d: %w", ErrSyncProof, last.Block.Height, err)
	}
	if err := e.set.VerifyQC(e.domain, consensus.BLS{}, &last.QC); err != nil {
		return nil, fmt.Errorf("%w: block %d: %w", ErrSyncProof, last.Block.Height, err)
	}
	return recs, nil
}
