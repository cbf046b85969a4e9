package relay

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

func NewCmdRelay(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "relay", Short: "Inspect CBFS relay nodes in the Relay Registry"}
	var listJSON, all bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List registered relays with their health",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rs, err := f.Client().Relays().List(cmd.Context())
			if err != nil {
				return err
			}
			if all {
				rs = nil
				if err := getJSON(f, cmd, "/v1/relays?all=true", &rs); err != nil {
					return err
				}
			}
			if listJSON {
				if rs == nil {
					rs = []apitypes.Relay{}
				}
				return cmdutil.PrintJSON(f.Out, rs)
			}
			if len(rs) == 0 {
				fmt.Fprintln(f.Out, "No relays registered.")
			}
			for _, r := range rs {
				fmt.Fprintf(f.Out, "%s  %-22s %-8s used %s / %s  stake %s  last heartbeat %d\n", r.ID, r.Addr, health(r), cmdutil.BytesText(r.Used), cmdutil.BytesText(r.Capacity), cmdutil.Amount(r.Stake), r.LastHeartbeat)
			}
			return nil
		},
	}
	list.Flags().BoolVar(&all, "all", false, "include relays that have left")
	cmdutil.JSONFlag(list, &listJSON)
	var stJSON bool
	status := &cobra.Command{
		Use:   "status ADDRESS",
		Short: "Show one relay's registry record",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			id, err := types.ParseAddress(a[0])
			if err != nil {
				return err
			}
			r, err := f.Client().Relays().Get(cmd.Context(), id)
			if err != nil {
				return err
			}
			if stJSON {
				return cmdutil.PrintJSON(f.Out, r)
			}
			fmt.Fprintf(f.Out, "Relay      %s\n", r.ID)
			fmt.Fprintf(f.Out, "Address    %s\n", r.Addr)
			fmt.Fprintf(f.Out, "Status     %s, %s\n", r.Status, health(*r))
			fmt.Fprintf(f.Out, "Capacity   %s used of %s\n", cmdutil.BytesText(r.Used), cmdutil.BytesText(r.Capacity))
			fmt.Fprintf(f.Out, "Stake      %s\n", cmdutil.Amount(r.Stake))
			fmt.Fprintf(f.Out, "Heartbeat  block %d (head %d); registered at %d\n", r.LastHeartbeat, r.Height, r.RegisteredAt)
			if c := r.Challenges; c != nil {
				fmt.Fprintf(f.Out, "Challenges %d answered, %d failed, %d missed (%d in a row); reputation %d/1000\n", c.Answered, c.Failed, c.Missed, c.Consecutive, c.Reputation)
				if c.Flagged {
					fmt.Fprintf(f.Out, "Flagged    until epoch %d: clients repair shards away from this relay\n", c.FlaggedUntil)
				}
				fmt.Fprintf(f.Out, "Earnings   %s rent claimed; %s stake slashed\n", cmdutil.Amount(c.Earned), cmdutil.Amount(c.Slashed))
				if c.UnbondAt != 0 {
					fmt.Fprintf(f.Out, "Unbonding  stake returns at block %d\n", c.UnbondAt)
				}
			}
			ch, err := f.Client().Relays().Challenges(cmd.Context(), id)
			if err != nil {
				return err
			}
			if n := len(ch.Challenges); n > 0 {
				fmt.Fprintf(f.Out, "Recent challenges (epoch %d now, %d blocks each)\n", ch.Epoch, ch.EpochBlocks)
				for _, c := range ch.Challenges[max(0, n-10):] {
					fmt.Fprintf(f.Out, "  epoch %-4d volume %s  %-8s rent %s\n", c.Epoch, c.Volume, c.Status, cmdutil.Amount(c.Rent))
				}
			}
			return nil
		},
	}
	cmdutil.JSONFlag(status, &stJSON)
	cmd.AddCommand(list, status)
	return cmd
}

func health(r apitypes.Relay) string {
	if r.Healthy {
		return "healthy"
	}
	return "unhealthy"
}

// getJSON fetches a node path not covered by a typed SDK method.
func getJSON(f *Factory, cmd *cobra.Command, path string, out any) error {
	return f.Client().Chain().GetJSON(cmd.Context(), path, out)
}
