package execution

import (
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// OffchainParams returns the off-chain compute parameters.
func (e *Executor) OffchainParams() runners.Params { return e.cfg.Offchain }

// runnerRegistry is the Runner Registry and Job Dispatcher as the TEE
// Verifier and the Secrets Manager see them (tee.Registry).
type runnerRegistry struct{}

func (runnerRegistry) Runner(r state.Reader, a types.Address) (*tee.Runner, error) {
	rn, err := runners.ReadRunner(r, a)
	if err != nil || rn == nil {
		return nil, err
	}
	return &tee.Runner{Address: rn.Address, Active: rn.Status == runners.RunnerActive, TEE: rn.TEE, ResultKey: rn.ResultKey}, nil
}

func (runnerRegistry) Committee(r state.Reader, id types.Hash) ([]types.Address, bool, error) {
	j, err := jobs.ReadJob(r, id)
	if err != nil || j == nil {
		return nil, false, err
	}
	return j.Runners, true, nil
}
