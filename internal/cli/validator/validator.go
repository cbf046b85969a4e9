package validator

import (
	"errors"
	"fmt"
	"math/big"
	"os"

	"github.com/spf13/cobra"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
)

func NewCmdValidator(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validator",
		Short: "Validator Registry (0x…0C): register, exit, withdraw, unjail; BLS consensus keys",
		Long: "A validator registers its account with a stake and its node's BLS consensus key; it joins the set at\n" +
			"the next epoch boundary, leaves it at the boundary after `exit`, and withdraws the stake once the\n" +
			"unbonding period is over (docs/CONSENSUS.md §10).",
	}
	cmd.AddCommand(newValidatorKeygenCmd(f), newValidatorRegisterCmd(f),
		newValidatorSimpleCmd(f, "exit", "Leave the validator set at the next epoch boundary; the stake starts unbonding", &types.ValidatorExit{}),
		newValidatorSimpleCmd(f, "withdraw", "Take the stake back once out of the set and past the unbonding period", &types.ValidatorWithdraw{}),
		newValidatorSimpleCmd(f, "unjail", "Rejoin (at the next boundary) after the jail period", &types.ValidatorUnjail{}))
	return cmd
}

func newValidatorKeygenCmd(f *Factory) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen --out FILE",
		Short: "Write a new BLS12-381 consensus key (the file cowboyd --validator-key reads)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out is required")
			}
			if _, err := os.Stat(out); err == nil {
				return fmt.Errorf("%s exists; refusing to overwrite a validator key", out)
			}
			k, err := bls.GenerateKey(nil)
			if err != nil {
				return err
			}
			if err := bls.WriteKeyFile(out, k); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "BLS key written to %s\n  public key  0x%x\n", out, k.PublicKey().Bytes())
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "key file to create")
	return cmd
}

func newValidatorRegisterCmd(f *Factory) *cobra.Command {
	var (
		tf             cmdutil.TxFlags
		keyFile, stake string
	)
	cmd := &cobra.Command{
		Use:   "register --bls-key FILE --stake AMOUNT [--from KEY]",
		Short: "Register the sending account as a validator (or add stake) with its node's BLS key",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := bls.LoadKeyFile(keyFile)
			if err != nil {
				return fmt.Errorf("--bls-key: %w", err)
			}
			st, err := cmdutil.ParseAmountFlag("stake", stake)
			if err != nil {
				return err
			}
			if st == nil {
				st = new(big.Int)
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			in := &types.ValidatorRegister{BLSKey: k.PublicKey().Bytes(), BLSPoP: k.ProvePossession().Bytes()}
			tx, err := f.Client().Account(key).SendSystem(cmd.Context(), types.ValidatorRegistryAddress, in, st)
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	cmd.Flags().StringVar(&keyFile, "bls-key", "", "the node's BLS consensus key file (HOME/consensus.key)")
	cmd.Flags().StringVar(&stake, "stake", "", "stake to add (CBY, or base units with \"wei\")")
	tf.Add(cmd)
	return cmd
}

func newValidatorSimpleCmd(f *Factory, use, short string, in types.Instruction) *cobra.Command {
	var tf cmdutil.TxFlags
	cmd := &cobra.Command{
		Use:   use + " [--from KEY]",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).SendSystem(cmd.Context(), types.ValidatorRegistryAddress, in, new(big.Int))
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	tf.Add(cmd)
	return cmd
}
