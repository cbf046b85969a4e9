// Package bridge is `cowboy bridge`: the Ethereum bridge hooks (0x…11;
// chain/system/ethbridge, docs/ETHEREUM.md).
package bridge

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// Factory is the shared command factory (node client, keystore, IO).
type Factory = cmdutil.Factory

// NewCmdBridge is `cowboy bridge`.
func NewCmdBridge(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bridge",
		Short: "Ethereum bridge hooks (0x…11): subscribe an actor to Ethereum events, wrapped tokens",
		Long: "An actor declares the Ethereum events it may receive in its deployment manifest\n" +
			"(--require eth:CHAINID:0xCONTRACT:0xTOPIC0) and is subscribed with a CBY payment; the\n" +
			"authorised bridge set (genesis \"bridge\") relays confirmed logs to its handler\n" +
			"(cowboy-ethrelay). Wrapped assets are CIP-20 tokens only the bridge mints and burns.",
	}
	cmd.AddCommand(newSubscribeCmd(f), newSubscriptionsCmd(f), newWrapCmd(f), newBurnCmd(f))
	return cmd
}

// EventTopic reads an event as its signature ("Deposit(address,uint256)",
// hashed with keccak256) or as a 0x-hex topic 0.
func EventTopic(s string) (types.Hash, error) {
	if strings.HasPrefix(s, "0x") {
		return types.ParseHash(s)
	}
	if !strings.Contains(s, "(") || !strings.HasSuffix(s, ")") {
		return types.Hash{}, fmt.Errorf("event %q: want a signature such as Deposit(address,uint256) or a 0x topic", s)
	}
	return types.Keccak256([]byte(s)), nil
}

func newSubscribeCmd(f *Factory) *cobra.Command {
	var (
		chainID                 uint64
		contract, event, handle string
		value                   string
	)
	cmd := cmdutil.SendCmd(f, "subscribe ACTOR --chain-id N --contract 0x… --event 'Sig(types)' --value CBY [--handler NAME] [--from KEY]",
		"Pay CBY into an actor's subscription to an Ethereum contract event",
		"The payment is the subscription's prepaid balance (top it up by subscribing again); each delivered\n"+
			"event costs the governed bridge.event_fee. The actor's manifest must declare the contract and event.",
		cobra.ExactArgs(1), func(cmd *cobra.Command, a []string, tf *cmdutil.TxFlags) (*types.Tx, error) {
			actor, err := f.ResolveAddress(a[0])
			if err != nil {
				return nil, err
			}
			c, err := types.ParseAddress(contract)
			if err != nil {
				return nil, fmt.Errorf("--contract: %w", err)
			}
			topic, err := EventTopic(event)
			if err != nil {
				return nil, fmt.Errorf("--event: %w", err)
			}
			v := new(big.Int)
			if value != "" {
				if v, err = sdk.ParseCBY(value); err != nil {
					return nil, fmt.Errorf("--value: %w", err)
				}
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return nil, err
			}
			return f.Client().Account(key).Bridge().Subscribe(cmd.Context(), actor, chainID, c, topic, handle, v, sdk.TxOptions{})
		})
	fl := cmd.Flags()
	fl.Uint64Var(&chainID, "chain-id", 1, "Ethereum chain id")
	fl.StringVar(&contract, "contract", "", "the Ethereum contract address")
	fl.StringVar(&event, "event", "", "the event signature (Deposit(address,bytes32,uint256)) or its 0x topic 0")
	fl.StringVar(&handle, "handler", "", "the actor's handler (default on_eth_event)")
	fl.StringVar(&value, "value", "", "CBY paid into the subscription")
	return cmd
}

func newWrapCmd(f *Factory) *cobra.Command {
	var (
		chainID             uint64
		asset, name, symbol string
		decimals            uint8
	)
	cmd := cmdutil.SendCmd(f, "wrap --chain-id N --asset 0x… --name NAME --symbol SYM [--decimals 18] --from MEMBER",
		"Create the wrapped CIP-20 token of an Ethereum asset (a bridge member)",
		"The token's admin is the bridge module: only attested deposits mint it (bridge_mint) and only\n"+
			"bridge burn burns it. `cowboy token list` shows its id.",
		cobra.NoArgs, func(cmd *cobra.Command, _ []string, tf *cmdutil.TxFlags) (*types.Tx, error) {
			a, err := types.ParseAddress(asset)
			if err != nil {
				return nil, fmt.Errorf("--asset: %w", err)
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return nil, err
			}
			return f.Client().Account(key).Bridge().Send(cmd.Context(), &types.BridgeWrap{ChainID: chainID, Asset: a, Name: name, Symbol: symbol, Decimals: decimals}, nil, sdk.TxOptions{})
		})
	fl := cmd.Flags()
	fl.Uint64Var(&chainID, "chain-id", 1, "Ethereum chain id")
	fl.StringVar(&asset, "asset", "", "the Ethereum asset (ERC-20 address; the zero address for ETH)")
	fl.StringVar(&name, "name", "", "token name")
	fl.StringVar(&symbol, "symbol", "", "token symbol")
	fl.Uint8Var(&decimals, "decimals", 18, "decimal places")
	return cmd
}

func newBurnCmd(f *Factory) *cobra.Command {
	var recipient string
	cmd := cmdutil.SendCmd(f, "burn TOKEN BASE_UNITS --recipient 0x… [--from KEY]",
		"Burn wrapped tokens so that the bridge unlocks them to an Ethereum address",
		"", cobra.ExactArgs(2), func(cmd *cobra.Command, a []string, tf *cmdutil.TxFlags) (*types.Tx, error) {
			id, err := types.ParseHash(a[0])
			if err != nil {
				return nil, fmt.Errorf("token: %w", err)
			}
			v, ok := new(big.Int).SetString(a[1], 10)
			if !ok || v.Sign() <= 0 {
				return nil, fmt.Errorf("amount %q: want positive base units", a[1])
			}
			r, err := types.ParseAddress(recipient)
			if err != nil {
				return nil, fmt.Errorf("--recipient: %w", err)
			}
			key, err := f.Signer(tf.From)
			if err != nil {
				return nil, err
			}
			return f.Client().Account(key).Bridge().Send(cmd.Context(), &types.BridgeBurn{ID: id, Amount: v, Recipient: r}, nil, sdk.TxOptions{})
		})
	cmd.Flags().StringVar(&recipient, "recipient", "", "the Ethereum address the bridge unlocks to")
	return cmd
}

func newSubscriptionsCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "subscriptions ACTOR [--json]",
		Short: "An actor's Ethereum event subscriptions: contract, event, handler, balance, events delivered",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			actor, err := f.ResolveAddress(a[0])
			if err != nil {
				return err
			}
			subs, err := f.Client().Bridge().Subscriptions(cmd.Context(), actor)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, subs)
			}
			if len(subs) == 0 {
				fmt.Fprintf(f.Out, "%s has no Ethereum event subscriptions\n", actor)
			}
			for _, s := range subs {
				fmt.Fprintf(f.Out, "chain %d  contract %s  event %s\n  handler %s  balance %s  delivered %d\n",
					s.ChainID, s.Contract, s.Topic, s.Handler, cmdutil.Amount(s.Balance), s.Delivered)
			}
			return nil
		},
	}
	cmdutil.JSONFlag(cmd, &asJSON)
	return cmd
}
