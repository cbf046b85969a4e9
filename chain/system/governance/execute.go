package governance

import (
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/treasury"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// executeTx is gov_execute: anyone may execute a queued proposal at or
// after its ETA (otherwise EndBlock does at the ETA). A failing execution
// is recorded on the proposal; the transaction itself succeeds.
func (m *Module) executeTx(x system.Tx, id uint64) error {
	p, err := ReadProposal(x.State(), id)
	if err != nil {
		return err
	}
	if p == nil {
		return system.Failf(system.CodeNoSuchProposal, "NoSuchProposal: %d", id)
	}
	if p.Status != StatusQueued {
		return system.Failf(system.CodeNotQueued, "NotQueued: proposal %d is %s", id, StatusName(p.Status))
	}
	if h := x.Env().Height; h < p.ETA {
		return system.Failf(system.CodeBeforeETA, "BeforeETA: proposal %d executes at %d, now %d", id, p.ETA, h)
	}
	return m.execute(x, p)
}

// execute applies p atomically: every change or none. A change takes
// effect from the next block. A failure reverts p's changes and marks it
// failed with the failure's code.
func (m *Module) execute(x system.Tx, p *Proposal) error {
	o := x.State()
	snap := o.Snapshot()
	err := m.apply(x, p)
	if err != nil && !system.IsFailure(err) {
		return err
	}
	if err != nil {
		o.RevertTo(snap)
		p.Status, p.FailCode = StatusFailed, uint32(system.CodeOf(err))
	} else {
		p.Status = StatusExecuted
	}
	o.Delete(activeKey(p.ID))
	save(o, p)
	x.Emit(types.GovernanceAddress, ExecutedEvent{Proposal: p.ID, Status: StatusName(p.Status), Code: p.FailCode})
	return nil
}

func (m *Module) apply(x system.Tx, p *Proposal) error {
	for _, c := range p.Params {
		if err := m.store.Set(x.State(), c.Key, c.Value); err != nil {
			return err
		}
	}
	for _, d := range p.Disburse {
		if err := treasury.Disburse(x, d.To, d.Amount); err != nil {
			return err
		}
	}
	if len(p.Council) > 0 {
		cs, err := councilSet(p.Council)
		if err != nil {
			return err
		}
		x.State().Set(councilKey(), codec.MustMarshal(cs))
	}
	for _, u := range p.Upgrade {
		if err := m.schedule(x, u); err != nil {
			return err
		}
	}
	if err := m.applyModels(x, p.Models); err != nil {
		return err
	}
	return ratify(x.State(), p.Ratify)
}
