package actors

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// failf is a deterministic failure of an actor instruction; its text goes
// into the receipt.
func failf(code system.Code, format string, args ...any) error {
	return system.Failf(code, format, args...)
}

// UnresolvedImport formats the deploy failure of seed 000 §4.
func UnresolvedImport(name string, deployer types.Address) error {
	return failf(system.CodeUnresolvedImport, "UnresolvedImport { name: %q }: no library named %q published under deployer account %s", name, name, deployer)
}

// Exec carries one transaction's execution.
type Exec struct {
	ctx    context.Context
	rt     *Runtime
	o      *state.Overlay
	env    system.Env
	tx     *types.Tx
	origin types.Address
	run    *Meter
	block  *BlockMeters

	queue     []*queuedMsg
	records   []types.MessageRecord
	mailbox   map[types.Address]int
	readOnly  bool
	deploying bool // running the deploy-time init handler
	// failedMsg is the record index FailedMessage reports; -1: none.
	failedMsg int
	// guards are the reentrancy guards held in the current call chain
	// (reentrancy.go).
	guards map[guard]struct{}
}

type queuedMsg struct {
	rec     int // index into records
	from    types.Address
	to      types.Address
	handler string
	payload []byte
	value   *big.Int
	depth   int
}

// BlockMeters tracks per-actor cycles across a block (§12.1).
type BlockMeters struct {
	actorCycles map[types.Address]uint64
}

func (m *BlockMeters) clone() *BlockMeters {
	c := &BlockMeters{actorCycles: make(map[types.Address]uint64, len(m.actorCycles))}
	for a, v := range m.actorCycles {
		c.actorCycles[a] = v
	}
	return c
}

func (x *Exec) charge(cycles, cells uint64) error {
	x.run.Cycles += cycles
	x.run.Cells += cells
	if x.run.Cycles > x.run.CyclesLimit {
		return failf(system.CodeOutOfCycles, "OutOfCycles: out of cycles")
	}
	if x.run.Cells > x.run.CellsLimit {
		return failf(system.CodeOutOfCells, "OutOfCells: out of cells")
	}
	return nil
}

func (x *Exec) moveValue(from, to types.Address, v *big.Int) error {
	if err := x.o.SubBalance(from, v); err != nil {
		return failf(system.CodeInsufficientBalance, "%v", err)
	}
	return x.o.AddBalance(to, v)
}

// errInfra marks failures of the node itself (not of the transaction); they
// abort block execution instead of producing a receipt.
var errInfra = errors.New("infrastructure failure")

func isActorError(err error) bool { return system.IsFailure(err) }

// Meter tracks one execution's meters and its events.
type Meter struct {
	Cycles, Cells           uint64
	CyclesLimit, CellsLimit uint64
	Events                  []types.Event
}

// NewBlockMeters returns the meters of a block with nothing run yet.
func NewBlockMeters() *BlockMeters {
	return &BlockMeters{actorCycles: map[types.Address]uint64{}}
}

// Clone returns a copy of m (to restore after a transaction left out).
func (m *BlockMeters) Clone() *BlockMeters { return m.clone() }

// NewExec returns the execution of one transaction (tx; nil for a timer, a
// callback or an end-of-block step) started by origin, metered by m (nil
// for a context that only carries the block) and, for the per-actor block
// budget, by block (nil: no block budget).
func (rt *Runtime) NewExec(ctx context.Context, o *state.Overlay, env system.Env, tx *types.Tx, origin types.Address, m *Meter, block *BlockMeters) *Exec {
	return &Exec{ctx: ctx, rt: rt, o: o, env: env, tx: tx, origin: origin, run: m, block: block, mailbox: map[types.Address]int{}, failedMsg: -1}
}

// Runtime returns the runtime x runs on.
func (x *Exec) Runtime() *Runtime { return x.rt }

// Meter returns x's meters.
func (x *Exec) Meter() *Meter { return x.run }

// Block returns the block's per-actor meters.
func (x *Exec) Block() *BlockMeters { return x.block }

// ReadOnly reports whether x is a read-only query.
func (x *Exec) ReadOnly() bool { return x.readOnly }

// FailedMessage is the index of the message whose failure the receipt
// reports (types.Receipt.FailedMessage), nil when no message failed.
func (x *Exec) FailedMessage() *uint64 {
	if x.failedMsg < 0 {
		return nil
	}
	i := uint64(x.failedMsg)
	return &i
}

// Records returns the records of the messages x's handlers sent.
func (x *Exec) Records() []types.MessageRecord { return x.records }

// AppendEvent records a raw event in x's receipt.
func (x *Exec) AppendEvent(ev types.Event) { x.run.Events = append(x.run.Events, ev) }

// Mark is a point of an execution to roll back to.
type Mark struct {
	snap                   int
	events, queue, records int
}

// Mark returns the current point of x: its state, events and messages.
func (x *Exec) Mark() Mark {
	return Mark{snap: x.o.Snapshot(), events: len(x.run.Events), queue: len(x.queue), records: len(x.records)}
}

// Rollback undoes everything x did since m.
func (x *Exec) Rollback(m Mark) {
	x.o.RevertTo(m.snap)
	x.run.Events, x.queue, x.records = x.run.Events[:m.events], x.queue[:m.queue], x.records[:m.records]
}

// Invoke runs handler of actor as a top-level message from caller (a
// timer's owner, a callback's actor), then delivers the messages it sent.
func (x *Exec) Invoke(actor, caller types.Address, value *big.Int, handler string, payload []byte) ([]byte, error) {
	ret, err := x.invoke(actor, caller, value, handler, payload, false, 0, -1)
	if err != nil {
		return ret, err
	}
	return ret, x.deliver()
}

// Deploy runs a Deploy instruction sent by from.
func (x *Exec) Deploy(from types.Address, d *types.Deploy) (*types.Address, []byte, error) {
	return x.deploy(from, d)
}

// Call runs a Call instruction sent by from to actor to.
func (x *Exec) Call(from, to types.Address, c *types.Call) ([]byte, error) {
	return x.call(from, to, c)
}

// PublishLibrary runs a PublishLibrary instruction sent by from.
func (x *Exec) PublishLibrary(from types.Address, p *types.PublishLibrary) error {
	return x.publishLibrary(from, p)
}

// RemoveLibrary runs a RemoveLibrary instruction sent by from.
func (x *Exec) RemoveLibrary(from types.Address, r *types.RemoveLibrary) error {
	return x.removeLibrary(from, r)
}

// Query runs a handler read-only against r: no state change, no fee, at
// most cycles cycles. It returns the canonical CBOR result and the cycles used.
func (rt *Runtime) Query(ctx context.Context, r state.Reader, env system.Env, actor, caller types.Address, handler string, args []byte, cycles uint64) ([]byte, uint64, error) {
	if rt.vm == nil {
		return nil, 0, fmt.Errorf("%w: queries need the PVM", types.ErrUnsupported)
	}
	o := state.NewOverlay(r)
	run := &Meter{CyclesLimit: cycles, CellsLimit: rt.maxTxCells}
	x := rt.NewExec(ctx, o, env, nil, caller, run, nil)
	x.readOnly = true
	ret, err := x.invoke(actor, caller, new(big.Int), handler, args, false, 0, -1)
	return ret, run.Cycles, err
}

// ErrInfra marks failures of the node itself (not of the transaction);
// they abort block execution instead of producing a receipt.
var ErrInfra = errInfra

// IsFailure reports whether err is a deterministic failure of actor code
// or of an actor instruction (as opposed to a node failure).
func IsFailure(err error) bool { return isActorError(err) }

// PruneDedup drops the message dedup rows that leave the window at height.
func (rt *Runtime) PruneDedup(o *state.Overlay, height uint64) error {
	return pruneDedup(o, height, rt.limits.DedupWindow)
}

// Exec is the system modules' transaction context (system.Tx).
var _ system.Tx = (*Exec)(nil)

func (x *Exec) Context() context.Context { return x.ctx }
func (x *Exec) State() *state.Overlay    { return x.o }
func (x *Exec) Env() system.Env          { return x.env }
func (x *Exec) Transaction() *types.Tx   { return x.tx }

func (x *Exec) Charge(cycles, cells uint64) error { return x.charge(cycles, cells) }

func (x *Exec) Emit(emitter types.Address, ev system.EventData) { x.emit(emitter, ev) }

func (x *Exec) MoveValue(from, to types.Address, v *big.Int) error { return x.moveValue(from, to, v) }

// emit records a typed event in the transaction's receipt.
func (x *Exec) emit(emitter types.Address, ev system.EventData) {
	x.run.Events = append(x.run.Events, system.Event(emitter, ev))
}

// failureCode is the receipt code of a transaction, timer or callback that
// failed with err.
func failureCode(err error) system.Code {
	if !system.IsFailure(err) && errors.Is(err, types.ErrInsufficientBalance) {
		return system.CodeInsufficientBalance
	}
	return system.CodeOf(err)
}

// MarkFailed fails rcpt with err and reverts its message records: those
// that had succeeded or were still queued now fail as reverted (why).
func MarkFailed(rcpt *types.Receipt, records []types.MessageRecord, err error, why string) {
	rcpt.Status, rcpt.Code, rcpt.Error = types.ReceiptFailed, uint32(failureCode(err)), err.Error()
	for i := range records {
		r := &records[i]
		if r.Status == types.ReceiptSuccess || r.Code == uint32(system.CodePending) {
			r.Code, r.Error = uint32(system.CodeReverted), why
		}
		r.Status = types.ReceiptFailed
	}
}
