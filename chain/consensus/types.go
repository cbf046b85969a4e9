package consensus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Hash is a 32-byte block hash.
type Hash = types.Hash

// Errors returned for invalid input. They are wrapped with detail; test with
// errors.Is.
var (
	ErrInvalidMessage   = errors.New("consensus: invalid message")
	ErrInvalidSignature = errors.New("consensus: invalid signature")
	ErrInvalidQC        = errors.New("consensus: invalid quorum certificate")
	ErrInvalidBlock     = errors.New("consensus: invalid block")
	ErrNotProposer      = errors.New("consensus: not the proposer of this round")
)

// Bitmap is a signer set: bit i (LSB first within each byte) is validator i.
// A valid bitmap for n validators has exactly ceil(n/8) bytes and no bits
// set at or above n.
type Bitmap = types.Bytes

// NewBitmap returns an empty bitmap for n validators.
func NewBitmap(n int) Bitmap { return make(Bitmap, (n+7)/8) }

func bitSet(b Bitmap, i int)      { b[i/8] |= 1 << (i % 8) }
func bitHas(b Bitmap, i int) bool { return i/8 < len(b) && b[i/8]&(1<<(i%8)) != 0 }
func bitCount(b Bitmap) int {
	n := 0
	for _, x := range b {
		n += bits.OnesCount8(x)
	}
	return n
}
func bitValid(b Bitmap, n int) bool {
	if len(b) != (n+7)/8 {
		return false
	}
	if n%8 != 0 && len(b) > 0 && b[len(b)-1]>>(n%8) != 0 {
		return false
	}
	return true
}

// Block is what consensus orders: the consensus fields plus an opaque
// application payload (for the node, an encoded block body; see
// docs/CONSENSUS.md). See Hash for its identity.
type Block struct {
	_         struct{}      `cbor:",toarray"`
	Height    uint64        // parent height + 1
	Round     uint64        // round it was proposed in, > Justify.Round
	Parent    Hash          // == Justify.BlockHash
	Proposer  types.Address // Leader(Round)
	VRFOutput Hash          // vrf.Output(VRFProof)
	VRFProof  types.Bytes   // proposer's BLS signature over vrf.Message(seed, Height)
	Justify   QC            // QC of the parent
	Payload   types.Bytes   // application data
}

// Hash is the block's identity, the hash that votes and QCs sign:
// keccak256 of the canonical encoding of its BlockID, which has the
// consensus fields and keccak256(Payload) instead of the payload. A light
// client can check a QC from the consensus fields and the payload hash
// alone.
func (b *Block) Hash() Hash { return types.Keccak256(codec.MustMarshal(b.ID())) }

// BlockID is what a block hash covers.
type BlockID struct {
	_           struct{} `cbor:",toarray"`
	Height      uint64
	Round       uint64
	Parent      Hash
	Proposer    types.Address
	VRFOutput   Hash
	VRFProof    types.Bytes
	Justify     QC
	PayloadHash Hash
}

// ID returns the fields the block hash covers.
func (b *Block) ID() BlockID {
	return BlockID{
		Height: b.Height, Round: b.Round, Parent: b.Parent, Proposer: b.Proposer, VRFOutput: b.VRFOutput,
		VRFProof: b.VRFProof, Justify: b.Justify, PayloadHash: types.Keccak256(b.Payload),
	}
}

// QC is a quorum certificate: 2f+1 stake signed VoteMessage(BlockHash,
// Height, Round) and their signatures were aggregated. The root QC
// (Round 0) certifies the genesis block and carries no signature.
type QC struct {
	_         struct{} `cbor:",toarray"`
	BlockHash Hash
	Height    uint64
	Round     uint64
	Signers   Bitmap
	Signature types.Bytes // aggregate
}

// Vote is a validator's signature over VoteMessage(BlockHash, Height, Round).
type Vote struct {
	_         struct{} `cbor:",toarray"`
	BlockHash Hash
	Height    uint64
	Round     uint64
	Voter     uint32 // index in the validator set
	Signature types.Bytes
}

// Proposal (PROPOSE) is a block signed by the round's proposer over
// ProposalMessage(hash, height, round). A block whose round does not
// directly follow its Justify round must come with the timeout certificate
// of the previous round.
type Proposal struct {
	_         struct{} `cbor:",toarray"`
	Block     Block
	TC        *TC
	Signature types.Bytes
}

// NewView (NEW_VIEW) says the voter timed out in Round; it carries the
// voter's highest QC. The signature covers TimeoutMessage(Round,
// HighQC.Round), so that 2f+1 of them aggregate into a TC.
type NewView struct {
	_         struct{} `cbor:",toarray"`
	Round     uint64
	HighQC    QC
	Voter     uint32
	Signature types.Bytes
}

// TC is a timeout certificate: 2f+1 stake timed out in Round.
// HighQCRounds[i] is the highest-QC round reported by the i-th signer (in
// bitmap order); Signature aggregates their TimeoutMessages.
type TC struct {
	_            struct{} `cbor:",toarray"`
	Round        uint64
	Signers      Bitmap
	HighQCRounds []uint64
	Signature    types.Bytes
}

// MaxHighQCRound is the highest QC round reported in the TC.
func (tc *TC) MaxHighQCRound() uint64 {
	var m uint64
	for _, r := range tc.HighQCRounds {
		m = max(m, r)
	}
	return m
}

// Fetch asks a peer for the block with Hash and up to Depth of its
// ancestors (block sync; not one of the three normative messages).
type Fetch struct {
	_     struct{} `cbor:",toarray"`
	Hash  Hash
	Depth uint32
}

// Message is the wire envelope; exactly one field is set.
type Message struct {
	_        struct{} `cbor:",toarray"`
	Proposal *Proposal
	Vote     *Vote
	NewView  *NewView
	Fetch    *Fetch
	Blocks   []Block // answer to Fetch, child first
}

// Encode returns the canonical encoding of m.
func (m *Message) Encode() []byte { return codec.MustMarshal(m) }

// DecodeMessage decodes a canonical message and checks that exactly one
// field is set.
func DecodeMessage(b []byte) (*Message, error) {
	var m Message
	if err := codec.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidMessage, err)
	}
	n := 0
	for _, set := range []bool{m.Proposal != nil, m.Vote != nil, m.NewView != nil, m.Fetch != nil, m.Blocks != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("%w: %d bodies", ErrInvalidMessage, n)
	}
	return &m, nil
}

// Record is one write-ahead-log entry: something this validator signed.
// Exactly one of Vote (with the Justify QC of the block voted for),
// Timeout and Proposal is set.
type Record struct {
	_        struct{} `cbor:",toarray"`
	Vote     *Vote
	Justify  *QC
	Timeout  *NewView
	Proposal *Proposal
}

// Round is the round the record belongs to.
func (r *Record) Round() uint64 {
	switch {
	case r.Vote != nil:
		return r.Vote.Round
	case r.Timeout != nil:
		return r.Timeout.Round
	case r.Proposal != nil:
		return r.Proposal.Block.Round
	}
	return 0
}

// Encode returns the canonical encoding of r.
func (r *Record) Encode() []byte { return codec.MustMarshal(r) }

// DecodeRecord decodes a canonical WAL record.
func DecodeRecord(b []byte) (*Record, error) {
	var r Record
	if err := codec.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("consensus: decode WAL record: %w", err)
	}
	return &r, nil
}

// Signing domains. Every signed message starts with its tag and the chain
// ID, so a signature is valid for one purpose on one chain only.
const (
	tagVote     = "cowboy/vote/v1"
	tagProposal = "cowboy/propose/v1"
	tagTimeout  = "cowboy/timeout/v1"
)

func signBytes(tag string, chainID uint64, fields ...[]byte) []byte {
	b := make([]byte, 0, 96)
	b = append(b, tag...)
	b = binary.BigEndian.AppendUint64(b, chainID)
	for _, f := range fields {
		b = append(b, f...)
	}
	return b
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// VoteMessage is what a vote signs: tag || chain || block_hash || height ||
// round (big-endian), the QC domain of §6.1.
func VoteMessage(chainID uint64, h Hash, height, round uint64) []byte {
	return signBytes(tagVote, chainID, h[:], u64(height), u64(round))
}

// ProposalMessage is what a proposer signs.
func ProposalMessage(chainID uint64, h Hash, height, round uint64) []byte {
	return signBytes(tagProposal, chainID, h[:], u64(height), u64(round))
}

// TimeoutMessage is what a NEW_VIEW signs.
func TimeoutMessage(chainID uint64, round, highQCRound uint64) []byte {
	return signBytes(tagTimeout, chainID, u64(round), u64(highQCRound))
}

// EpochDomain is the signing domain (the Config.ChainID) of an epoch's
// core: the chain ID itself for the first epoch, a hash of chain ID and
// epoch number after. Every signed message, QC and evidence of an epoch is
// bound to it, so messages of one validator set can never be mistaken for
// another's, even when the keys are the same.
func EpochDomain(chainID, epoch uint64) uint64 {
	if epoch == 0 {
		return chainID
	}
	h := types.Keccak256([]byte("cowboy/epoch-domain/v1"), u64(chainID), u64(epoch))
	return binary.BigEndian.Uint64(h[:8])
}
