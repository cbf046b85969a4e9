// Package system is the contract between the block executor
// (chain/execution) and the system actors (chain/system/...): the Module
// interface a system actor implements, the transaction context Tx through
// which its handlers see the state, meters, block environment and event
// sink, and the deterministic Failure a handler returns when a transaction
// fails on its own merits.
//
// A system actor owns its instruction kinds (registered as Kinds: target
// address, stateless check, handler), its state keys and records with their
// read functions, its end-of-block step and its events. It imports only
// this package and the lower layers (state, types, codec, consensus
// primitives) plus the system actors it depends on, in one direction.
package system

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Env is what a block contributes besides its transactions.
type Env struct {
	Height    uint64
	Timestamp uint64 // milliseconds
	Proposer  types.Address
	Seed      types.Hash // randomness seed: the parent's VRF beacon value R_{n-1} (the parent hash on a --dev chain)
	// Signers is the signer bitmap of the QC certifying the parent (who
	// voted for it), in the order of the epoch's members; nil on a --dev
	// chain. The Validator Registry counts missed votes from it.
	Signers types.Bytes
}

// Tx is the execution context of one transaction, or of a module's
// end-of-block step (then Transaction returns nil and Charge has no budget).
type Tx interface {
	Context() context.Context
	// State is the block's overlay; a failed transaction's writes are
	// reverted by the executor.
	State() *state.Overlay
	Env() Env
	// Transaction is the transaction being executed; nil in an end-of-block step.
	Transaction() *types.Tx
	// Charge meters execution beyond the intrinsic cost; it fails with
	// OutOfCycles/OutOfCells past the transaction's limits.
	Charge(cycles, cells uint64) error
	// Emit records an event in the transaction's receipt, its data in
	// canonical CBOR.
	Emit(emitter types.Address, ev EventData)
	// MoveValue moves native value between accounts; an overdraft is a
	// Failure.
	MoveValue(from, to types.Address, v *big.Int) error
}

// Handler executes one instruction sent by from. The returned bytes are
// the receipt's return value.
type Handler func(x Tx, from types.Address, in types.Instruction) ([]byte, error)

// Kind registers one instruction kind with the module that owns it.
type Kind struct {
	Kind types.InstructionKind
	// Check is the kind's stateless check beyond the transaction's own
	// (target address, value): it runs in CheckTx, before any state is read.
	Check func(tx *types.Tx, in types.Instruction) error
	// Handle executes the instruction.
	Handle Handler
}

// Module is a system actor plugged into the executor.
type Module interface {
	// Name names the module in errors ("validators", "storage", …).
	Name() string
	// Kinds are the instruction kinds the module owns.
	Kinds() []Kind
	// EndBlock is the module's end-of-block step, run after the
	// transactions, the timers and the job lane, in registration order.
	EndBlock(x Tx) error
}

// Failure is a deterministic failure of an instruction: the transaction
// fails with a receipt instead of failing the block. The receipt commits
// to Code; the message is the human-readable text served beside it.
type Failure struct {
	Code Code
	msg  string
}

func (e *Failure) Error() string { return e.msg }

// Failf returns a Failure with code and a formatted message.
func Failf(code Code, format string, args ...any) error {
	return &Failure{Code: code, msg: fmt.Sprintf(format, args...)}
}

// CodeOf is the code of a failure: err's Failure code, CodeFailed for any
// other error, CodeOK for nil.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
	}
	var f *Failure
	if errors.As(err, &f) {
		return f.Code
	}
	return CodeFailed
}

// IsFailure reports whether err is (or wraps) a Failure.
func IsFailure(err error) bool {
	var f *Failure
	return errors.As(err, &f)
}

// EventData is a typed event: a struct whose fields, encoded as a CBOR
// map, are the event's data. Each module defines its events and their
// topic constants (events.go).
type EventData interface {
	Topic() string
}

// Event builds the receipt's event record of ev.
func Event(emitter types.Address, ev EventData) types.Event {
	return types.Event{Emitter: emitter, Topic: ev.Topic(), Data: codec.MustMarshal(ev)}
}

// BE8 is the 8-byte big-endian encoding of v, used in state keys so that
// they sort by number.
func BE8(v uint64) []byte {
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}

// ActorOwnerKey is the reserved actor storage key under which the chain
// records an actor's owner (its deployer, CBOR bytes); actor code cannot
// write it.
const ActorOwnerKey = "__OWNER__"

// FromBE8 is the number of a big-endian key part (BE8's inverse; shorter
// input reads as its value, longer as its last 8 bytes' overflowed value).
func FromBE8(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

// ErrStopScan ends a state.Reader Scan early without an error: return it
// from the callback and treat it as success.
var ErrStopScan = errors.New("stop scan")

// Key is a system actor's state key: the system prefix, the actor's
// address, then parts.
func Key(actor types.Address, parts ...[]byte) []byte {
	return state.Key(state.PrefixSystem, append([][]byte{actor[:]}, parts...)...)
}

// Get decodes the record at key (canonical CBOR) into a new T; nil if
// there is none. A record that does not decode is an error formatted from
// format and args, with the decoding error appended (": %w").
func Get[T any](r state.Reader, key []byte, format string, args ...any) (*T, error) {
	b, ok, err := r.Get(key)
	if err != nil || !ok {
		return nil, err
	}
	v := new(T)
	if err := codec.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf(format+": %w", append(args, err)...)
	}
	return v, nil
}

// ScanKeys returns the keys under prefix, copied.
func ScanKeys(r state.Reader, prefix []byte) ([][]byte, error) {
	var ks [][]byte
	err := r.Scan(prefix, func(k, _ []byte) error {
		ks = append(ks, append([]byte(nil), k...))
		return nil
	})
	return ks, err
}
