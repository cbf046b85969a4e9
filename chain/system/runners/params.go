package runners

import "github.com/cowboy-foundation/cowboy/chain/system/params"

// KeyHeartbeatTimeout is the governed heartbeat_timeout_blocks of the
// health filter (Tier 0), read by the Job Dispatcher's selection.
const KeyHeartbeatTimeout = "runners.heartbeat_timeout_blocks"

// ParamDefs are the off-chain parameters under governance; their defaults
// are p's (genesis) values.
func ParamDefs(p Params) []params.Def {
	p.fill()
	return []params.Def{
		{Key: KeyHeartbeatTimeout, Tier: 0, Min: 1, Max: 1_000_000, Default: p.HeartbeatTimeout,
			Doc: "blocks without a heartbeat before a runner is left out of selection"},
	}
}
