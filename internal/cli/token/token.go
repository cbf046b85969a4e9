package token

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// The `cowboy token` commands: CIP-20 platform tokens (0x…0E). Amounts are
// written in whole tokens with up to the token's decimals ("1.5"), or in
// base units with the suffix "base" ("1500base").

// NewCmdToken is `cowboy token`.
func NewCmdToken(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "CIP-20 platform tokens (0x…0E): create, transfer, approve, mint, burn, balance, info, list",
		Long: "A platform token is a native CIP-20 ledger (spec 002 §17.3) with a name, a symbol, decimals and an\n" +
			"optional supply cap. Its creator is its admin: it mints and burns, and grants TokenMint/TokenBurn\n" +
			"entitlements on the token's scope to others. Amounts are whole tokens (\"1.5\"), or base units with\n" +
			"the suffix \"base\" (\"1500base\").",
	}
	cmd.AddCommand(newTokenCreateCmd(f), newTokenTransferCmd(f), newTokenApproveCmd(f), newTokenMintCmd(f),
		newTokenBurnCmd(f), newTokenBalanceCmd(f), newTokenInfoCmd(f), newTokenListCmd(f))
	return cmd
}

// tokenAmount parses an amount of a token with decimals.
func tokenAmount(s string, decimals uint8) (*big.Int, error) {
	if t, ok := strings.CutSuffix(s, "base"); ok {
		return sdk.ParseAmount(t)
	}
	v, err := sdk.ParseUnits(s, int(decimals))
	if err != nil {
		return nil, fmt.Errorf("amount %w", err)
	}
	return v, nil
}

// tokenOf reads token id's metadata (its decimals scale amounts).
func tokenOf(ctx context.Context, f *Factory, s string) (*apitypes.Token, error) {
	id, err := types.ParseHash(s)
	if err != nil {
		return nil, fmt.Errorf("token id: %w", err)
	}
	return f.Client().Tokens().Get(ctx, id)
}

func newTokenCreateCmd(f *Factory) *cobra.Command {
	var (
		tf                  cmdutil.TxFlags
		name, symbol        string
		decimals            uint8
		capFlag, supplyFlag string
	)
	cmd := &cobra.Command{
		Use:   "create --name NAME --symbol SYM [--decimals 18] [--cap AMOUNT] [--supply AMOUNT] [--from KEY]",
		Short: "Create a token; you are its admin and receive --supply; prints its id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := &types.TokenCreate{Name: name, Symbol: symbol, Decimals: decimals}
			var err error
			if capFlag != "" {
				if in.Cap, err = tokenAmount(capFlag, decimals); err != nil {
					return fmt.Errorf("--cap: %w", err)
				}
			}
			if supplyFlag != "" {
				if in.Initial, err = tokenAmount(supplyFlag, decimals); err != nil {
					return fmt.Errorf("--supply: %w", err)
				}
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).Tokens().Create(cmd.Context(), in, sdk.TxOptions{})
			if err != nil {
				return err
			}
			if !tf.Wait {
				return f.ReportSubmitted(cmd.Context(), tx.Hash(), false, tf.Timeout, tf.AsJSON)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), tf.Timeout)
			defer cancel()
			r, err := f.Client().Chain().WaitForReceipt(ctx, tx.Hash())
			if err != nil {
				return err
			}
			if r.Receipt == nil || r.Receipt.Status != "success" {
				if tf.AsJSON {
					return cmdutil.PrintJSON(f.Out, r)
				}
				cmdutil.PrintTxResult(f.Out, r)
				return fmt.Errorf("transaction %s failed: %s", tx.Hash(), r.Receipt.Error)
			}
			var raw []byte
			if err := codec.Unmarshal(r.Receipt.Return, &raw); err != nil || len(raw) != types.HashLength {
				return fmt.Errorf("token_create returned %x, not a token id", r.Receipt.Return)
			}
			id := types.Hash(raw)
			if tf.AsJSON {
				return cmdutil.PrintJSON(f.Out, struct {
					Token types.Hash         `json:"token"`
					Tx    *apitypes.TxResult `json:"tx"`
				}{id, r})
			}
			fmt.Fprintf(f.Out, "Token %s (%s) created in %s\n", id, symbol, tx.Hash())
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "name", "", "name (1..64 bytes)")
	fl.StringVar(&symbol, "symbol", "", "symbol (1..16 bytes)")
	fl.Uint8Var(&decimals, "decimals", 18, "decimal places (0..36)")
	fl.StringVar(&capFlag, "cap", "", "supply cap (default: uncapped)")
	fl.StringVar(&supplyFlag, "supply", "", "initial supply, minted to you")
	tf.Add(cmd)
	return cmd
}

// newTokenTxCmd is a token instruction taking TOKEN, then an address
// argument when addrArg names it, then AMOUNT.
func newTokenTxCmd(f *Factory, use, short string, addrArg bool, build func(id types.Hash, to types.Address, v *big.Int) types.Instruction) *cobra.Command {
	var tf cmdutil.TxFlags
	n := 2
	if addrArg {
		n = 3
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(n),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := tokenOf(cmd.Context(), f, args[0])
			if err != nil {
				return err
			}
			var to types.Address
			if addrArg {
				if to, err = f.ResolveAddress(args[1]); err != nil {
					return err
				}
			}
			v, err := tokenAmount(args[n-1], t.Decimals)
			if err != nil {
				return err
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return err
			}
			tx, err := f.Client().Account(key).Tokens().Send(cmd.Context(), build(t.ID, to, v), sdk.TxOptions{})
			if err != nil {
				return err
			}
			return f.ReportSubmitted(cmd.Context(), tx.Hash(), tf.Wait, tf.Timeout, tf.AsJSON)
		},
	}
	tf.Add(cmd)
	return cmd
}

func newTokenTransferCmd(f *Factory) *cobra.Command {
	return newTokenTxCmd(f, "transfer TOKEN TO AMOUNT [--from KEY]", "Send AMOUNT of a token to an address or key", true,
		func(id types.Hash, to types.Address, v *big.Int) types.Instruction {
			return &types.TokenTransfer{ID: id, To: to, Amount: v}
		})
}

func newTokenApproveCmd(f *Factory) *cobra.Command {
	return newTokenTxCmd(f, "approve TOKEN SPENDER AMOUNT [--from KEY]", "Let SPENDER move up to AMOUNT of your balance (0 revokes)", true,
		func(id types.Hash, sp types.Address, v *big.Int) types.Instruction {
			return &types.TokenApprove{ID: id, Spender: sp, Amount: v}
		})
}

func newTokenMintCmd(f *Factory) *cobra.Command {
	return newTokenTxCmd(f, "mint TOKEN TO AMOUNT [--from KEY]", "Mint AMOUNT to an address (the admin or a TokenMint holder; within the cap)", true,
		func(id types.Hash, to types.Address, v *big.Int) types.Instruction {
			return &types.TokenMint{ID: id, To: to, Amount: v}
		})
}

func newTokenBurnCmd(f *Factory) *cobra.Command {
	return newTokenTxCmd(f, "burn TOKEN AMOUNT [--from KEY]", "Burn AMOUNT of your balance (the admin or a TokenBurn holder)", false,
		func(id types.Hash, _ types.Address, v *big.Int) types.Instruction {
			return &types.TokenBurn{ID: id, Amount: v}
		})
}

func newTokenBalanceCmd(f *Factory) *cobra.Command {
	var (
		asJSON  bool
		spender string
	)
	cmd := &cobra.Command{
		Use:   "balance TOKEN [ADDRESS|KEY] [--spender ADDRESS|KEY]",
		Short: "Show a holder's balance of a token (default: the only key), and an allowance with --spender",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := tokenOf(cmd.Context(), f, args[0])
			if err != nil {
				return err
			}
			var who string
			if len(args) == 2 {
				who = args[1]
			}
			holder, err := f.AddressOrOnlyKey(who)
			if err != nil {
				return err
			}
			var sp *types.Address
			if spender != "" {
				a, err := f.ResolveAddress(spender)
				if err != nil {
					return err
				}
				sp = &a
			}
			b, err := f.Client().Tokens().Balance(cmd.Context(), t.ID, holder, sp)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, b)
			}
			fmt.Fprintf(f.Out, "%s %s\n", sdk.FormatUnits(cmdutil.MustBig(b.Balance), int(t.Decimals)), t.Symbol)
			if sp != nil {
				fmt.Fprintf(f.Out, "allowance of %s: %s %s\n", sp, sdk.FormatUnits(cmdutil.MustBig(b.Allowance), int(t.Decimals)), t.Symbol)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&spender, "spender", "", "also show this spender's allowance")
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func printToken(f *Factory, t *apitypes.Token) {
	d := int(t.Decimals)
	capS := "uncapped"
	if c := cmdutil.MustBig(t.Cap); c.Sign() > 0 {
		capS = sdk.FormatUnits(c, d) + " " + t.Symbol
	}
	fmt.Fprintf(f.Out, "Token %s\n  name       %s\n  symbol     %s\n  decimals   %d\n  supply     %s %s\n  cap        %s\n  admin      %s\n  created    at height %d\n",
		t.ID, t.Name, t.Symbol, t.Decimals, sdk.FormatUnits(cmdutil.MustBig(t.Supply), d), t.Symbol, capS, t.Admin, t.CreatedAt)
}

func newTokenInfoCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info TOKEN",
		Short: "Show a token's metadata, supply and cap",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := tokenOf(cmd.Context(), f, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, t)
			}
			printToken(f, t)
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}

func newTokenListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the platform tokens",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ts, err := f.Client().Tokens().List(cmd.Context())
			if err != nil {
				return err
			}
			if ts == nil {
				ts = []apitypes.Token{}
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, ts)
			}
			if len(ts) == 0 {
				fmt.Fprintln(f.Out, "No tokens.")
			}
			for _, t := range ts {
				fmt.Fprintf(f.Out, "%s  %-8s %s  supply %s\n", t.ID, t.Symbol, t.Name, sdk.FormatUnits(cmdutil.MustBig(t.Supply), int(t.Decimals)))
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}
