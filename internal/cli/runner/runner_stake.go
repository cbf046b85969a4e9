package runner

import (
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"strconv"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

// Staking commands of the Runner Registry (CIP-13): self-bond, commission,
// delegation, unbonding and withdrawal.

// runnerAmountArgs resolves the RUNNER AMOUNT arguments and the signing key
// of a delegation command.
func runnerAmountArgs(f *Factory, a []string, tf *cmdutil.TxFlags) (types.Address, *big.Int, *ecdsa.PrivateKey, error) {
	runner, err := f.ResolveAddress(a[0])
	if err != nil {
		return types.Address{}, nil, nil, err
	}
	v, err := cmdutil.ParseAmountArg(a[1])
	if err != nil {
		return types.Address{}, nil, nil, err
	}
	key, err := f.Signer(tf.From)
	if err != nil {
		return types.Address{}, nil, nil, err
	}
	return runner, v, key, nil
}

func newRunnerStakingCmds(f *Factory) []*cobra.Command {
	stake := cmdutil.SendCmd(f, "stake AMOUNT [--from KEY]", "Add AMOUNT (CBY) to the sending runner's self-bond", "", cobra.ExactArgs(1),
		func(cmd *cobra.Command, a []string, tf *cmdutil.TxFlags) (*types.Tx, error) {
			v, err := cmdutil.ParseAmountArg(a[0])
			if err != nil {
				return nil, err
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return nil, err
			}
			return f.Client().Account(key).Runners().Stake(cmd.Context(), v, sdk.TxOptions{})
		})
	unstake := cmdutil.SendCmd(f, "unstake AMOUNT [--from KEY]", "Start unbonding AMOUNT of the sending runner's self-bond",
		"The stake must still meet the registration rules afterwards (effective stake ≥ max(min stake,\n"+
			"1.5 × max job value), self-bond ≥ 10% of the effective stake). Withdraw after the unbonding period.",
		cobra.ExactArgs(1), func(cmd *cobra.Command, a []string, tf *cmdutil.TxFlags) (*types.Tx, error) {
			v, err := cmdutil.ParseAmountArg(a[0])
			if err != nil {
				return nil, err
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return nil, err
			}
			return f.Client().Account(key).Runners().Unstake(cmd.Context(), v, sdk.TxOptions{})
		})
	commission := cmdutil.SendCmd(f, "commission BPS [--from KEY]", "Set the sending runner's commission on delegator revenue (0..10000 bps)", "",
		cobra.ExactArgs(1), func(cmd *cobra.Command, a []string, tf *cmdutil.TxFlags) (*types.Tx, error) {
			bps, err := strconv.ParseUint(a[0], 10, 64)
			if err != nil || bps > 10_000 {
				return nil, fmt.Errorf("commission %q: want 0..10000 basis points", a[0])
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return nil, err
			}
			return f.Client().Account(key).Runners().SetCommission(cmd.Context(), bps, sdk.TxOptions{})
		})
	delegate := cmdutil.SendCmd(f, "delegate RUNNER AMOUNT [--from KEY]", "Delegate AMOUNT (CBY) of the sender's balance to RUNNER",
		"Delegated stake adds to the runner's selection weight and max job value; delegators share the\n"+
			"runner's payouts pro rata after its commission and are slashed with it.",
		cobra.ExactArgs(2), func(cmd *cobra.Command, a []string, tf *cmdutil.TxFlags) (*types.Tx, error) {
			runner, v, key, err := runnerAmountArgs(f, a, tf)
			if err != nil {
				return nil, err
			}
			return f.Client().Account(key).Runners().Delegate(cmd.Context(), runner, v, sdk.TxOptions{})
		})
	undelegate := cmdutil.SendCmd(f, "undelegate RUNNER AMOUNT [--from KEY]", "Start unbonding AMOUNT of the sender's delegation on RUNNER",
		"The amount stays slashable for RUNNER's faults until the unbonding period ends; then `cowboy runner withdraw`.",
		cobra.ExactArgs(2), func(cmd *cobra.Command, a []string, tf *cmdutil.TxFlags) (*types.Tx, error) {
			runner, v, key, err := runnerAmountArgs(f, a, tf)
			if err != nil {
				return nil, err
			}
			return f.Client().Account(key).Runners().Undelegate(cmd.Context(), runner, v, sdk.TxOptions{})
		})
	withdraw := cmdutil.SendCmd(f, "withdraw [--from KEY]", "Withdraw every matured unbonding tranche of the sender", "", cobra.NoArgs,
		func(cmd *cobra.Command, _ []string, tf *cmdutil.TxFlags) (*types.Tx, error) {
			key, err := f.Signer(tf.From)
			if err != nil {
				return nil, err
			}
			return f.Client().Account(key).Runners().WithdrawUnbonded(cmd.Context(), sdk.TxOptions{})
		})
	return []*cobra.Command{stake, unstake, commission, delegate, undelegate, withdraw, newRunnerDelegationsCmd(f), newRunnerUnbondingCmd(f)}
}

func newRunnerDelegationsCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "delegations RUNNER",
		Short: "List the stake delegated to RUNNER",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			runner, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			ds, err := f.Client().Runners().Delegations(cmd.Context(), runner)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, ds)
			}
			if len(ds) == 0 {
				fmt.Fprintln(f.Out, "No delegations.")
			}
			for _, d := range ds {
				fmt.Fprintf(f.Out, "%s  %s  since block %d\n", d.Delegator, sdk.FormatCBY(cmdutil.MustBig(d.Amount)), d.Since)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newRunnerUnbondingCmd(f *Factory) *cobra.Command {
	var (
		asJSON bool
		from   string
	)
	cmd := &cobra.Command{
		Use:   "unbonding [ADDRESS]",
		Short: "List an address's unbonding tranches (default: the sending key's)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			var owner types.Address
			if len(a) == 1 {
				var err error
				if owner, err = f.ResolveAddress(a[0]); err != nil {
					return err
				}
			} else {
				key, err := f.Signer(from)
				if err != nil {
					return err
				}
				owner = types.PubkeyToAddress(key.PublicKey)
			}
			ts, err := f.Client().Runners().Unbonding(cmd.Context(), owner)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, ts)
			}
			if len(ts) == 0 {
				fmt.Fprintln(f.Out, "Nothing unbonding.")
			}
			for _, t := range ts {
				state := fmt.Sprintf("releases at block %d", t.Release)
				if t.Matured {
					state = "withdrawable"
				}
				fmt.Fprintf(f.Out, "%s from runner %s, %s\n", sdk.FormatCBY(cmdutil.MustBig(t.Amount)), t.Runner, state)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "key whose tranches to list (default: the only key)")
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}
