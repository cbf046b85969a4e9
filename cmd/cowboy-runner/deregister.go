package main

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/runner"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/cowboy-foundation/cowboy/sdk/keystore"
	"github.com/spf13/cobra"
)

// accountCmd is a command that sends one transaction from the runner's
// account while the daemon is stopped (two senders would collide on
// nonces).
func accountCmd(io IO, use, short string, send func(ctx context.Context, c *sdk.Client, key *ecdsa.PrivateKey) (*types.Tx, error), done func(ctx context.Context, c *sdk.Client, self types.Address)) *cobra.Command {
	var home, node string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if home == "" {
				return errors.New("--home is required")
			}
			var ri RunInfo
			if cmdutil.ReadRunFile(home, &ri) == nil && ri.PID > 0 {
				return fmt.Errorf("the daemon is running (pid %d): stop it first", ri.PID)
			}
			c, err := runner.LoadConfig(home)
			if err != nil {
				return err
			}
			if node != "" {
				c.Node = node
			}
			password, err := c.Password(home)
			if err != nil {
				return err
			}
			ks, err := keystore.Open(runner.Path(home, c.Account.Keystore))
			if err != nil {
				return err
			}
			key, err := ks.Unlock(c.Account.Name, password)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 60*time.Second)
			defer cancel()
			cl := sdk.New(c.Node)
			tx, err := send(ctx, cl, key)
			if err != nil {
				return err
			}
			r, err := cl.Chain().WaitForReceipt(ctx, tx.Hash())
			if err != nil {
				return err
			}
			if r.Receipt.Status != "success" {
				return fmt.Errorf("%s refused: %s", use, r.Receipt.Error)
			}
			fmt.Fprintf(io.Out, "%s: included (tx %s)\n", use, tx.Hash())
			done(ctx, cl, types.PubkeyToAddress(key.PublicKey))
			return nil
		},
	}
	cmd.Flags().StringVar(&home, "home", "", "runner home directory")
	cmd.Flags().StringVar(&node, "node", "", "node HTTP API URL, overrides the config")
	return cmd
}

// newCmdDeregister leaves the Runner Registry; the self-bond unbonds
// (it stays slashable for the unbonding period) and `withdraw` pays it out.
func newCmdDeregister(io IO) *cobra.Command {
	return accountCmd(io, "deregister", "Leave the Runner Registry (stop the daemon first); the stake starts unbonding",
		func(ctx context.Context, c *sdk.Client, key *ecdsa.PrivateKey) (*types.Tx, error) {
			return c.Account(key).Runners().Deregister(ctx, sdk.TxOptions{})
		}, func(ctx context.Context, c *sdk.Client, self types.Address) { printUnbonding(ctx, io, c, self) })
}

// newCmdWithdraw pays out every matured unbonding tranche.
func newCmdWithdraw(io IO) *cobra.Command {
	return accountCmd(io, "withdraw", "Withdraw matured unbonding stake to the account",
		func(ctx context.Context, c *sdk.Client, key *ecdsa.PrivateKey) (*types.Tx, error) {
			return c.Account(key).Runners().WithdrawUnbonded(ctx, sdk.TxOptions{})
		}, func(ctx context.Context, c *sdk.Client, self types.Address) { printUnbonding(ctx, io, c, self) })
}

func printUnbonding(ctx context.Context, io IO, c *sdk.Client, self types.Address) {
	ts, err := c.Runners().Unbonding(ctx, self)
	if err != nil {
		fmt.Fprintf(io.Out, "unbonding: %v\n", err)
		return
	}
	if len(ts) == 0 {
		fmt.Fprintln(io.Out, "nothing unbonding")
	}
	for _, t := range ts {
		fmt.Fprintf(io.Out, "unbonding %s, release at height %d%s\n", formatBase(t.Amount), t.Release, matured(t))
	}
}

func matured(t apitypes.Tranche) string {
	if t.Matured {
		return " (withdrawable now: cowboy-runner withdraw)"
	}
	return ""
}
