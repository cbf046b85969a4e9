package execution

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/rent"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// router maps each instruction kind to the system module that owns it
// (chain/system/...). Modules run their end-of-block steps in the order
// they were registered.
type router struct {
	modules []system.Module
	kinds   map[types.InstructionKind]system.Kind
	// publish names the modules whose end-of-block events are recorded
	// (in the end-of-block receipt, endBlockReceipt).
	publish map[string]bool
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
// (no transaction, no budget). It returns the events of the modules named
// in publish; the others' events are not recorded.
func (r *router) endBlock(x0 *actors.Exec) ([]types.Event, error) {
	var events []types.Event
	for _, m := range r.modules {
		run := &actors.Meter{}
		x := x0.Runtime().NewExec(x0.Context(), x0.State(), x0.Env(), nil, types.Address{}, run, x0.Block())
		if err := m.EndBlock(x); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name(), err)
		}
		if r.publish[m.Name()] {
			events = append(events, run.Events...)
		}
	}
	return events, nil
}

// endBlockReceipt carries the published end-of-block events of the block
// at height (nil without any): TxHash rent.SweepReceiptHash(height).
func endBlockReceipt(height uint64, events []types.Event) *types.Receipt {
	if len(events) == 0 {
		return nil
	}
	return &types.Receipt{TxHash: rent.SweepReceiptHash(height), Status: types.ReceiptSuccess,
		FeePaid: new(big.Int), Burned: new(big.Int), Tip: new(big.Int), Events: events, Return: []byte{}}
}
