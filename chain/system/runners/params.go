package runners

import (
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
)

// Keys of the off-chain parameters under governance (Tier 0, spec 002
// §13 "Off-chain").
const (
	// KeyHeartbeatTimeout is heartbeat_timeout_blocks of the health
	// filter, read by the Job Dispatcher's selection.
	KeyHeartbeatTimeout = "runners.heartbeat_timeout_blocks"
	// KeyUnbondingBlocks is unbonding_blocks, read when a tranche is
	// created (undelegate, unstake, deregister).
	KeyUnbondingBlocks = "runners.unbonding_blocks"
	// KeyMinSelfBondBps is min_self_bond_bps, read by delegate and unstake.
	KeyMinSelfBondBps = "runners.min_self_bond_bps"
	// KeyMaxDelegators is max_delegators_per_runner, read by delegate.
	KeyMaxDelegators = "runners.max_delegators"
	// KeyMaxTranches is max_active_tranches_per_delegator, read when a
	// tranche is created.
	KeyMaxTranches = "runners.max_tranches"
)

// ParamDefs are the off-chain parameters under governance; their defaults
// are p's (genesis) values, so a chain that never changes them keeps its
// state roots.
func ParamDefs(p Params) []params.Def {
	p.fill()
	return []params.Def{
		{Key: KeyHeartbeatTimeout, Tier: 0, Min: 1, Max: 1_000_000, Default: p.HeartbeatTimeout,
			Doc: "blocks without a heartbeat before a runner is left out of selection"},
		{Key: KeyUnbondingBlocks, Tier: 0, Min: 1, Max: 10_000_000, Default: p.UnbondingBlocks,
			Doc: "blocks undelegated or unstaked runner stake stays slashable before withdrawal"},
		{Key: KeyMinSelfBondBps, Tier: 0, Min: 0, Max: 10_000, Default: p.MinSelfBondBps,
			Doc: "minimum runner self-bond as a share of its effective stake, basis points"},
		{Key: KeyMaxDelegators, Tier: 0, Min: 1, Max: 100_000, Default: uint64(p.MaxDelegators),
			Doc: "delegators a runner may have at once"},
		{Key: KeyMaxTranches, Tier: 0, Min: 1, Max: 1_000, Default: uint64(p.MaxTranches),
			Doc: "unbonding tranches an address may have at once"},
	}
}

// UseParams makes the registry read its governed values (ParamDefs) from
// src; without it the genesis parameters apply.
func (m *Module) UseParams(src params.Source) { m.src = src }

// Governed is the registry's parameters in r: the genesis values with the
// governed ones read from the store (the config consumer pattern). The
// Job Dispatcher's candidate filter reads them through it too.
func (m *Module) Governed(r state.Reader) (*Params, error) {
	p := m.p
	if m.src == nil {
		return &p, nil
	}
	var err error
	get := func(key string) uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = m.src.Get(r, key)
		return v
	}
	p.UnbondingBlocks = get(KeyUnbondingBlocks)
	p.MinSelfBondBps = get(KeyMinSelfBondBps)
	p.MaxDelegators = uint32(get(KeyMaxDelegators))
	p.MaxTranches = int(get(KeyMaxTranches))
	if err != nil {
		return nil, err
	}
	return &p, nil
}
