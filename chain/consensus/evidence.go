package consensus

import (
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Evidence kinds.
const (
	DoubleVote     uint8 = 1 // two votes in one round for different blocks
	DoubleProposal uint8 = 2 // two proposals in one round (proposer equivocation)
)

// SignedHeader is the part of a vote or proposal that evidence needs.
type SignedHeader struct {
	_         struct{} `cbor:",toarray"`
	BlockHash Hash
	Height    uint64
	Round     uint64
	Signature types.Bytes
}

// Evidence proves that Validator signed two conflicting messages of Kind in
// one round. It verifies on its own against the validator's public key, so
// it can be submitted to the slashing logic by anyone.
type Evidence struct {
	_         struct{} `cbor:",toarray"`
	Kind      uint8
	ChainID   uint64
	Validator types.Address
	A, B      SignedHeader
}

// ErrInvalidEvidence is returned by Evidence.Verify.
var ErrInvalidEvidence = errors.New("consensus: invalid evidence")

// Encode returns the canonical encoding.
func (e *Evidence) Encode() []byte { return codec.MustMarshal(e) }

// DecodeEvidence decodes canonical evidence.
func DecodeEvidence(b []byte) (*Evidence, error) {
	var e Evidence
	if err := codec.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidEvidence, err)
	}
	return &e, nil
}

// Verify checks that A and B are distinct messages of the same round, both
// validly signed by pk (the key of e.Validator) on e.ChainID.
func (e *Evidence) Verify(v Verifier, pk PublicKey) error {
	var msg func(uint64, Hash, uint64, uint64) []byte
	switch e.Kind {
	case DoubleVote:
		msg = VoteMessage
	case DoubleProposal:
		msg = ProposalMessage
	default:
		return fmt.Errorf("%w: kind %d", ErrInvalidEvidence, e.Kind)
	}
	if e.A.Round != e.B.Round {
		return fmt.Errorf("%w: rounds %d and %d differ", ErrInvalidEvidence, e.A.Round, e.B.Round)
	}
	if e.A.BlockHash == e.B.BlockHash && e.A.Height == e.B.Height {
		return fmt.Errorf("%w: messages do not conflict", ErrInvalidEvidence)
	}
	for _, s := range []SignedHeader{e.A, e.B} {
		if !v.Verify(pk, msg(e.ChainID, s.BlockHash, s.Height, s.Round), s.Signature) {
			return fmt.Errorf("%w: %w", ErrInvalidEvidence, ErrInvalidSignature)
		}
	}
	return nil
}

// ordered returns the evidence with A < B by hash so that both orders of
// discovery give the same bytes.
func newEvidence(kind uint8, chainID uint64, val types.Address, a, b SignedHeader) Evidence {
	if string(b.BlockHash[:]) < string(a.BlockHash[:]) || (a.BlockHash == b.BlockHash && b.Height < a.Height) {
		a, b = b, a
	}
	return Evidence{Kind: kind, ChainID: chainID, Validator: val, A: a, B: b}
}
