package cli

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/offchain/selection"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
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
	cmd.AddCommand(sel, newJobSubmitCmd(f), newJobShowCmd(f), newJobChallengeCmd(f))
	return cmd
}

func newJobChallengeCmd(f *Factory) *cobra.Command {
	var evidence, bond string
	cmd := sendCmd(f, "challenge JOB_ID [--evidence FILE] [--bond AMOUNT] [--from KEY]",
		"Challenge a verified result within its challenge window, posting the bond",
		"With --evidence (a file holding a committee member's signed reveal as canonical CBOR, hex), the\n"+
			"chain checks for equivocation: a valid signature over a result that contradicts the member's\n"+
			"commitment. Without it, the chain re-runs verification over the stored reveals. Upheld: the\n"+
			"culprits lose 30% of their stake (70% of it to you, 30% burned) and the bond comes back; otherwise\n"+
			"the bond is burned.",
		cobra.ExactArgs(1), func(cmd *cobra.Command, a []string, tf *txFlags) (*types.Tx, error) {
			id, err := types.ParseHash(a[0])
			if err != nil {
				return nil, fmt.Errorf("job id: %w", err)
			}
			b, err := parseAmountArg(bond)
			if err != nil {
				return nil, fmt.Errorf("--bond: %w", err)
			}
			var ev *verify.Reveal
			if evidence != "" {
				raw, err := os.ReadFile(evidence)
				if err != nil {
					return nil, err
				}
				cb, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(string(raw)), "0x"))
				if err != nil {
					return nil, fmt.Errorf("--evidence: hex: %w", err)
				}
				if ev, err = verify.DecodeReveal(cb); err != nil {
					return nil, fmt.Errorf("--evidence: %w", err)
				}
			}
			key, err := f.signer(tf.from)
			if err != nil {
				return nil, err
			}
			return f.Client().ChallengeResult(cmd.Context(), key, id, ev, b, sdk.TxOptions{})
		})
	cmd.Flags().StringVar(&evidence, "evidence", "", "file with the signed reveal (canonical CBOR, hex)")
	cmd.Flags().StringVar(&bond, "bond", "100", "challenge bond (the chain's challenge_bond, CBY)")
	return cmd
}
