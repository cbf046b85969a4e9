package secrets

import (
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Module is the Secrets Manager plugged into the executor. It grants
// secrets to runners whose TEE Verifier attestation satisfies a secret's
// policy, so it depends on the tee module.
type Module struct {
	p   tee.Params
	reg tee.Registry
}

// New returns the Secrets Manager with the TEE parameters p (as filled by
// tee.New) over the runners of reg.
func New(p tee.Params, reg tee.Registry) *Module { return &Module{p: p, reg: reg} }

// Name implements system.Module.
func (m *Module) Name() string { return "secrets" }

// EndBlock implements system.Module: the Secrets Manager has no end-of-block step.
func (m *Module) EndBlock(system.Tx) error { return nil }

// handler adapts a typed instruction handler to system.Handler.
func handler[T types.Instruction](m *Module, f func(x *txCtx, from types.Address, in T) error) system.Handler {
	return func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
		return nil, f(&txCtx{Tx: sx, m: m}, from, in.(T))
	}
}

// Kinds implements system.Module: the four secret instructions, sent to
// the Secrets Manager without value.
func (m *Module) Kinds() []system.Kind {
	check := tee.CheckTarget(types.SecretsManagerAddress)
	return []system.Kind{
		{Kind: types.KindSecretPut, Check: check, Handle: handler(m, (*txCtx).secretPut)},
		{Kind: types.KindSecretGrant, Check: check, Handle: handler(m, (*txCtx).secretGrant)},
		{Kind: types.KindSecretRevoke, Check: check, Handle: handler(m, (*txCtx).secretRevoke)},
		{Kind: types.KindSecretDelete, Check: check, Handle: handler(m, (*txCtx).secretDelete)},
	}
}

// txCtx is a transaction running a Secrets Manager instruction.
type txCtx struct {
	system.Tx
	m *Module
}
