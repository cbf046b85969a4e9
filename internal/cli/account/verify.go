package account

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/internal/cli/verify"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

// showVerifiedAccount is `account show ADDR --verify`: the account as
// proven against a certified header, never the node's unverified view.
func showVerifiedAccount(cmd *cobra.Command, f *Factory, o *verify.Opts, addr types.Address, asJSON bool) error {
	lc, err := o.LightClient()
	if err != nil {
		return err
	}
	acc, v, err := lc.Account(cmd.Context(), f.Client(), addr)
	if err != nil {
		return verify.Failed("account "+addr.String(), err)
	}
	if asJSON {
		return cmdutil.PrintJSON(f.Out, struct {
			Address  types.Address `json:"address"`
			Balance  string        `json:"balance"`
			Nonce    uint64        `json:"nonce"`
			CodeHash *types.Hash   `json:"code_hash"`
			Verified verify.JSON   `json:"verified"`
		}{addr, acc.Balance.String(), acc.Nonce, acc.CodeHash, verify.Info(v)})
	}
	fmt.Fprintf(f.Out, "Address   %s\n", addr)
	fmt.Fprintf(f.Out, "Balance   %s\n", sdk.FormatCBY(acc.Balance))
	fmt.Fprintf(f.Out, "Nonce     %d\n", acc.Nonce)
	if acc.CodeHash != nil {
		fmt.Fprintf(f.Out, "Code      %s\n", acc.CodeHash)
	}
	verify.Print(f.Out, v)
	return nil
}
