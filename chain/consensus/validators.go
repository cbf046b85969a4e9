package consensus

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Validator is one member of an epoch's validator set.
type Validator struct {
	_       struct{} `cbor:",toarray"`
	Address types.Address
	PubKey  types.Bytes // BLS12-381 G1, compressed; proof of possession checked at registration
	Stake   uint64
}

// ValidatorSet is an epoch's validators in a fixed order (the order of the
// signer bitmaps) with their parsed keys. Voting weight is stake: a quorum
// is more than two thirds of the total stake, so any two quorums overlap in
// more than one third of the stake, which contains honest stake whenever
// byzantine stake is below one third.
type ValidatorSet struct {
	vals   []Validator
	keys   []PublicKey
	index  map[types.Address]int
	total  uint64
	quorum uint64
	cum    []uint64 // cumulative stake, for sampling
}

// NewValidatorSet parses the keys and computes the quorum. Stakes must be
// positive and sum without overflow; addresses must be distinct.
func NewValidatorSet(vals []Validator, v Verifier) (*ValidatorSet, error) {
	if len(vals) == 0 {
		return nil, fmt.Errorf("consensus: empty validator set")
	}
	s := &ValidatorSet{vals: append([]Validator(nil), vals...), index: map[types.Address]int{}}
	for i, val := range vals {
		if val.Stake == 0 {
			return nil, fmt.Errorf("consensus: validator %s has no stake", val.Address)
		}
		if _, dup := s.index[val.Address]; dup {
			return nil, fmt.Errorf("consensus: duplicate validator %s", val.Address)
		}
		k, err := v.ParsePublicKey(val.PubKey)
		if err != nil {
			return nil, fmt.Errorf("consensus: validator %s key: %w", val.Address, err)
		}
		var carry uint64
		s.total, carry = bits.Add64(s.total, val.Stake, 0)
		if carry != 0 {
			return nil, fmt.Errorf("consensus: total stake overflows")
		}
		s.index[val.Address] = i
		s.keys = append(s.keys, k)
		s.cum = append(s.cum, s.total)
	}
	// quorum = floor(2*total/3) + 1 without overflow.
	s.quorum = s.total/3*2 + (s.total%3)*2/3 + 1
	return s, nil
}

// Len is the number of validators.
func (s *ValidatorSet) Len() int { return len(s.vals) }

// Validator returns validator i.
func (s *ValidatorSet) Validator(i int) Validator { return s.vals[i] }

// Key returns the parsed key of validator i.
func (s *ValidatorSet) Key(i int) PublicKey { return s.keys[i] }

// Index returns the position of addr, or -1.
func (s *ValidatorSet) Index(addr types.Address) int {
	if i, ok := s.index[addr]; ok {
		return i
	}
	return -1
}

// TotalStake is the sum of all stakes.
func (s *ValidatorSet) TotalStake() uint64 { return s.total }

// Quorum is the smallest stake that is more than two thirds of the total.
func (s *ValidatorSet) Quorum() uint64 { return s.quorum }

// maxFaulty is the largest stake that cannot contain a full quorum's
// complement: total - quorum. Stake above it includes an honest validator.
func (s *ValidatorSet) maxFaulty() uint64 { return s.total - s.quorum }

// bitmapStake sums the stake of a valid bitmap.
func (s *ValidatorSet) bitmapStake(b Bitmap) (uint64, bool) {
	if !bitValid(b, len(s.vals)) {
		return 0, false
	}
	var st uint64
	for i := range s.vals {
		if bitHas(b, i) {
			st += s.vals[i].Stake
		}
	}
	return st, true
}

// leaderWindow bounds the recursion of Leader: rotation (a proposer never
// follows itself) is exact inside a window of this many rounds and holds
// across a window boundary except with probability ≈ the square of the
// boundary proposer's stake share.
const leaderWindow = 256

// sample draws validator index from stake weights with keccak(seed, round,
// attempt); skip is excluded (redrawing) when the set has more than one
// validator.
func (s *ValidatorSet) sample(seed types.Hash, round uint64, skip int) int {
	for attempt := uint64(0); ; attempt++ {
		var buf [16]byte
		binary.BigEndian.PutUint64(buf[:8], round)
		binary.BigEndian.PutUint64(buf[8:], attempt)
		h := types.Keccak256([]byte("cowboy/leader/v1"), seed[:], buf[:])
		x := binary.BigEndian.Uint64(h[:8])
		target, _ := bits.Mul64(x, s.total) // uniform in [0, total)
		i := 0
		lo, hi := 0, len(s.cum)
		for lo < hi { // first i with cum[i] > target
			mid := (lo + hi) / 2
			if s.cum[mid] > target {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		i = lo
		if i != skip || len(s.vals) == 1 {
			return i
		}
	}
}

// Leader returns the index of the proposer of round, drawn by stake from
// the epoch seed and never equal to the proposer of round-1 (mandatory
// rotation; see leaderWindow). It computes the round's whole window (256
// hashes); callers asking for many rounds should cache LeaderWindow, as the
// Core does.
func (s *ValidatorSet) Leader(seed types.Hash, round uint64) int {
	base := round - round%leaderWindow
	return s.LeaderWindow(seed, base)[round-base]
}

// LeaderWindow returns the proposers of the leaderWindow rounds starting at
// base (a multiple of leaderWindow), for callers that cache schedules.
func (s *ValidatorSet) LeaderWindow(seed types.Hash, base uint64) []int {
	out := make([]int, leaderWindow)
	prev := -1
	for i := range out {
		prev = s.sample(seed, base+uint64(i), prev)
		out[i] = prev
	}
	return out
}

// VerifyQC checks a quorum certificate of a block other than the root
// against the set: quorum stake in the bitmap and a valid aggregate
// signature over VoteMessage. Nodes use it outside a Core, for block sync.
func (s *ValidatorSet) VerifyQC(chainID uint64, v Verifier, qc *QC) error {
	if qc.Round == 0 {
		return fmt.Errorf("%w: round 0", ErrInvalidQC)
	}
	st, ok := s.bitmapStake(qc.Signers)
	if !ok || st < s.quorum {
		return fmt.Errorf("%w: signers below quorum", ErrInvalidQC)
	}
	var pks []PublicKey
	for i := range s.vals {
		if bitHas(qc.Signers, i) {
			pks = append(pks, s.keys[i])
		}
	}
	if !v.VerifyAggregate(pks, [][]byte{VoteMessage(chainID, qc.BlockHash, qc.Height, qc.Round)}, qc.Signature) {
		return fmt.Errorf("%w: %w", ErrInvalidQC, ErrInvalidSignature)
	}
	return nil
}

// Verify checks that p proves block b final under the finality rule: the
// child extends b (or the last block of Via, which descends from b) with a
// QC of it, was proposed in the next round, and is itself certified by a
// valid QC.
func (p *FinalityProof) Verify(chainID uint64, s *ValidatorSet, v Verifier, b *Block) error {
	h, height, round := b.Hash(), b.Height, b.Round
	for i := range p.Via {
		d := &p.Via[i]
		if d.Parent != h || d.Height != height+1 {
			return fmt.Errorf("%w: finality proof: path does not descend from the block", ErrInvalidBlock)
		}
		h, height, round = types.Keccak256(codec.MustMarshal(d)), d.Height, d.Round
	}
	c := &p.Child
	if c.Parent != h || c.Justify.BlockHash != h || c.Justify.Height != height || c.Justify.Round != round {
		return fmt.Errorf("%w: finality proof: child does not extend the block", ErrInvalidBlock)
	}
	if c.Height != height+1 || c.Round != round+1 {
		return fmt.Errorf("%w: finality proof: child not in the next round", ErrInvalidBlock)
	}
	ch := types.Keccak256(codec.MustMarshal(c))
	if p.ChildQC.BlockHash != ch || p.ChildQC.Height != c.Height || p.ChildQC.Round != c.Round {
		return fmt.Errorf("%w: finality proof: QC is not the child's", ErrInvalidQC)
	}
	if round > 0 {
		if err := s.VerifyQC(chainID, v, &c.Justify); err != nil {
			return err
		}
	}
	return s.VerifyQC(chainID, v, &p.ChildQC)
}
