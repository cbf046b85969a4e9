package timers

import (
	"math/big"
	"math/bits"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// KV is the slice of chain state the queue needs; *state.Overlay satisfies
// it. Get returns found=false for a missing key. Scan calls fn for every key
// starting with prefix in ascending byte order; fn must not keep key or
// value. The queue never writes from inside a Scan callback.
type KV interface {
	Get(key []byte) (value []byte, found bool, err error)
	Set(key, value []byte)
	Delete(key []byte)
	Scan(prefix []byte, fn func(key, value []byte) error) error
}

// Queue is the timer scheduler. It holds only its parameters; all state is
// in the KV passed to each call, so one Queue serves every block. Methods
// are deterministic functions of (KV contents, arguments, Params).
type Queue struct {
	p Params
}

// New returns a queue with parameters p.
func New(p Params) (*Queue, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Queue{p: p}, nil
}

// Params returns the queue's parameters.
func (q *Queue) Params() Params { return q.p }

// Charge is what scheduling costs the owner: Deposit is held by the
// protocol and refunded on cancel (or when a one-shot timer fires); Burn is
// burned and never refunded. The caller moves the funds.
type Charge struct {
	Deposit *big.Int `json:"deposit"`
	Burn    *big.Int `json:"burn"`
}

// Stats are the queue's counters.
type Stats struct {
	// Height is the last height Due has advanced to.
	Height uint64 `json:"height"`
	// Basefee is the current timer basefee.
	Basefee uint64 `json:"basefee"`
	// Pending timers per tier, and due timers not yet fired.
	Tier1 uint64 `json:"tier1"`
	Tier2 uint64 `json:"tier2"`
	Tier3 uint64 `json:"tier3"`
	Due   uint64 `json:"due"`
}

// Depth is the number of pending timers in all tiers and the due set.
func (s Stats) Depth() uint64 { return s.Tier1 + s.Tier2 + s.Tier3 + s.Due }

// meta is the queue's one header record.
type meta struct {
	_       struct{} `cbor:",toarray"`
	Cursor  uint64   // last height advanced to
	Basefee uint64
	Tier1   uint64
	Tier2   uint64
	Tier3   uint64
	Due     uint64
}

type ownerRecord struct {
	_       struct{} `cbor:",toarray"`
	Pending uint64   // timers of this owner not yet finished
	Nonce   uint64   // next timer nonce; never decreases
}

type tier uint8

const (
	tierDue tier = iota
	tierRing
	tierEpoch
	tierFar
)

func (m *meta) count(t tier) *uint64 {
	switch t {
	case tierRing:
		return &m.Tier1
	case tierEpoch:
		return &m.Tier2
	case tierFar:
		return &m.Tier3
	}
	return &m.Due
}

func (m *meta) depth() uint64 { return m.Tier1 + m.Tier2 + m.Tier3 + m.Due }

// ringEnd and farStart bound the tiers when the queue has advanced to
// cursor: the ring holds targets in (cursor, ringEnd], tier 2 those in
// (ringEnd, farStart], tier 3 the rest. Both saturate at 2^64−1.
func ringEnd(cursor uint64) uint64 { return satAdd(cursor, RingSlots) }
func farStart(cursor uint64) uint64 {
	return satAdd(cursor, RingSlots+EpochBuckets*EpochLength)
}

func satAdd(a, b uint64) uint64 {
	if s, carry := bits.Add64(a, b, 0); carry == 0 {
		return s
	}
	return ^uint64(0)
}

// locate returns where a timer with this target lives when the queue has
// advanced to cursor: targets ≤ cursor are due; the next RingSlots heights
// are in the ring (so ring slots target mod RingSlots never collide); the
// EpochBuckets×EpochLength heights after them in tier 2; the rest in tier 3.
// Tier 2 and 3 keys lead with the target's scheduler epoch, then the target.
func locate(target, cursor uint64, id types.Hash) (tier, []byte) {
	switch {
	case target <= cursor:
		return tierDue, dueKey(target, id)
	case target <= ringEnd(cursor):
		return tierRing, ringKey(byte(target%RingSlots), id)
	case target <= farStart(cursor):
		return tierEpoch, epochKey(target/EpochLength, target, id)
	default:
		return tierFar, farKey(target/EpochLength, target, id)
	}
}
