package timers

import (
	"errors"
	"fmt"
	"math/big"
	"unicode/utf8"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Errors. Callers test them with errors.Is; every returned error wraps one.
var (
	ErrNotFound   = errors.New("timers: no such timer")
	ErrNotOwner   = errors.New("timers: timer belongs to another actor")
	ErrInvalid    = errors.New("timers: invalid timer")
	ErrCapReached = errors.New("timers: per-actor timer cap reached")
	ErrHeightFull = errors.New("timers: same-height surcharge beyond limit")
	ErrNotDue     = errors.New("timers: timer is not due")
	ErrCorrupt    = errors.New("timers: corrupt timer state")
)

// Timer is one scheduled timer, the record stored at RecordKey(ID). It
// encodes itself as a canonical CBOR array in field order.
type Timer struct {
	_ struct{} `cbor:",toarray"`
	// ID is derived by Schedule (see TimerID); ignored on input.
	ID types.Hash `json:"id"`
	// Owner is the actor that scheduled the timer and pays for it.
	Owner types.Address `json:"owner"`
	// Handler is the name of the owner's handler the timer message calls.
	Handler string `json:"handler"`
	// Data is the handler argument: one canonical CBOR item (nil: none).
	Data []byte `json:"data"`
	// Target is the height at which the timer is next due.
	Target uint64 `json:"target"`
	// Interval is the period of a set_interval timer; 0 for one-shot.
	Interval uint64 `json:"interval"`
	// Deposit is held while the timer is pending and returned when it is
	// cancelled or a one-shot timer fires; set by Schedule.
	Deposit *big.Int `json:"deposit"`
	// GBA is the Gas Bidding Agent asked for fee params when the timer is
	// due; nil means the network default bid (DefaultBid).
	GBA *types.Address `json:"gba"`
	// Deferrals counts the blocks in which the timer was due but not run
	// since it last became due; it drives the anti-starvation boost.
	Deferrals uint64 `json:"deferrals"`
	// CreatedAt is the height of the block that scheduled the timer.
	CreatedAt uint64 `json:"created_at"`
}

// TimerID derives a timer id:
//
//	keccak256(owner[20] ‖ nonce_be8 ‖ height_be8 ‖ handler)
//
// nonce is the owner's timer nonce (starting at 0, incremented by every
// Schedule, never reused), height the first target height and handler the
// UTF-8 handler name. The nonce alone makes ids unique per owner.
func TimerID(owner types.Address, nonce, height uint64, handler string) types.Hash {
	return types.Keccak256(owner[:], be8(nonce), be8(height), []byte(handler))
}

// Encode returns the canonical CBOR encoding of the record.
func (t *Timer) Encode() ([]byte, error) {
	if t.Deposit == nil {
		return nil, fmt.Errorf("%w: nil deposit", ErrInvalid)
	}
	b, err := codec.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("timers: encode timer %s: %w", t.ID, err)
	}
	return b, nil
}

// DecodeTimer decodes a canonical record and checks its invariants.
func DecodeTimer(b []byte) (Timer, error) {
	var t Timer
	if err := codec.Unmarshal(b, &t); err != nil {
		return Timer{}, fmt.Errorf("%w: decode: %v", ErrCorrupt, err)
	}
	if err := checkRecord(&t); err != nil {
		return Timer{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return t, nil
}

// Clone returns a deep copy.
func (t Timer) Clone() Timer {
	c := t
	c.Data = append([]byte(nil), t.Data...)
	if t.Data == nil {
		c.Data = nil
	}
	if t.Deposit != nil {
		c.Deposit = new(big.Int).Set(t.Deposit)
	}
	if t.GBA != nil {
		g := *t.GBA
		c.GBA = &g
	}
	return c
}

// checkRecord checks the invariants every stored record satisfies.
func checkRecord(t *Timer) error {
	switch {
	case t.Handler == "" || !utf8.ValidString(t.Handler):
		return fmt.Errorf("%w: empty or non-UTF-8 handler", ErrInvalid)
	case t.Target == 0:
		return fmt.Errorf("%w: zero target height", ErrInvalid)
	case t.Deposit == nil || t.Deposit.Sign() < 0:
		return fmt.Errorf("%w: negative or missing deposit", ErrInvalid)
	}
	if len(t.Data) > 0 {
		if err := codec.Valid(t.Data); err != nil {
			return fmt.Errorf("%w: data is not one canonical CBOR item: %v", ErrInvalid, err)
		}
	}
	return nil
}

// checkLimits validates the sizes a caller controls against p.
func checkLimits(t *Timer, p Params) error {
	switch {
	case len(t.Handler) > p.MaxHandlerBytes:
		return fmt.Errorf("%w: handler %d bytes > %d", ErrInvalid, len(t.Handler), p.MaxHandlerBytes)
	case len(t.Data) > p.MaxDataBytes:
		return fmt.Errorf("%w: data %d bytes > %d", ErrInvalid, len(t.Data), p.MaxDataBytes)
	}
	return nil
}
