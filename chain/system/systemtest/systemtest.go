// Package systemtest runs a system module's handlers and end-of-block step
// over a real state overlay, without the block executor: the harness of
// the modules' own tests. It implements system.Tx with the executor's
// semantics for metering, events and value moves; a failed instruction's
// writes are reverted as the executor reverts them.
package systemtest

import (
	"context"
	"fmt"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Chain is a state overlay and a block environment that instructions run
// against one at a time.
type Chain struct {
	State *state.Overlay
	Env   system.Env
}

// New returns a chain over a fresh in-memory state at height 1.
func New() *Chain {
	return &Chain{State: state.NewOverlay(state.MapReader{}), Env: system.Env{Height: 1, Timestamp: 1000}}
}

// Fund credits a to the chain's state.
func (c *Chain) Fund(a types.Address, v *big.Int) error { return c.State.AddBalance(a, v) }

// Balance is a's balance.
func (c *Chain) Balance(a types.Address) (*big.Int, error) {
	acc, err := c.State.Account(a)
	if err != nil {
		return nil, err
	}
	return acc.Balance, nil
}

// Result is the outcome of one instruction.
type Result struct {
	Return []byte
	Err    error // a system.Failure (the transaction failed) or a node error
	Events []types.Event
	Cycles uint64
	Cells  uint64
}

// Code is the result's failure code (system.CodeOK on success).
func (r *Result) Code() system.Code { return system.CodeOf(r.Err) }

// MustRun is Run for tests: an error from the harness itself (not a failed
// instruction, which the Result carries) fails the test.
func (c *Chain) MustRun(t testing.TB, m system.Module, from, to types.Address, value *big.Int, in types.Instruction) *Result {
	t.Helper()
	r, err := c.Run(m, from, to, value, in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Run checks and executes in, sent by from with value to to, through the
// module kind that owns it, as the executor's router does. A failed
// instruction leaves no writes.
func (c *Chain) Run(m system.Module, from, to types.Address, value *big.Int, in types.Instruction) (*Result, error) {
	var kind *system.Kind
	for _, k := range m.Kinds() {
		if k.Kind == in.InstructionKind() {
			kind = &k
			break
		}
	}
	if kind == nil {
		return nil, fmt.Errorf("systemtest: module %s does not own %s", m.Name(), in.InstructionKind())
	}
	payload, err := types.EncodeInstruction(in)
	if err != nil {
		return nil, err
	}
	if value == nil {
		value = new(big.Int)
	}
	tx, err := types.NewTx(types.TxData{ChainID: 1, To: &to, Value: value, CyclesLimit: 10_000_000, CellsLimit: 1_000_000,
		MaxFeePerCycle: 1, MaxFeePerCell: 1, Payload: payload})
	if err != nil {
		return nil, err
	}
	if kind.Check != nil {
		if err := kind.Check(tx, in); err != nil {
			return nil, err
		}
	}
	x := &txCtx{c: c, tx: tx, cyclesLimit: tx.CyclesLimit(), cellsLimit: tx.CellsLimit()}
	snap := c.State.Snapshot()
	ret, err := kind.Handle(x, from, in)
	if err != nil {
		if !system.IsFailure(err) {
			return nil, err
		}
		c.State.RevertTo(snap)
		x.events = nil
	}
	return &Result{Return: ret, Err: err, Events: x.events, Cycles: x.cycles, Cells: x.cells}, nil
}

// EndBlock runs m's end-of-block step at the chain's height.
func (c *Chain) EndBlock(m system.Module) error {
	return m.EndBlock(&txCtx{c: c})
}

// txCtx implements system.Tx for one instruction or end-of-block step.
type txCtx struct {
	c                       *Chain
	tx                      *types.Tx
	cycles, cells           uint64
	cyclesLimit, cellsLimit uint64
	events                  []types.Event
}

func (x *txCtx) Context() context.Context { return context.Background() }
func (x *txCtx) State() *state.Overlay    { return x.c.State }
func (x *txCtx) Env() system.Env          { return x.c.Env }
func (x *txCtx) Transaction() *types.Tx   { return x.tx }
func (x *txCtx) Emit(e types.Address, ev system.EventData) {
	x.events = append(x.events, system.Event(e, ev))
}

func (x *txCtx) Charge(cycles, cells uint64) error {
	x.cycles += cycles
	x.cells += cells
	if x.cycles > x.cyclesLimit {
		return system.Failf(system.CodeOutOfCycles, "OutOfCycles: out of cycles")
	}
	if x.cells > x.cellsLimit {
		return system.Failf(system.CodeOutOfCells, "OutOfCells: out of cells")
	}
	return nil
}

func (x *txCtx) MoveValue(from, to types.Address, v *big.Int) error {
	if err := x.c.State.SubBalance(from, v); err != nil {
		return system.Failf(system.CodeInsufficientBalance, "%v", err)
	}
	return x.c.State.AddBalance(to, v)
}

// Ctx is a context on c outside any transaction (no budget), for calling a
// module's exported operations the way another module's step would.
func Ctx(c *Chain) system.Tx { return &txCtx{c: c} }
