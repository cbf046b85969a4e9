package tokens

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Module is the token module plugged into the executor.
type Module struct{}

// New returns the token module.
func New() *Module { return &Module{} }

// Name implements system.Module.
func (m *Module) Name() string { return "tokens" }

// EndBlock implements system.Module: the module has no end-of-block step.
func (m *Module) EndBlock(system.Tx) error { return nil }

// charged wraps a handler: it charges the instruction's cost first (the
// fee is paid even when the operation then fails), as the cost table
// prices each call.
func charged(run func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error)) system.Handler {
	return func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
		c := InstructionCost(in)
		if err := x.Charge(c.Cycles, c.Cells); err != nil {
			return nil, err
		}
		return run(x, from, in)
	}
}

// Kinds implements system.Module: token_create, token_transfer,
// token_transfer_from, token_approve, token_mint and token_burn.
func (m *Module) Kinds() []system.Kind {
	return []system.Kind{
		{Kind: types.KindTokenCreate, Check: Check, Handle: charged(func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			id, err := Create(x, from, in.(*types.TokenCreate))
			if err != nil {
				return nil, err
			}
			return codec.MustMarshal(id[:]), nil
		})},
		{Kind: types.KindTokenTransfer, Check: Check, Handle: charged(func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			v := in.(*types.TokenTransfer)
			return nil, Transfer(x, v.ID, from, v.To, v.Amount)
		})},
		{Kind: types.KindTokenTransferFrom, Check: Check, Handle: charged(func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			v := in.(*types.TokenTransferFrom)
			return nil, TransferFrom(x, v.ID, from, v.From, v.To, v.Amount)
		})},
		{Kind: types.KindTokenApprove, Check: Check, Handle: charged(func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			v := in.(*types.TokenApprove)
			return nil, Approve(x, v.ID, from, v.Spender, v.Amount)
		})},
		{Kind: types.KindTokenMint, Check: Check, Handle: charged(func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			v := in.(*types.TokenMint)
			return nil, Mint(x, v.ID, from, v.To, v.Amount)
		})},
		{Kind: types.KindTokenBurn, Check: Check, Handle: charged(func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			v := in.(*types.TokenBurn)
			return nil, Burn(x, v.ID, from, v.Amount)
		})},
	}
}

// Check is the stateless check of the token instructions: each goes to the
// module and carries no value.
func Check(tx *types.Tx, in types.Instruction) error {
	if to, ok := tx.To(); !ok || to != types.TokenModuleAddress {
		return fmt.Errorf("%w: %s transactions go to %s", types.ErrMalformedTx, in.InstructionKind(), types.TokenModuleAddress)
	}
	if tx.Value().Sign() != 0 {
		return fmt.Errorf("%w: %s carries no value", types.ErrMalformedTx, in.InstructionKind())
	}
	return nil
}
