package account

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/internal/cli/verify"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

func NewCmdAccount(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "account", Short: "Inspect accounts"}
	var asJSON bool
	var vo verify.Opts
	show := &cobra.Command{
		Use:   "show ADDRESS|KEYNAME",
		Short: "Show an account's balance and nonce",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			addr, err := f.ResolveAddress(args[0])
			if err != nil {
				return err
			}
			if vo.On {
				return showVerifiedAccount(cmd, f, &vo, addr, asJSON)
			}
			acc, err := f.Client().Chain().Account(cmd.Context(), addr)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, acc)
			}
			bal, err := sdk.ParseAmount(acc.Balance)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Address   %s\n", acc.Address)
			fmt.Fprintf(f.Out, "Balance   %s\n", sdk.FormatCBY(bal))
			fmt.Fprintf(f.Out, "Nonce     %d (next %d)\n", acc.Nonce, acc.PendingNonce)
			if acc.CodeHash != nil {
				fmt.Fprintf(f.Out, "Code      %s\n", acc.CodeHash)
			}
			fmt.Fprintf(f.Out, "At height %d\n", acc.Height)
			return nil
		},
	}
	cmdutil.JSONFlag(show, &asJSON)
	verify.AddFlags(show, &vo)
	cmd.AddCommand(show)
	return cmd
}
