package execution

import (
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/offchain/selection"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// teeFilter narrows the candidates' declared TEE support to runners with an
// attestation in force (the tee_required filter of CIP-2 §4: "attestation
// verified by TEE Verifier 0x05").
func (x *txExec) teeFilter(cands []selection.Candidate) ([]selection.Candidate, error) {
	p := &x.ex.cfg.TEE.Policy
	for i := range cands {
		if !cands[i].TEE {
			continue
		}
		rn, err := runners.ReadRunner(x.o, cands[i].Address)
		if err != nil {
			return nil, err
		}
		ok := false
		if rn != nil {
			if ok, err = tee.Attested(x.o, rn.Address, rn.ResultKey, x.env.Height, p); err != nil {
				return nil, err
			}
		}
		cands[i].TEE = ok
	}
	return cands, nil
}

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
	j, err := ReadJob(r, id)
	if err != nil || j == nil {
		return nil, false, err
	}
	return j.Runners, true, nil
}

// poolChecker is the §4 filter 7 over the live registry; each check is
// charged entitlement.CheckCycles.
type poolChecker struct {
	x   *txExec
	reg *entitlement.Registry
}

func (p poolChecker) InPool(runner types.Address, pool []byte, at uint64) (bool, error) {
	if err := p.x.charge(entitlement.CheckCycles, entitlement.CheckCells); err != nil {
		return false, err
	}
	return p.reg.InPool(runner, pool, at)
}
