package runner

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

func NewCmdRunner(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "runner", Short: "Off-chain compute runners in the Runner Registry (0x…01)"}
	cmd.AddCommand(newRunnerRegisterCmd(f), newRunnerHeartbeatCmd(f), newRunnerDeregisterCmd(f), newRunnerStatusCmd(f), newRunnerListCmd(f))
	cmd.AddCommand(newRunnerStakingCmds(f)...)
	return cmd
}

var jobTypeNames = map[string]job.JobType{"llm": job.JobTypeLLM, "http": job.JobTypeHTTP, "mcp": job.JobTypeMCP, "custom": job.JobTypeCustom}

// ReadResultKey reads an Ed25519 key: a 0x-hex public key (32 bytes) or
// private key / seed (64 / 32 bytes in a file).
func ReadResultKey(pub, file string) ([]byte, error) {
	switch {
	case pub != "" && file != "":
		return nil, fmt.Errorf("give --result-key or --result-key-file, not both")
	case pub != "":
		b, err := hex.DecodeString(strings.TrimPrefix(pub, "0x"))
		if err != nil || len(b) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("--result-key: want a 32-byte 0x-hex Ed25519 public key")
		}
		return b, nil
	case file != "":
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(string(raw)), "0x"))
		if err != nil {
			return nil, fmt.Errorf("--result-key-file: hex: %w", err)
		}
		switch len(b) {
		case ed25519.SeedSize:
			return ed25519.NewKeyFromSeed(b).Public().(ed25519.PublicKey), nil
		case ed25519.PrivateKeySize:
			return ed25519.PrivateKey(b).Public().(ed25519.PublicKey), nil
		}
		return nil, fmt.Errorf("--result-key-file: want a 32-byte seed or 64-byte private key")
	}
	return nil, fmt.Errorf("--result-key or --result-key-file is required")
}

func newRunnerRegisterCmd(f *Factory) *cobra.Command {
	var (
		tf                                       cmdutil.TxFlags
		pub, keyFile, jobTypes, models, domains  string
		base, perToken, perWallMs, perMiB, stake string
		maxJobValue                              string
		tee                                      bool
		maxJobs                                  uint64
	)
	cmd := &cobra.Command{
		Use:   "register --result-key 0x… --job-types http,llm --stake AMOUNT [--from KEY]",
		Short: "Register (or update) the sending key as a runner; --stake adds to its self-bond",
		Long: "The self-bond must reach max(10,000 CBY, 1.5 × --max-job-value) (the chain's minimum stake is a\n" +
			"parameter; devnets may use less). Rates are in CBY (\"0.01\") or base units (\"1000wei\").",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rk, err := ReadResultKey(pub, keyFile)
			if err != nil {
				return err
			}
			in := &types.RunnerRegister{ResultKey: rk, Models: cmdutil.SplitList(models), Domains: cmdutil.SplitList(domains), TEE: tee, MaxConcurrentJobs: maxJobs}
			for _, t := range cmdutil.SplitList(jobTypes) {
				jt, ok := jobTypeNames[strings.ToLower(t)]
				if !ok {
					return fmt.Errorf("--job-types: unknown job type %q (llm, http, mcp, custom)", t)
				}
				in.JobTypes = append(in.JobTypes, uint64(jt))
			}
			for _, p := range []struct {
				name, val string
				dst       **big.Int
			}{{"base", base, &in.RateBase}, {"per-token", perToken, &in.RatePerToken}, {"per-wall-ms", perWallMs, &in.RatePerWallMs},
				{"per-memory-mib", perMiB, &in.RatePerMemoryMiB}, {"max-job-value", maxJobValue, &in.MaxJobValue}} {
				if *p.dst, err = cmdutil.ParseAmountFlag(p.name, p.val); err != nil {
					return err
				}
			}
			st, err := cmdutil.ParseAmountFlag("stake", stake)
			if err != nil {
				return err
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).Runners().Register(cmd.Context(), in, st, sdk.TxOptions{})
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&pub, "result-key", "", "Ed25519 result public key (0x-hex, 32 bytes)")
	fl.StringVar(&keyFile, "result-key-file", "", "file holding the Ed25519 seed or private key (hex); its public key is registered")
	fl.StringVar(&jobTypes, "job-types", "http", "comma-separated job types: llm, http, mcp, custom")
	fl.StringVar(&models, "models", "", "comma-separated model names")
	fl.StringVar(&domains, "domains", "", "comma-separated HTTP domains served (\"*.example.com\" covers subdomains)")
	fl.BoolVar(&tee, "tee", false, "declare TEE support")
	fl.StringVar(&base, "base", "", "rate per job")
	fl.StringVar(&perToken, "per-token", "", "rate per token")
	fl.StringVar(&perWallMs, "per-wall-ms", "", "rate per millisecond of wall time")
	fl.StringVar(&perMiB, "per-memory-mib", "", "rate per MiB of peak memory")
	fl.Uint64Var(&maxJobs, "max-jobs", 4, "maximum concurrent jobs")
	fl.StringVar(&maxJobValue, "max-job-value", "", "declared maximum job value (stake must be ≥ 1.5 × this)")
	fl.StringVar(&stake, "stake", "", "self-bond to add (CBY)")
	tf.Add(cmd)
	return cmd
}

func newRunnerHeartbeatCmd(f *Factory) *cobra.Command {
	var tf cmdutil.TxFlags
	cmd := &cobra.Command{
		Use:   "heartbeat [--from KEY]",
		Short: "Report the sending runner alive",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).Runners().Heartbeat(cmd.Context(), sdk.TxOptions{})
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	tf.Add(cmd)
	return cmd
}

func newRunnerDeregisterCmd(f *Factory) *cobra.Command {
	var tf cmdutil.TxFlags
	cmd := &cobra.Command{
		Use:   "deregister [--from KEY]",
		Short: "Leave the registry; the self-bond unbonds (withdraw it after the unbonding period; no active jobs allowed)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).Runners().Deregister(cmd.Context(), sdk.TxOptions{})
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	tf.Add(cmd)
	return cmd
}

func runnerHealth(r apitypes.Runner) string {
	if r.Healthy {
		return "healthy"
	}
	return "unhealthy"
}

func newRunnerStatusCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status ADDRESS",
		Short: "Show one runner's registry record",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			addr, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			r, err := f.Client().Runners().Get(cmd.Context(), addr)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, r)
			}
			fmt.Fprintf(f.Out, "Runner      %s\n", r.Address)
			fmt.Fprintf(f.Out, "Status      %s, %s\n", r.Status, runnerHealth(*r))
			fmt.Fprintf(f.Out, "Stake       %s self + %s delegated by %d = %s effective (max job value %s)\n", sdk.FormatCBY(cmdutil.MustBig(r.Stake)),
				sdk.FormatCBY(cmdutil.MustBig(r.Delegated)), r.Delegators, sdk.FormatCBY(cmdutil.MustBig(r.EffectiveStake)), sdk.FormatCBY(cmdutil.MustBig(r.MaxJobValue)))
			fmt.Fprintf(f.Out, "Commission  %d bps; eligible %v; consecutive slashes %d\n", r.CommissionBps, r.Eligible, r.ConsecutiveSlashes)
			fmt.Fprintf(f.Out, "Reputation  %d\n", r.Reputation)
			fmt.Fprintf(f.Out, "Job types   %s\n", strings.Join(r.JobTypes, ", "))
			if len(r.Models) > 0 {
				fmt.Fprintf(f.Out, "Models      %s\n", strings.Join(r.Models, ", "))
			}
			if len(r.Domains) > 0 {
				fmt.Fprintf(f.Out, "Domains     %s\n", strings.Join(r.Domains, ", "))
			}
			fmt.Fprintf(f.Out, "TEE         %v\n", r.TEE)
			fmt.Fprintf(f.Out, "Rates       base %s, per token %s, per wall ms %s, per MiB %s (base units)\n", r.Rates.Base, r.Rates.PerToken, r.Rates.PerWallMs, r.Rates.PerMemoryMiB)
			fmt.Fprintf(f.Out, "Jobs        %d active of %d\n", r.ActiveJobs, r.MaxConcurrentJobs)
			fmt.Fprintf(f.Out, "Result key  0x%x\n", []byte(r.ResultKey))
			fmt.Fprintf(f.Out, "Heartbeat   block %d (head %d); registered at %d\n", r.LastHeartbeat, r.Height, r.RegisteredAt)
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newRunnerListCmd(f *Factory) *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "list [--all]",
		Short: "List registered runners with health, stake and reputation",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rs, err := f.Client().Runners().List(cmd.Context(), all)
			if err != nil {
				return err
			}
			if rs == nil {
				rs = []apitypes.Runner{}
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, rs)
			}
			if len(rs) == 0 {
				fmt.Fprintln(f.Out, "No runners registered.")
			}
			for _, r := range rs {
				fmt.Fprintf(f.Out, "%s  %-9s %-7s stake %s  rep %d  jobs %d/%d  %s\n", r.Address, runnerHealth(r), r.Status,
					sdk.FormatCBY(cmdutil.MustBig(r.Stake)), r.Reputation, r.ActiveJobs, r.MaxConcurrentJobs, strings.Join(r.JobTypes, ","))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "include runners that have left")
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}
