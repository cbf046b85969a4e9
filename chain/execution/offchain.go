package execution

import (
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
)

// OffchainParams returns the off-chain compute parameters.
func (e *Executor) OffchainParams() runners.Params { return e.cfg.Offchain }

// reg is x working on the Runner Registry.
func (x *txExec) reg() *runners.Tx { return x.ex.runners.With(x) }
