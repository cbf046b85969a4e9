package models

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Module is the Model Registry plugged into the executor.
type Module struct {
	p Params
}

// New returns the Model Registry with p (zero fields take the defaults).
func New(p Params) *Module {
	p.fill()
	return &Module{p: p}
}

// Params returns the module's parameters, defaults filled in.
func (m *Module) Params() Params { return m.p }

// Name implements system.Module.
func (m *Module) Name() string { return "models" }

// EndBlock implements system.Module: the registry has no end-of-block step.
func (m *Module) EndBlock(system.Tx) error { return nil }

// Kinds implements system.Module: model_publish, model_retire,
// model_withdraw, model_ban and model_unban, sent to the registry.
func (m *Module) Kinds() []system.Kind {
	return []system.Kind{
		{Kind: types.KindModelPublish, Check: Check, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return (&txCtx{Tx: sx, m: m}).publish(from, in.(*types.ModelPublish))
		}},
		{Kind: types.KindModelRetire, Check: Check, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, (&txCtx{Tx: sx, m: m}).retire(from, in.(*types.ModelRetire))
		}},
		{Kind: types.KindModelWithdraw, Check: Check, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, (&txCtx{Tx: sx, m: m}).withdraw(from, in.(*types.ModelWithdraw))
		}},
		{Kind: types.KindModelBan, Check: Check, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			if err := governance(from); err != nil {
				return nil, err
			}
			v := in.(*types.ModelBan)
			return nil, (&txCtx{Tx: sx, m: m}).setBan(v.ID, true, v.Reason, true)
		}},
		{Kind: types.KindModelUnban, Check: Check, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			if err := governance(from); err != nil {
				return nil, err
			}
			return nil, (&txCtx{Tx: sx, m: m}).setBan(in.(*types.ModelUnban).ID, false, "", true)
		}},
	}
}

// governance gates ban and unban: spec 002 §5.1 gives the power to
// governance, the 0x…09 system actor, and names no other holder.
func governance(from types.Address) error {
	if from != types.GovernanceAddress {
		return system.Failf(system.CodeNotGovernance, "NotGovernance: only governance (%s) may ban or unban a model", types.GovernanceAddress)
	}
	return nil
}

// Check is the stateless check of the registry's instructions: each goes
// to the registry, and only model_publish carries value.
func Check(tx *types.Tx, in types.Instruction) error {
	if to, ok := tx.To(); !ok || to != types.ModelRegistryAddress {
		return fmt.Errorf("%w: %s transactions go to %s", types.ErrMalformedTx, in.InstructionKind(), types.ModelRegistryAddress)
	}
	if in.InstructionKind() != types.KindModelPublish && tx.Value().Sign() != 0 {
		return fmt.Errorf("%w: %s carries no value (only model_publish does)", types.ErrMalformedTx, in.InstructionKind())
	}
	return nil
}

// txCtx is a transaction running a Model Registry instruction.
type txCtx struct {
	system.Tx
	m *Module
}
