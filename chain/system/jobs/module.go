package jobs

import (
	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Module is the Job Dispatcher and Result Verifier plugged into the
// executor. It works on runners through the Runner Registry module and
// checks TEE attestations against the chain policy.
type Module struct {
	p       runners.Params
	runners *runners.Module
	policy  attest.Policy
	params  params.Source // governed values; nil = the genesis parameters
}

// UseParams makes the dispatcher read its governed values
// (runners.ParamDefs) from src.
func (m *Module) UseParams(src params.Source) { m.params = src }

// heartbeatTimeout is the selection's heartbeat_timeout_blocks in r.
func (m *Module) heartbeatTimeout(r state.Reader) (uint64, error) {
	if m.params == nil {
		return m.p.HeartbeatTimeout, nil
	}
	return m.params.Get(r, runners.KeyHeartbeatTimeout)
}

// New returns the dispatcher over the registry reg, with the chain's TEE
// policy (tee.Params.Policy, defaults filled in).
func New(reg *runners.Module, policy attest.Policy) *Module {
	return &Module{p: reg.Params(), runners: reg, policy: policy}
}

// Name implements system.Module.
func (m *Module) Name() string { return "jobs" }

// EndBlock implements system.Module: the dispatcher's end-of-block work
// (timeouts, re-selection, settlement) is the executor's job lane, which
// ticks each due job (Tick) and delivers the callbacks.
func (m *Module) EndBlock(system.Tx) error { return nil }

// Tx is a transaction (or the job lane) working on jobs.
type Tx struct {
	system.Tx
	m *Module
}

// With is x working on m's jobs.
func (m *Module) With(x system.Tx) *Tx { return &Tx{Tx: x, m: m} }

// Kinds implements system.Module: submit_job, commit_result,
// submit_verified_result, reveal_result and challenge_result.
func (m *Module) Kinds() []system.Kind {
	return []system.Kind{
		{Kind: types.KindSubmitJob, Check: runners.Check, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			v := in.(*types.SubmitJob)
			spec, err := job.DecodeJobSpec(v.Spec)
			if err != nil {
				return nil, system.Failf(system.CodeInvalidJobSpec, "InvalidJobSpec: %v", err)
			}
			if err := sx.Charge(SubmitJobCycles, uint64(len(v.Spec))); err != nil {
				return nil, err
			}
			id, err := m.With(sx).SubmitJob(from, spec)
			if err != nil {
				return nil, err
			}
			return codec.MustMarshal(id[:]), nil
		}},
		{Kind: types.KindCommitResult, Check: runners.Check, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, m.With(sx).commitResult(from, in.(*types.CommitResult))
		}},
		{Kind: types.KindSubmitResult, Check: runners.Check, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, m.With(sx).submitResult(from, in.(*types.SubmitResult))
		}},
		{Kind: types.KindRevealResult, Check: runners.Check, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, m.With(sx).revealResult(from, in.(*types.RevealResult))
		}},
		{Kind: types.KindChallengeResult, Check: runners.Check, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, m.With(sx).challengeResult(from, in.(*types.ChallengeResult))
		}},
		{Kind: types.KindReportWrongModel, Check: checkResultVerifier, Handle: func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			return nil, m.With(sx).reportWrongModel(from, in.(*types.ReportWrongModel))
		}},
	}
}
