package tee

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Runner is what the TEE Verifier and the Secrets Manager need of a Runner
// Registry record.
type Runner struct {
	Address   types.Address
	Active    bool   // registered and not exited
	TEE       bool   // declared TEE support at registration
	ResultKey []byte // the Ed25519 key its results are signed with
}

// Registry looks up runners and job committees. The executor's Runner
// Registry and Job Dispatcher implement it; it is injected so that the
// dependencies point one way (jobs use the TEE Verifier, not the reverse).
type Registry interface {
	// Runner returns a runner's record, nil if it never registered.
	Runner(r state.Reader, a types.Address) (*Runner, error)
	// Committee returns a job's committee; ok is false if there is no job id.
	Committee(r state.Reader, id types.Hash) (runners []types.Address, ok bool, err error)
}

// Module is the TEE Verifier plugged into the executor.
type Module struct {
	p   Params
	reg Registry
}

// New returns the TEE Verifier with p (zero fields take the defaults; the
// dev chain id gets attest.DevPolicy) over the runners of reg.
func New(p Params, chainID uint64, reg Registry) *Module {
	p.fill(chainID)
	return &Module{p: p, reg: reg}
}

// Params returns the module's parameters, defaults filled in.
func (m *Module) Params() Params { return m.p }

// Name implements system.Module.
func (m *Module) Name() string { return "tee" }

// EndBlock implements system.Module: the TEE Verifier has no end-of-block step.
func (m *Module) EndBlock(system.Tx) error { return nil }

// Kinds implements system.Module: tee_attest and tee_attest_result, sent to
// the TEE Verifier without value.
func (m *Module) Kinds() []system.Kind {
	check := CheckTarget(types.TEEVerifierAddress)
	return []system.Kind{
		{Kind: types.KindTEEAttest, Check: check, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, (&txCtx{Tx: sx, m: m}).teeAttest(from, in.(*types.TEEAttest))
		}},
		{Kind: types.KindTEEAttestResult, Check: check, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, (&txCtx{Tx: sx, m: m}).teeAttestResult(from, in.(*types.TEEAttestResult))
		}},
	}
}

// CheckTarget is the stateless check of the TEE Verifier's and the Secrets
// Manager's instructions: each goes to its system actor and carries no value.
func CheckTarget(want types.Address) func(*types.Tx, types.Instruction) error {
	return func(tx *types.Tx, in types.Instruction) error {
		if to, ok := tx.To(); !ok || to != want {
			return fmt.Errorf("%w: %s transactions go to %s", types.ErrMalformedTx, in.InstructionKind(), want)
		}
		if tx.Value().Sign() != 0 {
			return fmt.Errorf("%w: %s carries no value", types.ErrMalformedTx, in.InstructionKind())
		}
		return nil
	}
}

// activeRunner returns from's record if it is an active runner.
func (m *Module) activeRunner(r state.Reader, from types.Address) (*Runner, error) {
	rn, err := m.reg.Runner(r, from)
	if err != nil {
		return nil, err
	}
	if rn == nil || !rn.Active {
		return nil, system.Failf(system.CodeNotARunner, "NotARunner: %s is not an active runner", from)
	}
	return rn, nil
}

// txCtx is a transaction running a TEE Verifier instruction.
type txCtx struct {
	system.Tx
	m *Module
}
