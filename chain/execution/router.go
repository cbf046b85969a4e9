package execution

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// router maps each instruction kind to the system module that owns it
// (chain/system/...). Modules run their end-of-block steps in the order
// they were registered.
type router struct {
	modules []system.Module
	kinds   map[types.InstructionKind]system.Kind
}

func newRouter(mods ...system.Module) (*router, error) {
	r := &router{modules: mods, kinds: map[types.InstructionKind]system.Kind{}}
	for _, m := range mods {
		for _, k := range m.Kinds() {
			if _, dup := r.kinds[k.Kind]; dup {
				return nil, fmt.Errorf("execution: instruction kind %d registered twice (module %s)", k.Kind, m.Name())
			}
			if k.Handle == nil {
				return nil, fmt.Errorf("execution: module %s registers kind %d without a handler", m.Name(), k.Kind)
			}
			r.kinds[k.Kind] = k
		}
	}
	return r, nil
}

// lookup returns the registration of in's kind, if a module owns it.
func (r *router) lookup(in types.Instruction) (system.Kind, bool) {
	if in == nil {
		return system.Kind{}, false
	}
	k, ok := r.kinds[in.InstructionKind()]
	return k, ok
}

// endBlock runs every module's end-of-block step in a context of its own
// (no transaction, no budget; its events are not recorded).
func (r *router) endBlock(x0 *txExec) error {
	for _, m := range r.modules {
		x := &txExec{ctx: x0.ctx, ex: x0.ex, o: x0.o, env: x0.env, run: &txRun{}, block: x0.block, mailbox: map[types.Address]int{}}
		if err := m.EndBlock(x); err != nil {
			return fmt.Errorf("%s: %w", m.Name(), err)
		}
	}
	return nil
}

// txExec is the system modules' transaction context (system.Tx).
var _ system.Tx = (*txExec)(nil)

func (x *txExec) Context() context.Context { return x.ctx }
func (x *txExec) State() *state.Overlay    { return x.o }
func (x *txExec) Env() system.Env          { return x.env }
func (x *txExec) Transaction() *types.Tx   { return x.tx }

func (x *txExec) Charge(cycles, cells uint64) error { return x.charge(cycles, cells) }

func (x *txExec) Emit(emitter types.Address, ev system.EventData) { x.emit(emitter, ev) }

func (x *txExec) MoveValue(from, to types.Address, v *big.Int) error { return x.moveValue(from, to, v) }

// emit records a typed event in the transaction's receipt.
func (x *txExec) emit(emitter types.Address, ev system.EventData) {
	x.run.events = append(x.run.events, system.Event(emitter, ev))
}

// failureCode is the receipt code of a transaction, timer or callback that
// failed with err.
func failureCode(err error) system.Code {
	if !system.IsFailure(err) && errors.Is(err, types.ErrInsufficientBalance) {
		return system.CodeInsufficientBalance
	}
	return system.CodeOf(err)
}

// markFailed fails rcpt with err and reverts its message records: those
// that had succeeded or were still queued now fail as reverted (why).
func markFailed(rcpt *types.Receipt, records []types.MessageRecord, err error, why string) {
	rcpt.Status, rcpt.Code, rcpt.Error = types.ReceiptFailed, uint32(failureCode(err)), err.Error()
	for i := range records {
		r := &records[i]
		if r.Status == types.ReceiptSuccess || r.Code == uint32(system.CodePending) {
			r.Code, r.Error = uint32(system.CodeReverted), why
		}
		r.Status = types.ReceiptFailed
	}
}
