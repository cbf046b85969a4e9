package job

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/offchain/selection"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

func NewCmdJob(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "job", Short: "Off-chain compute jobs (CIP-2)"}
	var (
		seed, file, jobID string
		m                 int
	)
	sel := &cobra.Command{
		Use:   "select --seed 0x… --m N --candidates FILE|- | --job ID",
		Short: "Recompute a committee selection: stake-weighted Fisher-Yates over the candidates (seed 004 §5)",
		Long: "Reads a JSON list of {\"address\": \"0x…\", \"stake\": \"<base units>\"} (any order) and prints the\n" +
			"selected addresses one per line in selection order — the same function the Job Dispatcher runs,\n" +
			"so anyone can verify an assignment from chain data.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if jobID != "" {
				return verifyJobSelection(cmd, f, jobID)
			}
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
	sel.Flags().StringVar(&jobID, "job", "", "recompute a job's current committee from the node's snapshot and check it")
	cmd.AddCommand(sel, newJobSubmitCmd(f), newJobShowCmd(f), newJobChallengeCmd(f))
	return cmd
}

func newJobChallengeCmd(f *Factory) *cobra.Command {
	var evidence, bond string
	cmd := cmdutil.SendCmd(f, "challenge JOB_ID [--evidence FILE] [--bond AMOUNT] [--from KEY]",
		"Challenge a verified result within its challenge window, posting the bond",
		"With --evidence (a file holding a committee member's signed reveal as canonical CBOR, hex), the\n"+
			"chain checks for equivocation: a valid signature over a result that contradicts the member's\n"+
			"commitment. Without it, the chain re-runs verification over the stored reveals. Upheld: the\n"+
			"culprits lose 30% of their stake (70% of it to you, 30% burned) and the bond comes back; otherwise\n"+
			"the bond is burned.",
		cobra.ExactArgs(1), func(cmd *cobra.Command, a []string, tf *cmdutil.TxFlags) (*types.Tx, error) {
			id, err := types.ParseHash(a[0])
			if err != nil {
				return nil, fmt.Errorf("job id: %w", err)
			}
			b, err := cmdutil.ParseAmountArg(bond)
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
			key, err := f.Signer(tf.From)
			if err != nil {
				return nil, err
			}
			return f.Client().Account(key).Jobs().Challenge(cmd.Context(), id, ev, b, sdk.TxOptions{})
		})
	cmd.Flags().StringVar(&evidence, "evidence", "", "file with the signed reveal (canonical CBOR, hex)")
	cmd.Flags().StringVar(&bond, "bond", "100", "challenge bond (the chain's challenge_bond, CBY)")
	return cmd
}

// verifyJobSelection recomputes a job's current attempt from its stored
// candidate snapshot (GET /v1/jobs/{id}/selection): the candidate root, the
// stake-weighted selection and the aggregator, and checks them against the
// job record. It prints the selected addresses one per line.
func verifyJobSelection(cmd *cobra.Command, f *Factory, jobID string) error {
	id, err := types.ParseHash(jobID)
	if err != nil {
		return fmt.Errorf("--job: %w", err)
	}
	c := f.Client()
	sel, err := c.Jobs().Selection(cmd.Context(), id)
	if err != nil {
		return err
	}
	j, err := c.Jobs().Get(cmd.Context(), id)
	if err != nil {
		return err
	}
	snap := make([]selection.SnapshotEntry, len(sel.Candidates))
	for i, e := range sel.Candidates {
		st, err := selection.ParseStake(e.Stake)
		if err != nil {
			return fmt.Errorf("candidate %s: %w", e.Address, err)
		}
		snap[i] = selection.SnapshotEntry{Address: e.Address, Stake: st, Reputation: e.Reputation}
	}
	root, err := selection.CandidateRoot(snap)
	if err != nil {
		return err
	}
	if root != sel.CandidateRoot {
		return fmt.Errorf("candidate root mismatch: snapshot hashes to %s, the job stores %s", root, sel.CandidateRoot)
	}
	a, err := selection.Assign(snap, sel.Seed, sel.Retry, sel.Excluded, int(sel.Runners))
	if err != nil {
		return fmt.Errorf("selection (attempt %d): %w", sel.Retry+1, err)
	}
	for _, r := range a.Runners {
		fmt.Fprintln(f.Out, r)
	}
	// Late runners are dropped from the committee at the commit deadline, so
	// the job's committee is a subset of the selection in the same order.
	k := 0
	for _, r := range a.Runners {
		if k < len(j.Committee) && j.Committee[k] == r {
			k++
		}
	}
	switch {
	case len(j.Committee) > 0 && k != len(j.Committee):
		return fmt.Errorf("the job's committee %v is not the recomputed selection", j.Committee)
	case len(j.Committee) == len(a.Runners) && j.Aggregator != a.Aggregator:
		return fmt.Errorf("aggregator %s, recomputed %s", j.Aggregator, a.Aggregator)
	}
	fmt.Fprintf(f.ErrOut, "verified: attempt %d, seed %s, %d candidates (root %s), aggregator %s (highest reputation, ties to the lowest address)\n",
		sel.Retry+1, a.Seed, len(snap), root, a.Aggregator)
	return nil
}
