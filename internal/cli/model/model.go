package model

import (
	"fmt"
	"math/big"

	"github.com/spf13/cobra"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/system/models"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
)

func NewCmdModel(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Model Registry (0x…0D): publish, list, show, retire and withdraw model revisions",
		Long: "A model revision is identified by model_id = keccak256(weights ‖ arch ‖ tokenizer ‖ license), the\n" +
			"Keccak-256 hashes of its four components (spec 002 §5.1). Publishing takes a refundable deposit\n" +
			"(1,000 CBY); retiring starts the delay after which `withdraw` returns it, unless governance banned\n" +
			"the model. Runners serve a registered model by listing its id in registration.models, and an LLM\n" +
			"job names it in model_id (and as \"model\" in its input).",
	}
	cmd.AddCommand(newModelPublishCmd(f), newModelListCmd(f), newModelShowCmd(f),
		newModelIDCmd(f, "retire", "Retire a model you published; its deposit can be withdrawn after the delay",
			func(id types.Hash) types.Instruction { return &types.ModelRetire{ID: id} }),
		newModelIDCmd(f, "withdraw", "Take back the deposit of a model you retired, once the delay has passed",
			func(id types.Hash) types.Instruction { return &types.ModelWithdraw{ID: id} }))
	return cmd
}

func newModelPublishCmd(f *Factory) *cobra.Command {
	var (
		tf                                cmdutil.TxFlags
		weights, arch, tokenizer, license string
		name, uri, deposit                string
	)
	cmd := &cobra.Command{
		Use:   "publish --name NAME --weights 0x… --arch 0x… --tokenizer 0x… --license 0x… [--uri URI] [--from KEY]",
		Short: "Publish a model revision with the refundable deposit; prints its model id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var hs [4]types.Hash
			for i, p := range []struct{ flag, v string }{{"weights", weights}, {"arch", arch}, {"tokenizer", tokenizer}, {"license", license}} {
				h, err := types.ParseHash(p.v)
				if err != nil {
					return fmt.Errorf("--%s: want the component's 0x-hex Keccak-256 hash: %w", p.flag, err)
				}
				hs[i] = h
			}
			dep, err := cmdutil.ParseAmountFlag("deposit", deposit)
			if err != nil {
				return err
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			in := &types.ModelPublish{Weights: hs[0], Arch: hs[1], Tokenizer: hs[2], License: hs[3], Name: name, URI: uri}
			tx, err := f.Client().Account(key).Models().Publish(cmd.Context(), in, dep, sdk.TxOptions{})
			if err != nil {
				return err
			}
			if !tf.AsJSON {
				fmt.Fprintf(f.Out, "Model id %s\n", models.ID(hs[0], hs[1], hs[2], hs[3]))
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "name", "", "human-readable name (1..64 bytes; not part of the id)")
	fl.StringVar(&uri, "uri", "", "where the weights can be fetched (optional)")
	fl.StringVar(&weights, "weights", "", "Keccak-256 of the weights")
	fl.StringVar(&arch, "arch", "", "Keccak-256 of the architecture description")
	fl.StringVar(&tokenizer, "tokenizer", "", "Keccak-256 of the tokenizer")
	fl.StringVar(&license, "license", "", "Keccak-256 of the license text")
	fl.StringVar(&deposit, "deposit", "1000", "the deposit (CBY, or base units with \"wei\"); the chain takes exactly its parameter")
	tf.Add(cmd)
	return cmd
}

func newModelIDCmd(f *Factory, use, short string, build func(types.Hash) types.Instruction) *cobra.Command {
	var tf cmdutil.TxFlags
	cmd := &cobra.Command{
		Use:   use + " MODEL_ID [--from KEY]",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := types.ParseHash(args[0])
			if err != nil {
				return err
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).SendSystem(cmd.Context(), types.ModelRegistryAddress, build(id), new(big.Int))
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	tf.Add(cmd)
	return cmd
}

func newModelListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the registered models",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ms, err := f.Client().Models().List(cmd.Context())
			if err != nil {
				return err
			}
			if ms == nil {
				ms = []apitypes.Model{}
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, ms)
			}
			if len(ms) == 0 {
				fmt.Fprintln(f.Out, "No models registered.")
			}
			for _, m := range ms {
				fmt.Fprintf(f.Out, "%s  %-7s %s  %s\n", m.ID, modelState(m), m.Publisher, m.Name)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func modelState(m apitypes.Model) string {
	if m.Banned {
		return "banned"
	}
	return m.Status
}

func newModelShowCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show MODEL_ID",
		Short: "Show one registered model",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := types.ParseHash(args[0])
			if err != nil {
				return err
			}
			m, err := f.Client().Models().Get(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, m)
			}
			fmt.Fprintf(f.Out, "Model %s (%s)\n  name       %s\n  uri        %s\n  publisher  %s\n  deposit    %s\n  published  at height %d\n",
				m.ID, modelState(*m), m.Name, m.URI, m.Publisher, sdk.FormatCBY(cmdutil.MustBig(m.Deposit)), m.PublishedAt)
			fmt.Fprintf(f.Out, "  weights    %s\n  arch       %s\n  tokenizer  %s\n  license    %s\n", m.Weights, m.Arch, m.Tokenizer, m.License)
			if m.Status == "retired" {
				fmt.Fprintf(f.Out, "  deposit released at height %d\n", m.ReleaseAt)
			}
			if m.Banned {
				fmt.Fprintf(f.Out, "  banned: %s\n", m.BanReason)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}
