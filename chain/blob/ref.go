package blob

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// InlineMax is the inline cap (spec 002 §7.1): an output of more bytes
// must be a blob.
const InlineMax = 64 << 10

// Costs of the host ops. blob_commit is 40 cycles per KiB of the blob,
// a started KiB counting whole (spec 002 §3.5 "host: blob commit (per
// KiB)"), plus the record's bytes as cells (a state write); blob_get is
// priced as a balance read.
const (
	CommitCyclesPerKiB = 40
	GetCycles          = 100
	// MaxPathLen bounds a locator's path.
	MaxPathLen = 1024
)

// CommitCycles is the cycle charge of committing a blob of size bytes.
func CommitCycles(size uint64) uint64 {
	return CommitCyclesPerKiB * ((size + 1023) / 1024)
}

// Ref is what the chain stores about a blob: its multihash, its size and
// where to fetch it (a CBFS volume and path; both optional, the
// multihash alone identifies the content).
type Ref struct {
	Multihash Multihash  `cbor:"multihash" json:"multihash"`
	Size      uint64     `cbor:"size" json:"size"`
	Volume    types.Hash `cbor:"volume" json:"volume"` // zero: no locator
	Path      string     `cbor:"path" json:"path"`
}

// Check validates a reference.
func (r *Ref) Check() error {
	if _, err := Parse(r.Multihash); err != nil {
		return err
	}
	if r.Size == 0 {
		return fmt.Errorf("%w: size must be positive", ErrMalformed)
	}
	if len(r.Path) > MaxPathLen {
		return fmt.Errorf("%w: path longer than %d bytes", ErrMalformed, MaxPathLen)
	}
	return nil
}

// Record is a committed blob: the reference, the actor that committed
// it and the height.
type Record struct {
	Ref
	Actor  types.Address `cbor:"actor" json:"actor"`
	Height uint64        `cbor:"height" json:"height"`
}

// Encode is the record's canonical CBOR.
func (r *Record) Encode() []byte { return codec.MustMarshal(r) }

// Key is the state key of actor's commitment of m.
func Key(actor types.Address, m Multihash) []byte {
	return state.Key(state.PrefixChain, []byte("blob/"), actor[:], m)
}

// Read returns actor's record of m (nil if none).
func Read(r interface {
	Get([]byte) ([]byte, bool, error)
}, actor types.Address, m Multihash) (*Record, error) {
	raw, ok, err := r.Get(Key(actor, m))
	if err != nil || !ok {
		return nil, err
	}
	var rec Record
	if err := codec.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("blob: record %s: %w", m.Hex(), err)
	}
	return &rec, nil
}

// TopicBlobCommitted is the event an actor's blob commit emits.
const TopicBlobCommitted = "BlobCommitted"

// CommittedEvent is the data of BlobCommitted (emitted by the actor).
type CommittedEvent struct {
	Ref
}

// Topic implements system.EventData.
func (*CommittedEvent) Topic() string { return TopicBlobCommitted }

// Decode reads a record's canonical CBOR.
func (r *Record) Decode(b []byte) error { return codec.Unmarshal(b, r) }
