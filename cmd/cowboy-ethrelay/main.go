// Command cowboy-ethrelay is a bridge member's Ethereum relayer
// (docs/ETHEREUM.md): it watches a contract's logs and submits each
// confirmed one to the Cowboy chain (package ethrelay).
//
//	cowboy-ethrelay run --eth URL --node URL --from KEY --contract 0x… --event SIG
//	                    [--actor 0x…] [--mint-asset 0x…] [--confirmations N] [--from-block N]
//	cowboy-ethrelay vault deploy  --eth URL
//	cowboy-ethrelay vault deposit --eth URL --vault 0x… --to COWBOY_ADDR --amount N
//	cowboy-ethrelay version
//
// The vault commands drive the demo contract (ethrelay.VaultSource) on a
// geth --dev chain from its unlocked developer account.
package main

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/ethrelay"
	"github.com/cowboy-foundation/cowboy/ethrelay/gethdev"
	"github.com/cowboy-foundation/cowboy/internal/cli/bridge"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/internal/version"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/spf13/cobra"
)

func newRootCmd(io cmdutil.IO) *cobra.Command {
	root := cmdutil.NewDaemonRoot("cowboy-ethrelay", "Ethereum bridge relayer", io)
	root.AddCommand(newRunCmd(io), newVaultCmd(io), cmdutil.NewCmdVersion(io, func() string { return "cowboy-ethrelay " + version.Version }))
	return root
}

func newRunCmd(io cmdutil.IO) *cobra.Command {
	f := cmdutil.NewFactory()
	f.Out, f.ErrOut = io.Out, io.Err
	var (
		ethURL, contract, event, actor, asset, from, logLevel string
		confirmations, fromBlock                              uint64
		poll                                                  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "run --eth URL --node URL --from KEY --contract 0x… --event SIG [--actor 0x…] [--mint-asset 0x…]",
		Short: "Relay a contract's confirmed logs to a subscribed actor and/or as wrapped-token deposits",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := types.ParseAddress(contract)
			if err != nil {
				return fmt.Errorf("--contract: %w", err)
			}
			topic, err := bridge.EventTopic(event)
			if err != nil {
				return fmt.Errorf("--event: %w", err)
			}
			w := ethrelay.Watch{Contract: common.Address(c), Topic: common.Hash(topic)}
			if actor != "" {
				a, err := types.ParseAddress(actor)
				if err != nil {
					return fmt.Errorf("--actor: %w", err)
				}
				w.Actor = &a
			}
			if asset != "" {
				a, err := types.ParseAddress(asset)
				if err != nil {
					return fmt.Errorf("--mint-asset: %w", err)
				}
				w.MintAsset = &a
			}
			key, err := f.Signer(from)
			if err != nil {
				return err
			}
			logger, err := cmdutil.NewLogger(io.Err, logLevel, false)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			eth, err := ethclient.DialContext(ctx, ethURL)
			if err != nil {
				return fmt.Errorf("--eth: %w", err)
			}
			defer eth.Close()
			r, err := ethrelay.New(ethrelay.Config{Eth: eth, Node: f.Client(), Key: key, Confirmations: confirmations, FromBlock: fromBlock,
				Poll: poll, Watches: []ethrelay.Watch{w}, Logger: logger})
			if err != nil {
				return err
			}
			logger.Info("cowboy-ethrelay: watching", "contract", contract, "event", event, "confirmations", confirmations)
			if err := r.Run(ctx); err != nil && ctx.Err() == nil {
				return err
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.NodeURL, "node", cmdutil.EnvOr("COWBOY_NODE", "http://127.0.0.1:8545"), "Cowboy node API (env COWBOY_NODE)")
	fl.StringVar(&f.Home, "home", cmdutil.EnvOr("COWBOY_HOME", cmdutil.DefaultHome()), "cowboy home holding the keys/ keystore (env COWBOY_HOME)")
	fl.StringVar(&f.PasswordFile, "password-file", "", "file holding the key's password (else $COWBOY_PASSWORD or a prompt)")
	fl.StringVar(&from, "from", "", "the bridge member's key")
	fl.StringVar(&ethURL, "eth", "http://127.0.0.1:8545", "Ethereum JSON-RPC URL")
	fl.StringVar(&contract, "contract", "", "the contract to watch")
	fl.StringVar(&event, "event", ethrelay.VaultEvent, "the event signature or its 0x topic 0")
	fl.StringVar(&actor, "actor", "", "deliver each log to this subscribed actor (bridge_event)")
	fl.StringVar(&asset, "mint-asset", "", "treat each log as a deposit of this asset's wrapped token (bridge_mint)")
	fl.Uint64Var(&confirmations, "confirmations", 2, "blocks on top of a log's block before it is relayed")
	fl.Uint64Var(&fromBlock, "from-block", 0, "first Ethereum block to scan")
	fl.DurationVar(&poll, "poll", time.Second, "how often to look for new blocks")
	fl.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	return cmd
}

func newVaultCmd(io cmdutil.IO) *cobra.Command {
	var ethURL, vault, to, amount string
	dial := func(ctx context.Context) (*gethdev.Chain, error) { return gethdev.Dial(ctx, ethURL) }
	deploy := &cobra.Command{
		Use:   "deploy --eth URL",
		Short: "Deploy the demo vault from the dev account; prints its address",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			a, err := c.Deploy(cmd.Context(), ethrelay.VaultInitCode())
			if err != nil {
				return err
			}
			fmt.Fprintln(io.Out, a.Hex())
			return nil
		},
	}
	deposit := &cobra.Command{
		Use:   "deposit --eth URL --vault 0x… --to COWBOY_ADDR --amount N",
		Short: "Emit a Deposit(from, to, amount) log from the demo vault",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := types.ParseAddress(vault)
			if err != nil {
				return fmt.Errorf("--vault: %w", err)
			}
			dst, err := types.ParseAddress(to)
			if err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			n, ok := new(big.Int).SetString(amount, 10)
			if !ok || n.Sign() < 0 {
				return fmt.Errorf("--amount %q: want base units", amount)
			}
			c, err := dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			va := common.Address(v)
			r, err := c.Send(cmd.Context(), &va, append(common.LeftPadBytes(dst[:], 32), common.LeftPadBytes(n.Bytes(), 32)...))
			if err != nil {
				return err
			}
			fmt.Fprintf(io.Out, "Deposit log in Ethereum block %d, tx %s, log index %d\n", r.BlockNumber, r.TxHash.Hex(), r.Logs[0].Index)
			return nil
		},
	}
	cmd := &cobra.Command{Use: "vault", Short: "The demo vault contract on a geth --dev chain"}
	for _, c := range []*cobra.Command{deploy, deposit} {
		c.Flags().StringVar(&ethURL, "eth", "http://127.0.0.1:8545", "geth --dev JSON-RPC URL")
		cmd.AddCommand(c)
	}
	deposit.Flags().StringVar(&vault, "vault", "", "the vault's address")
	deposit.Flags().StringVar(&to, "to", "", "the Cowboy recipient")
	deposit.Flags().StringVar(&amount, "amount", "", "amount (base units)")
	return cmd
}

func main() {
	cmdutil.Main(context.Background(), newRootCmd(cmdutil.IO{Out: os.Stdout, Err: os.Stderr}), "cowboy-ethrelay:")
}
