package cmdutil

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

// TxFlags are the common flags of commands that send a transaction.
type TxFlags struct {
	From    string
	Wait    bool
	Timeout time.Duration
	AsJSON  bool
}

// Add registers --from, --wait, --timeout and --json on cmd.
func (t *TxFlags) Add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.From, "from", "", "sending key name (default: the only key)")
	cmd.Flags().BoolVar(&t.Wait, "wait", true, "wait for the receipt")
	cmd.Flags().DurationVar(&t.Timeout, "timeout", 30*time.Second, "how long to wait for the receipt")
	JSONFlag(cmd, &t.AsJSON)
}

// ParseAmountFlag parses a CBY amount flag; an empty value is nil.
func ParseAmountFlag(name, s string) (*big.Int, error) {
	if s == "" {
		return nil, nil
	}
	v, err := sdk.ParseCBY(s)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", name, err)
	}
	return v, nil
}

// SplitList splits a comma-separated list, dropping empty entries.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// MustBig parses a decimal integer, 0 if it is not one.
func MustBig(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return new(big.Int)
	}
	return v
}

// ParseAmountArg parses a positive CBY amount argument.
func ParseAmountArg(s string) (*big.Int, error) {
	v, err := sdk.ParseCBY(s)
	if err != nil {
		return nil, fmt.Errorf("amount %q: %w", s, err)
	}
	if v.Sign() <= 0 {
		return nil, fmt.Errorf("amount %q: must be positive", s)
	}
	return v, nil
}

// SendCmd builds a transaction-sending command whose RunE produces the tx.
func SendCmd(f *Factory, use, short, long string, args cobra.PositionalArgs, send func(cmd *cobra.Command, a []string, tf *TxFlags) (*types.Tx, error)) *cobra.Command {
	var tf TxFlags
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Args: args,
		RunE: func(cmd *cobra.Command, a []string) error {
			tx, err := send(cmd, a, &tf)
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		}}
	tf.Add(cmd)
	return cmd
}

// ReportSubmitted prints a submitted transaction's hash and, when waiting,
// its receipt.
func (f *Factory) ReportSubmitted(ctx context.Context, h types.Hash, wait bool, timeout time.Duration, asJSON bool) error {
	if !wait {
		if asJSON {
			return PrintJSON(f.Out, apitypes.SubmitTxResult{Hash: h})
		}
		fmt.Fprintf(f.Out, "Submitted %s\n", h)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := f.Client().Chain().WaitForReceipt(ctx, h)
	if err != nil {
		return err
	}
	if asJSON {
		return PrintJSON(f.Out, r)
	}
	PrintTxResult(f.Out, r)
	if r.Receipt != nil && r.Receipt.Status != "success" {
		return fmt.Errorf("transaction %s failed: %s", h, r.Receipt.Error)
	}
	return nil
}

// Amount formats a base-unit amount as CBY (unparseable text as is).
func Amount(s string) string {
	v, err := sdk.ParseAmount(s)
	if err != nil {
		return s
	}
	return sdk.FormatCBY(v)
}

// PrintTxResult prints a transaction and its receipt.
func PrintTxResult(w io.Writer, r *apitypes.TxResult) {
	if r.Kind == apitypes.ReceiptKindTimer && r.Receipt != nil {
		PrintTimerReceipt(w, r)
		return
	}
	t := r.Tx
	fmt.Fprintf(w, "Transaction %s\n", t.Hash)
	fmt.Fprintf(w, "  status     %s\n", r.Status)
	fmt.Fprintf(w, "  from       %s (nonce %d)\n", t.From, t.Nonce)
	if t.To != nil {
		fmt.Fprintf(w, "  to         %s\n", t.To)
	} else {
		fmt.Fprintf(w, "  to         (actor creation)\n")
	}
	fmt.Fprintf(w, "  value      %s\n", Amount(t.Value))
	fmt.Fprintf(w, "  limits     %d cycles, %d cells\n", t.CyclesLimit, t.CellsLimit)
	fmt.Fprintf(w, "  max fees   %d/cycle, %d/cell (tips %d, %d)\n", t.MaxFeePerCycle, t.MaxFeePerCell, t.TipPerCycle, t.TipPerCell)
	if r.BlockHeight != nil {
		fmt.Fprintf(w, "  block      %d (%s) index %d\n", *r.BlockHeight, r.BlockHash, *r.Index)
	}
	if rc := r.Receipt; rc != nil {
		fmt.Fprintf(w, "Receipt\n")
		fmt.Fprintf(w, "  result     %s\n", rc.Status)
		if rc.Error != "" {
			fmt.Fprintf(w, "  error      %s\n", rc.Error)
		}
		fmt.Fprintf(w, "  used       %d cycles, %d cells\n", rc.CyclesUsed, rc.CellsUsed)
		fmt.Fprintf(w, "  fee paid   %s (burned %s, tip %s)\n", Amount(rc.FeePaid), Amount(rc.Burned), Amount(rc.Tip))
		for _, ev := range rc.Events {
			fmt.Fprintf(w, "  event      %s from %s %s\n", ev.Topic, ev.Emitter, string(ev.Decoded))
		}
	}
}

// PrintTimerReceipt prints a timer execution's receipt (no transaction).
func PrintTimerReceipt(w io.Writer, r *apitypes.TxResult) {
	rc := r.Receipt
	fmt.Fprintf(w, "Timer receipt %s\n", rc.TxHash)
	if r.BlockHeight != nil {
		fmt.Fprintf(w, "  block      %d (%s) index %d\n", *r.BlockHeight, r.BlockHash, *r.Index)
	}
	fmt.Fprintf(w, "  result     %s\n", rc.Status)
	if rc.Error != "" {
		fmt.Fprintf(w, "  error      %s\n", rc.Error)
	}
	fmt.Fprintf(w, "  used       %d cycles, %d cells\n", rc.CyclesUsed, rc.CellsUsed)
	fmt.Fprintf(w, "  fee paid   %s (burned %s, tip %s)\n", Amount(rc.FeePaid), Amount(rc.Burned), Amount(rc.Tip))
	for _, ev := range rc.Events {
		fmt.Fprintf(w, "  event      %s from %s %s\n", ev.Topic, ev.Emitter, string(ev.Decoded))
	}
}

// BytesText formats a size in binary units.
func BytesText(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
