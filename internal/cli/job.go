package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/cowboy-foundation/cowboy/chain/offchain/selection"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/spf13/cobra"
)

func newJobCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "job", Short: "Off-chain compute jobs (CIP-2)"}
	var (
		seed, file string
		m          int
	)
	sel := &cobra.Command{
		Use:   "select --seed 0x… --m N --candidates FILE|-",
		Short: "Recompute a committee selection: stake-weighted Fisher-Yates over the candidates (seed 004 §5)",
		Long: "Reads a JSON list of {\"address\": \"0x…\", \"stake\": \"<base units>\"} (any order) and prints the\n" +
			"selected addresses one per line in selection order — the same function the Job Dispatcher runs,\n" +
			"so anyone can verify an assignment from chain data.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if seed == "" || file == "" || m <= 0 {
				return fmt.Errorf("--seed, --m (> 0) and --candidates are required")
			}
			s, err := types.ParseHash(seed)
			if err != nil {
				return fmt.Errorf("--seed: %w", err)
			}
			var data []byte
			if file == "-" {
				data, err = io.ReadAll(io.LimitReader(f.In, 64<<20))
			} else {
				data, err = os.ReadFile(file)
			}
			if err != nil {
				return err
			}
			picked, err := selection.SelectFromJSON(s, m, data)
			if err != nil {
				return err
			}
			for _, a := range picked {
				fmt.Fprintln(f.Out, a)
			}
			return nil
		},
	}
	sel.Flags().StringVar(&seed, "seed", "", "32-byte selection seed (0x-hex)")
	sel.Flags().IntVar(&m, "m", 0, "committee size")
	sel.Flags().StringVar(&file, "candidates", "", "JSON candidate list, or - for standard input")
	cmd.AddCommand(sel, newJobSubmitCmd(f), newJobShowCmd(f))
	return cmd
}
