package validators

import (
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
)

// KeyUnbondingMs is the governed unbonding period of an exiting
// validator's stake (Tier 0), read when the validator exits.
const KeyUnbondingMs = "validators.unbonding_ms"

// ParamDefs are the registry's parameters under governance; their
// defaults are p's (genesis) values.
func ParamDefs(p Params) []params.Def {
	p.fill()
	return []params.Def{
		{Key: KeyUnbondingMs, Tier: 0, Min: 1000, Max: 365 * 24 * 3600 * 1000, Default: p.UnbondingMs,
			Doc: "milliseconds an exited validator's stake stays bonded"},
	}
}

// UseParams makes the registry read its governed values (ParamDefs) from
// src.
func (m *Module) UseParams(src params.Source) { m.src = src }

// unbondingMs is the unbonding period in r.
func (m *Module) unbondingMs(r state.Reader) (uint64, error) {
	if m.src == nil {
		return m.p.UnbondingMs, nil
	}
	return m.src.Get(r, KeyUnbondingMs)
}
