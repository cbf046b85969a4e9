package status

import (
	"fmt"
	"math/big"
	"time"

	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

func NewCmdStatus(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the node's chain status",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := f.Client().Chain().Status(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, st)
			}
			burned, _ := sdk.ParseAmount(st.Burned)
			if burned == nil {
				burned = new(big.Int)
			}
			ts := time.UnixMilli(int64(st.TimestampMs)).UTC().Format(time.RFC3339)
			fmt.Fprintf(f.Out, "Node             %s (version %s)\n", f.Client().URL(), st.Version)
			fmt.Fprintf(f.Out, "Chain id         %d\n", st.ChainID)
			fmt.Fprintf(f.Out, "Height           %d (finalized %d) at %s\n", st.Height, st.FinalizedHeight, ts)
			fmt.Fprintf(f.Out, "Head             %s\n", st.HeadHash)
			fmt.Fprintf(f.Out, "Basefees         %d per cycle, %d per cell (base units)\n", st.BasefeeCycle, st.BasefeeCell)
			fmt.Fprintf(f.Out, "Pending txs      %d\n", st.PendingTxs)
			fmt.Fprintf(f.Out, "Burned           %s\n", sdk.FormatCBY(burned))
			fmt.Fprintf(f.Out, "Faucet           %v\n", st.Faucet)
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}
