package ledger

import (
	"fmt"
	"time"

	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

func NewCmdFaucet(f *Factory) *cobra.Command {
	var (
		value   string
		wait    bool
		asJSON  bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "faucet ADDRESS|KEYNAME --value AMOUNT",
		Short: "Fund an address from a devnet node's faucet (AMOUNT in CBY)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if value == "" {
				return fmt.Errorf("--value is required")
			}
			addr, err := f.ResolveAddress(args[0])
			if err != nil {
				return err
			}
			v, err := sdk.ParseCBY(value)
			if err != nil {
				return err
			}
			h, err := f.Client().Chain().Faucet(cmd.Context(), addr, v)
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), h, wait, timeout, asJSON)
		},
	}
	cmd.Flags().StringVar(&value, "value", "", "amount in CBY (\"100\") or base units (\"1500wei\")")
	cmd.Flags().BoolVar(&wait, "wait", true, "wait for the receipt")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the receipt")
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func NewCmdBlock(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "block", Short: "Inspect blocks"}
	var asJSON bool
	show := &cobra.Command{
		Use:   "show HEIGHT|HASH|latest",
		Short: "Show a block",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := f.Client().Chain().Block(cmd.Context(), args[0], true)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, b)
			}
			h := b.Header
			fmt.Fprintf(f.Out, "Block %d %s\n", h.Height, b.Hash)
			fmt.Fprintf(f.Out, "  parent        %s\n", h.ParentHash)
			fmt.Fprintf(f.Out, "  time          %s\n", time.UnixMilli(int64(h.Timestamp)).UTC().Format(time.RFC3339Nano))
			fmt.Fprintf(f.Out, "  proposer      %s\n", h.Proposer)
			fmt.Fprintf(f.Out, "  state root    %s\n", h.StateRoot)
			fmt.Fprintf(f.Out, "  tx root       %s\n", h.TxRoot)
			fmt.Fprintf(f.Out, "  receipts root %s\n", h.ReceiptsRoot)
			fmt.Fprintf(f.Out, "  basefees      %d/cycle, %d/cell\n", h.BasefeeCycle, h.BasefeeCell)
			fmt.Fprintf(f.Out, "  used          %d cycles, %d cells\n", h.CyclesUsed, h.CellsUsed)
			fmt.Fprintf(f.Out, "  transactions  %d\n", len(b.TxHashes))
			for i, th := range b.TxHashes {
				status := ""
				if i < len(b.Receipts) {
					status = b.Receipts[i].Status
				}
				fmt.Fprintf(f.Out, "    %3d %s %s\n", i, th, status)
			}
			if n := len(b.TimerReceipts); n > 0 {
				fmt.Fprintf(f.Out, "  timer receipts %d\n", n)
				for i, th := range b.TimerReceipts {
					status := ""
					if j := len(b.TxHashes) + i; j < len(b.Receipts) {
						status = b.Receipts[j].Status
					}
					fmt.Fprintf(f.Out, "    %3d %s %s\n", len(b.TxHashes)+i, th, status)
				}
			}
			return nil
		},
	}
	cmdutil.JSONFlag(show, &asJSON)
	cmd.AddCommand(show)
	return cmd
}

func NewCmdEvents(f *Factory) *cobra.Command {
	var (
		emitter, topic, cursor string
		from, to               uint64
		limit                  int
		asJSON                 bool
	)
	cmd := &cobra.Command{
		Use:   "events [--emitter ADDRESS] [--topic T] [--from H] [--to H]",
		Short: "List events by emitter, topic and height range",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := sdk.EventQuery{Topic: topic, From: from, To: to, Limit: limit, Cursor: cursor}
			if emitter != "" {
				a, err := f.ResolveAddress(emitter)
				if err != nil {
					return err
				}
				q.Emitter = &a
			}
			page, err := f.Client().Chain().Events(cmd.Context(), q)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, page)
			}
			for _, ev := range page.Events {
				fmt.Fprintf(f.Out, "%8d  %-12s %s %s\n", ev.Height, ev.Topic, ev.Emitter, string(ev.Decoded))
			}
			if page.NextCursor != "" {
				fmt.Fprintf(f.Out, "More: --cursor %s\n", page.NextCursor)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&emitter, "emitter", "", "emitter address or key name")
	cmd.Flags().StringVar(&topic, "topic", "", "event topic")
	cmd.Flags().Uint64Var(&from, "from", 0, "first height")
	cmd.Flags().Uint64Var(&to, "to", 0, "last height (default head)")
	cmd.Flags().IntVar(&limit, "limit", 100, "page size (max 1000)")
	cmd.Flags().StringVar(&cursor, "cursor", "", "resume from a previous page")
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}
