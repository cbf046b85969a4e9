package tx

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

func NewCmdTx(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "tx", Short: "Send, inspect and encode transactions"}
	cmd.AddCommand(newTransferCmd(f), newTxShowCmd(f), newTxEncodeCmd(f))
	return cmd
}

func newTransferCmd(f *Factory) *cobra.Command {
	var (
		to, value, from string
		wait            bool
		timeout         time.Duration
		asJSON          bool
		tip             uint64
	)
	cmd := &cobra.Command{
		Use:   "transfer --to ADDRESS --value AMOUNT [--from KEYNAME]",
		Short: "Transfer CBY (AMOUNT in CBY, e.g. 1.5, or base units with the suffix wei)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" || value == "" {
				return fmt.Errorf("--to and --value are required")
			}
			dest, err := f.ResolveAddress(to)
			if err != nil {
				return err
			}
			amount, err := sdk.ParseCBY(value)
			if err != nil {
				return err
			}
			key, err := f.Signer(from)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).Transfer(cmd.Context(), dest, amount, sdk.TxOptions{TipPerCycle: tip})
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), wait, timeout, asJSON)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "recipient address or key name")
	cmd.Flags().StringVar(&value, "value", "", "amount in CBY (\"1.5\") or base units (\"1500wei\")")
	cmd.Flags().StringVar(&from, "from", "", "sending key name (default: the only key)")
	cmd.Flags().BoolVar(&wait, "wait", true, "wait for the receipt")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the receipt")
	cmd.Flags().Uint64Var(&tip, "tip", 0, "tip per cycle in base units (default 1)")
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newTxShowCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show HASH",
		Short: "Show a transaction and its receipt",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := types.ParseHash(args[0])
			if err != nil {
				return err
			}
			r, err := f.Client().Chain().Tx(cmd.Context(), h)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, r)
			}
			cmdutil.PrintTxResult(f.Out, r)
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newTxEncodeCmd(f *Factory) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "encode --json FILE|-",
		Short: "Print a JSON transaction's canonical CBOR (hex) and signing hash",
		Long: "Reads a transaction as a JSON object keyed by the spec's field names (chain_id, nonce, to, value,\n" +
			"cycles_limit, cells_limit, max_fee_per_cycle, max_fee_per_cell, tip_per_cycle, tip_per_cell,\n" +
			"access_list, payload, signature) and prints the canonical CBOR as hex on line 1 and the signing\n" +
			"hash keccak256(CBOR(tx with signature = null)) on line 2.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return fmt.Errorf("--json FILE (or - for standard input) is required")
			}
			var data []byte
			var err error
			if file == "-" {
				data, err = io.ReadAll(io.LimitReader(f.In, 4*types.MaxTxSize))
			} else {
				data, err = os.ReadFile(file)
			}
			if err != nil {
				return err
			}
			tx, err := parseTxJSON(data)
			if err != nil {
				return err
			}
			if tx.Size() > types.MaxTxSize {
				return fmt.Errorf("%w: %d bytes", types.ErrTxTooLarge, tx.Size())
			}
			fmt.Fprintln(f.Out, hex.EncodeToString(tx.Encode()))
			fmt.Fprintln(f.Out, tx.SigningHash())
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "json", "", "JSON transaction file, or - for standard input")
	return cmd
}
