package entitlement

import (
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/spf13/cobra"
)

// Runner pools: an entitlement RunnerJoinPool(POOL) on RunnerPool(POOL)
// admits a runner to jobs that set required_runner_pool = POOL.

func NewCmdPool(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "pool", Short: "Runner pools (entitlements that admit runners to pool-restricted jobs)"}
	cmd.AddCommand(newPoolGrantCmd(f))
	return cmd
}

func newPoolGrantCmd(f *Factory) *cobra.Command {
	cmd := grantCmd(f, "grant POOL RUNNER [constraints] [--from KEY]",
		"Admit RUNNER to POOL (the first granter of a pool owns it; revoke with `cowboy entitlement revoke ID`)",
		cobra.ExactArgs(2), func(a []string) (types.Address, entitlement.Scope, entitlement.Action, error) {
			runner, err := f.ResolveAddress(a[1])
			if err != nil {
				return runner, entitlement.Scope{}, entitlement.Action{}, err
			}
			s, err := entitlement.ParseScope("pool:" + a[0])
			if err != nil {
				return runner, s, entitlement.Action{}, err
			}
			act, err := entitlement.ParseAction("join_pool:" + a[0])
			return runner, s, act, err
		})
	return cmd
}
