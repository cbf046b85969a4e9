package runners

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Module is the Runner Registry plugged into the executor.
type Module struct {
	p   Params
	src params.Source // governed values; nil = the genesis parameters
}

// New returns the registry with p (zero fields take the defaults).
func New(p Params) *Module {
	p.fill()
	return &Module{p: p}
}

// Params returns the off-chain parameters, defaults filled in.
func (m *Module) Params() Params { return m.p }

// Name implements system.Module.
func (m *Module) Name() string { return "runners" }

// EndBlock implements system.Module: unbonding stake is withdrawn on
// request (runner_withdraw), so there is no end-of-block step.
func (m *Module) EndBlock(system.Tx) error { return nil }

// Tx is a transaction (or the job sweep) working on the registry: the
// registry's handlers, and the operations the Job Dispatcher and Result
// Verifier perform on runners (active job counts, slashing, payees, key
// history).
type Tx struct {
	system.Tx
	m *Module
}

// With is x working on m's registry.
func (m *Module) With(x system.Tx) *Tx { return &Tx{Tx: x, m: m} }

// handler adapts a typed instruction handler to system.Handler.
func handler[T types.Instruction](m *Module, f func(x *Tx, from types.Address, in T) error) system.Handler {
	return func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
		return nil, f(m.With(sx), from, in.(T))
	}
}

// Kinds implements system.Module: the nine registry instructions.
func (m *Module) Kinds() []system.Kind {
	return []system.Kind{
		{Kind: types.KindRunnerRegister, Check: Check, Handle: handler(m, (*Tx).runnerRegister)},
		{Kind: types.KindRunnerHeartbeat, Check: Check, Handle: handler(m, func(x *Tx, from types.Address, _ *types.RunnerHeartbeat) error { return x.runnerHeartbeat(from) })},
		{Kind: types.KindRunnerDeregister, Check: Check, Handle: handler(m, func(x *Tx, from types.Address, _ *types.RunnerDeregister) error { return x.runnerDeregister(from) })},
		{Kind: types.KindRunnerDelegateStake, Check: Check, Handle: handler(m, (*Tx).runnerDelegate)},
		{Kind: types.KindRunnerUndelegateStake, Check: Check, Handle: handler(m, (*Tx).runnerUndelegate)},
		{Kind: types.KindRunnerWithdraw, Check: Check, Handle: handler(m, func(x *Tx, from types.Address, _ *types.RunnerWithdraw) error { return x.runnerWithdraw(from) })},
		{Kind: types.KindRunnerStake, Check: Check, Handle: handler(m, func(x *Tx, from types.Address, _ *types.RunnerStake) error { return x.runnerStake(from) })},
		{Kind: types.KindRunnerUnstake, Check: Check, Handle: handler(m, (*Tx).runnerUnstake)},
		{Kind: types.KindRunnerSetCommission, Check: Check, Handle: handler(m, (*Tx).runnerSetCommission)},
	}
}

// Check is the stateless check of the off-chain instructions (registry,
// dispatcher, verifier): each goes to its system actor, and only
// runner_register, runner_stake, runner_delegate_stake and
// challenge_result carry value.
func Check(tx *types.Tx, in types.Instruction) error {
	to, hasTo := tx.To()
	want := types.JobDispatcherAddress
	switch in.(type) {
	case *types.RunnerRegister, *types.RunnerHeartbeat, *types.RunnerDeregister, *types.RunnerDelegateStake,
		*types.RunnerUndelegateStake, *types.RunnerWithdraw, *types.RunnerStake, *types.RunnerUnstake, *types.RunnerSetCommission:
		want = types.RunnerRegistryAddress
	case *types.SubmitResult, *types.RevealResult, *types.ChallengeResult:
		want = types.ResultVerifierAddress
	}
	if !hasTo || to != want {
		return fmt.Errorf("%w: %s transactions go to %s", types.ErrMalformedTx, in.InstructionKind(), want)
	}
	switch in.(type) {
	case *types.RunnerRegister, *types.RunnerDelegateStake, *types.RunnerStake, *types.ChallengeResult:
	default:
		if tx.Value().Sign() != 0 {
			return fmt.Errorf("%w: %s carries no value (only runner_register, runner_stake, runner_delegate_stake and challenge_result do; submit_job escrows from the balance)", types.ErrMalformedTx, in.InstructionKind())
		}
	}
	return nil
}
