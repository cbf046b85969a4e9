package timer

import (
	"fmt"
	"io"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

func NewCmdTimer(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "timer",
		Short: "Inspect native timers (set by actors with runtime.set_timer / set_interval)",
	}
	cmd.AddCommand(newTimerListCmd(f), newTimerShowCmd(f), newTimerStatsCmd(f))
	return cmd
}

func newTimerListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list ACTOR",
		Short: "List an actor's pending timers",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			owner, err := types.ParseAddress(args[0])
			if err != nil {
				return fmt.Errorf("actor address: %w", err)
			}
			l, err := f.Client().Timers().List(cmd.Context(), owner)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, l)
			}
			fmt.Fprintf(f.Out, "Timers of %s (queue at height %d): %d\n", l.Owner, l.Height, len(l.Timers))
			for _, t := range l.Timers {
				kind := "once"
				if t.Interval > 0 {
					kind = fmt.Sprintf("every %d", t.Interval)
				}
				state := "pending"
				if t.Due {
					state = fmt.Sprintf("due, deferred %d", t.Deferrals)
				}
				fmt.Fprintf(f.Out, "  %s  %s at %d (%s, %s)\n", t.ID, t.Handler, t.Target, kind, state)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newTimerShowCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one pending timer",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := types.ParseHash(args[0])
			if err != nil {
				return fmt.Errorf("timer id: %w", err)
			}
			t, err := f.Client().Timers().Get(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, t)
			}
			printTimer(f.Out, t)
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func printTimer(w io.Writer, t *apitypes.Timer) {
	fmt.Fprintf(w, "Timer %s\n", t.ID)
	fmt.Fprintf(w, "  owner      %s\n", t.Owner)
	fmt.Fprintf(w, "  handler    %s\n", t.Handler)
	if len(t.Decoded) > 0 {
		fmt.Fprintf(w, "  data       %s\n", string(t.Decoded))
	}
	fmt.Fprintf(w, "  target     %d (due %v, deferred %d times)\n", t.Target, t.Due, t.Deferrals)
	if t.Interval > 0 {
		fmt.Fprintf(w, "  interval   every %d blocks\n", t.Interval)
	} else {
		fmt.Fprintf(w, "  interval   one-shot\n")
	}
	fmt.Fprintf(w, "  deposit    %s\n", cmdutil.Amount(t.Deposit))
	if t.GBA != nil {
		fmt.Fprintf(w, "  gba        %s\n", t.GBA)
	} else {
		fmt.Fprintf(w, "  gba        (network default bid)\n")
	}
	fmt.Fprintf(w, "  created at %d\n", t.CreatedAt)
}

func newTimerStatsCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show the timer queue's counters and economics",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := f.Client().Timers().Stats(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, st)
			}
			fmt.Fprintf(f.Out, "Queue height     %d\n", st.Height)
			fmt.Fprintf(f.Out, "Pending          %d (tier 1 %d, tier 2 %d, tier 3 %d, due %d)\n", st.Depth, st.Tier1, st.Tier2, st.Tier3, st.Due)
			fmt.Fprintf(f.Out, "Timer basefee    %d base units per schedule\n", st.Basefee)
			fmt.Fprintf(f.Out, "Base deposit     %s\n", cmdutil.Amount(st.BaseDeposit))
			fmt.Fprintf(f.Out, "Lane budget      %d cycles per block\n", st.LaneBudget)
			fmt.Fprintf(f.Out, "Per-actor cap    %d timers\n", st.MaxPerOwner)
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}
