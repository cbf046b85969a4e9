// Package validators is the Validator Registry system actor (0x…0C, spec
// 002 "Validator Set", "Staking and Rewards", "Slashing"): validator
// records, the epoch's consensus set and seed, inflation rewards, downtime
// jailing and equivocation slashing. The node reads the epoch (ReadEpoch)
// to reconfigure consensus.
package validators

import (
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Module is the Validator Registry plugged into the executor.
type Module struct {
	p       Params
	chainID uint64
	src     params.Source // governed values; nil = the genesis parameters
}

// New returns the registry with p (zero fields take the defaults) on chain
// chainID (the signing domain of equivocation evidence).
func New(p Params, chainID uint64) *Module {
	p.fill()
	return &Module{p: p, chainID: chainID}
}

// Params returns the registry's parameters, defaults filled in.
func (m *Module) Params() Params { return m.p }

// Name implements system.Module.
func (m *Module) Name() string { return "validators" }

// Kinds implements system.Module: the five validator instructions, all
// sent to the registry.
func (m *Module) Kinds() []system.Kind {
	h := func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
		return nil, (&txCtx{Tx: sx, m: m}).dispatch(from, in)
	}
	var ks []system.Kind
	for _, k := range []types.InstructionKind{types.KindValidatorRegister, types.KindValidatorExit, types.KindValidatorWithdraw,
		types.KindValidatorEvidence, types.KindValidatorUnjail} {
		ks = append(ks, system.Kind{Kind: k, Check: checkValidatorTx, Handle: h})
	}
	return ks
}

// txCtx is a transaction running a registry instruction.
type txCtx struct {
	system.Tx
	m *Module
}
