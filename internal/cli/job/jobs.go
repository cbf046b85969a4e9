package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

// readJobSpec reads a JobSpec in its JSON form (docs/OFFCHAIN.md): numbers
// for amounts (base units), 0x-hex addresses and hashes, base64 for the
// byte fields (input, json_schema, required_runner_pool), 0x-hex for a
// volume's token (volumes, as `cowboy volume grant` prints it). Unknown
// fields are refused.
func readJobSpec(in io.Reader, file string) (*job.JobSpec, error) {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(io.LimitReader(in, 1<<20))
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s job.JobSpec
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("job spec %s: %w", file, err)
	}
	return &s, nil
}

func newJobSubmitCmd(f *Factory) *cobra.Command {
	var (
		tf   cmdutil.TxFlags
		file string
	)
	cmd := &cobra.Command{
		Use:   "submit --spec FILE|- [--from KEY]",
		Short: "Submit a job to the Job Dispatcher (0x…02); max_price + tip are escrowed from the sender",
		Long: "FILE is a JobSpec in JSON (see docs/OFFCHAIN.md and examples/jobs/). job_id, submitter and\n" +
			"submitted_at are set by the chain; the callback actor receives the verified result. The job id\n" +
			"is the receipt's return value; follow the job with `cowboy job show ID`.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return fmt.Errorf("--spec is required")
			}
			spec, err := readJobSpec(f.In, file)
			if err != nil {
				return err
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			spec.Submitter = types.PubkeyToAddress(key.PublicKey)
			if spec.Callback.Actor == (types.Address{}) {
				return fmt.Errorf("job spec: callback.actor is required")
			}
			tx, err := f.Client().Account(key).Jobs().Submit(cmd.Context(), spec, sdk.TxOptions{})
			if err != nil {
				return err
			}
			if err := f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON); err != nil || !tf.Wait || tf.AsJSON {
				return err
			}
			r, err := f.Client().Chain().Tx(cmd.Context(), tx.Hash())
			if err != nil {
				return err
			}
			var id []byte
			if r.Receipt != nil && codec.Unmarshal(r.Receipt.Return, &id) == nil && len(id) == len(types.Hash{}) {
				fmt.Fprintf(f.Out, "Job id: 0x%x\n", id)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "spec", "", "JobSpec JSON file, or - for standard input")
	tf.Add(cmd)
	return cmd
}

func newJobShowCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show JOB_ID",
		Short: "Show a job: status, committee, aggregator, commitments, reveals, result and payments",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			id, err := types.ParseHash(a[0])
			if err != nil {
				return err
			}
			j, err := f.Client().Jobs().Get(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, j)
			}
			w := f.Out
			status := j.Status.String()
			if j.FailReason != "" {
				status += " (" + j.FailReason + ")"
			}
			fmt.Fprintf(w, "Job         %s\n", j.ID)
			fmt.Fprintf(w, "Status      %s (deadline %d, head %d, attempt %d)\n", status, j.Deadline, j.Height, j.Retry+1)
			fmt.Fprintf(w, "Type        %s, %s\n", j.JobType, j.Mode)
			fmt.Fprintf(w, "Submitter   %s at %d; callback %s.%s\n", j.Submitter, j.SubmittedAt, j.Callback, j.Handler)
			fmt.Fprintf(w, "Escrow      max price %s + tip %s\n", sdk.FormatCBY(cmdutil.MustBig(j.MaxPrice)), sdk.FormatCBY(cmdutil.MustBig(j.Tip)))
			fmt.Fprintf(w, "Selection   seed %s, candidate root %s; stake-weighted draw, attempt %d (check: cowboy job select --job %s)\n",
				j.Seed, j.CandidateRoot, j.Retry+1, j.ID)
			fmt.Fprintf(w, "Committee   %s\n", joinAddrs(j.Committee))
			fmt.Fprintf(w, "Aggregator  %s\n", j.Aggregator)
			for _, c := range j.Commitments {
				fmt.Fprintf(w, "Commitment  %s %s (block %d)\n", c.Runner, c.Hash, c.Block)
			}
			for _, r := range j.Reveals {
				fmt.Fprintf(w, "Reveal      %s %q\n", r.Runner, string(r.Result))
				if u := r.Report; u != nil {
					fmt.Fprintf(w, "  usage     %d tokens, %d ms, %d bytes", u.Tokens, u.WallTimeMs, u.MemoryBytes)
					if u.Fault != "" {
						fmt.Fprintf(w, "; fault %s at %d bps progress", u.Fault, u.ProgressBps)
					}
					fmt.Fprintln(w)
				}
			}
			if j.Result != nil {
				fmt.Fprintf(w, "Result      %q (hash %s)\n", string(j.Result), j.ResultHash)
				fmt.Fprintf(w, "Agreed      %s\n", joinAddrs(j.Agreed))
				fmt.Fprintf(w, "Dissented   %s\n", joinAddrs(j.Dissented))
			}
			for _, cb := range j.Callbacks {
				res := "ok"
				if !cb.OK {
					res = "failed: " + cb.Error
				}
				fmt.Fprintf(w, "Callback    %s delivered at %d (%s), receipt %s\n", cb.Status, cb.Height, res, cb.Receipt)
			}
			if p := j.Payments; p != nil {
				fmt.Fprintf(w, "Settled     %s at %d: payment %s, refund %s\n", p.Outcome, p.Height, sdk.FormatCBY(cmdutil.MustBig(p.Payment)), sdk.FormatCBY(cmdutil.MustBig(p.Refund)))
				for _, t := range p.Transfers {
					fmt.Fprintf(w, "  %-9s %s %s\n", t.Kind, t.To, sdk.FormatCBY(cmdutil.MustBig(t.Amount)))
				}
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func joinAddrs(as []types.Address) string {
	if len(as) == 0 {
		return "-"
	}
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}
