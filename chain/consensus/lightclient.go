package consensus

import (
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Signed state roots (docs/CONSENSUS.md §8.8). Headers are derived on
// finality, after consensus, so a QC cannot cover the header of its own
// block. Instead every proposal commits to the proposer's executed head
// (ExecCommit in the Payload), and an honest validator votes for it only
// once it has executed that height itself and holds a header with that
// hash. A QC therefore certifies, through its block's payload, a header of
// the finalized chain and with it that header's state root.

var (
	// ErrNotReady is returned by Application.Verify when the validator
	// cannot check a block yet (it has not executed the height the block
	// commits to). The core does not vote and retries on the next Tick.
	ErrNotReady = errors.New("consensus: not ready to verify the block")
	// ErrUncommitted means a header is not the one a certified block
	// commits to.
	ErrUncommitted = errors.New("consensus: header not committed by the certified block")
)

// ExecCommit is the state commitment a proposal carries: the height and
// header hash of the proposer's executed head. The header holds the state
// root after that height.
type ExecCommit struct {
	_      struct{} `cbor:",toarray"`
	Height uint64
	Header Hash
}

// Payload is the node's block payload (docs/CONSENSUS.md §8.2): the
// proposer's timestamp, the transactions in order, and the commitment to
// the proposer's executed head.
type Payload struct {
	_         struct{} `cbor:",toarray"`
	Timestamp uint64
	Txs       []types.Bytes
	Exec      ExecCommit
}

// DecodePayload decodes a canonical payload.
func DecodePayload(b []byte) (*Payload, error) {
	var p Payload
	if err := codec.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%w: decode payload: %w", ErrInvalidBlock, err)
	}
	return &p, nil
}

// Anchor is a certified block, payload included, with its QC: what a
// light client checks a header against.
type Anchor struct {
	_     struct{} `cbor:",toarray"`
	Block Block
	QC    QC
}

// Verify checks that the anchor's QC certifies its block with a quorum of
// s's stake, signed in the signing domain (EpochDomain of the set's
// epoch), and returns the commitment in the block's payload.
func (a *Anchor) Verify(domain uint64, s *ValidatorSet, v Verifier) (*ExecCommit, error) {
	b := &a.Block
	if a.QC.BlockHash != b.Hash() || a.QC.Height != b.Height || a.QC.Round != b.Round {
		return nil, fmt.Errorf("%w: QC is not the anchor block's", ErrInvalidQC)
	}
	if err := s.VerifyQC(domain, v, &a.QC); err != nil {
		return nil, err
	}
	p, err := DecodePayload(b.Payload)
	if err != nil {
		return nil, err
	}
	if p.Exec.Height >= b.Height {
		return nil, fmt.Errorf("%w: commits to height %d at height %d", ErrInvalidBlock, p.Exec.Height, b.Height)
	}
	return &p.Exec, nil
}

// VerifyHeader checks the anchor (Verify) and that h is the header its
// block commits to. A nil error means a quorum of s signed a block whose
// honest voters had executed h themselves.
func (a *Anchor) VerifyHeader(domain uint64, s *ValidatorSet, v Verifier, h *types.Header) error {
	c, err := a.Verify(domain, s, v)
	if err != nil {
		return err
	}
	if h.Height != c.Height || h.Hash() != c.Header {
		return fmt.Errorf("%w: header %d (%s), block commits to %d (%s)", ErrUncommitted, h.Height, h.Hash(), c.Height, c.Header)
	}
	return nil
}

// VerifyChain checks that hs is a chain of headers, each the parent of the
// next by hash and height, and returns its last header.
func VerifyChain(hs []types.Header) (*types.Header, error) {
	if len(hs) == 0 {
		return nil, fmt.Errorf("%w: no headers", ErrUncommitted)
	}
	for i := 1; i < len(hs); i++ {
		if hs[i].ParentHash != hs[i-1].Hash() || hs[i].Height != hs[i-1].Height+1 {
			return nil, fmt.Errorf("%w: header %d does not extend header %d", ErrUncommitted, hs[i].Height, hs[i-1].Height)
		}
	}
	return &hs[len(hs)-1], nil
}

// Signed returns how many validators and how much stake a valid bitmap
// names.
func (s *ValidatorSet) Signed(b Bitmap) (count int, stake uint64) {
	st, ok := s.bitmapStake(b)
	if !ok {
		return 0, 0
	}
	return bitCount(b), st
}

// EpochOf is the epoch whose validator set certifies blocks at height:
// epoch k covers heights k·epochLen+1 … (k+1)·epochLen (docs/CONSENSUS.md
// §8.6); its fillers above (k+1)·epochLen are certified by the same set
// but commit to no later header than the boundary.
func EpochOf(height, epochLen uint64) uint64 {
	if height == 0 || epochLen == 0 {
		return 0
	}
	return (height - 1) / epochLen
}
