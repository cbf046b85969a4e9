package entitlements

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Module is the Entitlement Registry plugged into the executor.
type Module struct{}

// New returns the Entitlement Registry.
func New() *Module { return &Module{} }

// Name implements system.Module.
func (m *Module) Name() string { return "entitlements" }

// EndBlock implements system.Module: expiry is lazy, there is no
// end-of-block step.
func (m *Module) EndBlock(system.Tx) error { return nil }

// Kinds implements system.Module: instructions 30–35, sent to the registry
// without value. Grants, delegations and new roles return their id.
func (m *Module) Kinds() []system.Kind {
	h := func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
		ret, err := (&txCtx{Tx: sx}).dispatch(from, in)
		if err != nil || ret == nil {
			return nil, err
		}
		return codec.MustMarshal(ret), nil
	}
	var ks []system.Kind
	for _, k := range []types.InstructionKind{types.KindEntitlementGrant, types.KindEntitlementRevoke, types.KindEntitlementDelegate,
		types.KindRoleCreate, types.KindRoleAssign, types.KindRoleRevoke} {
		ks = append(ks, system.Kind{Kind: k, Check: check, Handle: h})
	}
	return ks
}

// check is the stateless check of the registry's instructions (the text is
// the one the off-chain instructions share).
func check(tx *types.Tx, in types.Instruction) error {
	want := types.EntitlementRegistryAddress
	if to, ok := tx.To(); !ok || to != want {
		return fmt.Errorf("%w: %s transactions go to %s", types.ErrMalformedTx, in.InstructionKind(), want)
	}
	if tx.Value().Sign() != 0 {
		return fmt.Errorf("%w: %s carries no value (only runner_register, runner_stake, runner_delegate_stake and challenge_result do; submit_job escrows from the balance)", types.ErrMalformedTx, in.InstructionKind())
	}
	return nil
}

// txCtx is a transaction running a registry instruction.
type txCtx struct {
	system.Tx
}
