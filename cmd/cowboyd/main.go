// Command cowboyd runs a Cowboy chain node. `cowboyd init --dev` writes a
// devnet home (genesis, validator and faucet keys); `cowboyd --dev` runs a
// single-validator devnet that produces a block every second and serves the
// HTTP API.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/api"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/metrics"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/internal/version"
	"github.com/cowboy-foundation/cowboy/pvm"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/spf13/cobra"
)

func main() {
	root := newRoot()
	if delegated(os.Args[1:]) {
		root = newCowboyTestnetRoot()
	}
	cmdutil.Main(context.Background(), root, "Error:")
}

type runOptions struct {
	home       string
	dev        bool
	rpc        string
	interval   time.Duration
	logLevel   string
	noPVM      bool
	pvmWorkers int
	python     string
	p2p        string
	bootstrap  []string
	valKey     string
	viewTO     time.Duration
	retain     int
	metrics    string
	full       bool
	gcPercent  int
	memLimit   string
	snapEvery  int64
	stateSync  bool
	pruneKeep  uint64
	pruneHist  uint64
	archive    bool
	bootnodes  []string
	discovery  bool
	maxPeers   int
}

func newRoot() *cobra.Command {
	o := &runOptions{}
	root := &cobra.Command{
		Use:   "cowboyd",
		Short: "Cowboy chain node",
		Long: "cowboyd runs a Cowboy chain node. With --dev it runs a single-validator devnet, initialising --home on first start.\n" +
			"Without --dev it runs a validator of the consensus network whose genesis is in --home (see `cowboy testnet init`),\n" +
			"or with --full-node (or role \"full\" in config.json) a full node of it, which never votes;\n" +
			"flags not given are read from --home/config.json.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd.Context(), o, cmd.Flags().Changed)
		},
	}
	root.PersistentFlags().StringVar(&o.home, "home", cmdutil.HomeDir(".cowboyd"), "node home directory")
	root.Flags().BoolVar(&o.dev, "dev", false, "run a single-validator devnet (initialises --home if empty)")
	root.Flags().StringVar(&o.rpc, "rpc", "127.0.0.1:8545", "HTTP API listen address")
	root.Flags().DurationVar(&o.interval, "block-interval", time.Second, "time between blocks")
	root.Flags().StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.Flags().BoolVar(&o.noPVM, "no-pvm", false, "run without the Python VM (transfers only; actor transactions are refused)")
	root.Flags().IntVar(&o.pvmWorkers, "pvm-workers", 2, "warm CPython zygote processes")
	root.Flags().StringVar(&o.python, "python", "", "CPython 3.11 interpreter (default: python3 on PATH)")
	root.Flags().StringVar(&o.p2p, "p2p", "", "QUIC listen address for validator traffic (default from config.json, else 127.0.0.1:26656)")
	root.Flags().StringSliceVar(&o.bootstrap, "bootstrap", nil, "validator peers as 0xADDRESS@host:port, comma-separated (default from config.json)")
	root.Flags().StringVar(&o.valKey, "validator-key", "", "BLS consensus key file (default from config.json, else HOME/consensus.key)")
	root.Flags().DurationVar(&o.viewTO, "view-timeout", 0, "consensus view timeout (default from the genesis, else 2s)")
	root.Flags().IntVar(&o.retain, "consensus-retain", 0, "finalized blocks kept in memory for peers' fetches (default 256; tests lower it to exercise block sync)")
	_ = root.Flags().MarkHidden("consensus-retain")
	root.Flags().BoolVar(&o.full, "full-node", false, "run a full node of the network: follow the --bootstrap validators, verify and execute their finalized blocks, serve the API; no vote (default from config.json's role)")
	root.Flags().Int64Var(&o.snapEvery, "snapshot-interval", 1000, "write a state snapshot for peers' state sync every N heights; 0 disables (default from config.json's snapshot_interval)")
	root.Flags().BoolVar(&o.stateSync, "state-sync", false, "full node with an empty home: start from a validator's verified state snapshot instead of replaying from genesis (default from config.json's state_sync)")
	root.Flags().Uint64Var(&o.pruneKeep, "prune-keep", 0, fmt.Sprintf("keep the state of the last N heights for proofs and snapshots, deleting older state while running (default from config.json's prune_keep, else %d); blocks and receipts are always kept", node.DefaultPruneKeep))
	root.Flags().Uint64Var(&o.pruneHist, "prune-history", 0, "also delete blocks, transactions, receipts and their indexes below the last N heights (0, the default: keep all history); the API then serves only that window")
	root.Flags().BoolVar(&o.archive, "archive", false, "keep the state of every height (no pruning; default from config.json's archive)")
	root.Flags().StringSliceVar(&o.bootnodes, "bootnodes", nil, "discovery bootnode records (enr:…, e.g. a node's HOME/node.enr), comma-separated (default from config.json's bootnodes)")
	root.Flags().BoolVar(&o.discovery, "discovery", true, "find peers through the discovery DHT on the p2p port (default from config.json's no_discovery)")
	root.Flags().IntVar(&o.maxPeers, "max-peers", 0, "discovered peer records kept (default from config.json's max_peers, else 256)")
	root.Flags().StringVar(&o.metrics, "metrics", "", "also serve Prometheus /metrics on this address (it is always served on the HTTP API at /metrics)")
	root.Flags().IntVar(&o.gcPercent, "gc-percent", defaultGCPercent, "Go GC target percent (heap growth between collections; -1 is off; default unless GOGC is set)")
	root.Flags().StringVar(&o.memLimit, "memory-limit", defaultMemoryLimit, "soft memory limit that makes the GC collect sooner near it, e.g. 1GiB, or off (default unless GOMEMLIMIT is set)")
	root.AddCommand(newInit(), newVersion(), newReindex(), newTestnetCmd(cmdutil.NewFactory()))
	return root
}

func logger(level string) (*slog.Logger, error) {
	log, err := cmdutil.NewLogger(os.Stderr, level, false)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return log, nil
}

func run(parent context.Context, o *runOptions, changed func(string) bool) error {
	log, err := logger(o.logLevel)
	if err != nil {
		return err
	}
	gc, err := resolveGC(o.gcPercent, o.memLimit, changed, os.Getenv)
	if err != nil {
		return err
	}
	applyGC(gc)
	var network *node.Network
	if !o.dev {
		if network, err = networkConfig(o, changed); err != nil {
			return err
		}
	} else if _, err := os.Stat(node.GenesisPath(o.home)); errors.Is(err, os.ErrNotExist) {
		g, err := initDev(o.home)
		if err != nil {
			return err
		}
		log.Info("initialised devnet home", "home", o.home, "chain_id", g.ChainID, "faucet", *g.Faucet)
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()

	met := metrics.New(log.With("component", "metrics"))
	cfg := node.Config{Home: o.home, BlockInterval: o.interval, Logger: log, Network: network, Metrics: met}
	cfg.PruneHistory = o.pruneHist
	if cfg.PruneKeep, cfg.Archive, err = pruneConfig(o, changed); err != nil {
		return err
	}
	if !o.noPVM {
		engine, err := pvm.New(ctx, pvm.Config{PoolSize: o.pvmWorkers, Python: o.python, Logger: log.With("component", "pvm")})
		if err != nil {
			return fmt.Errorf("start the Python VM: %w (use --python to point at CPython 3.11, or --no-pvm for a transfer-only node)", err)
		}
		defer engine.Close()
		cfg.VM = engine
		log.Info("Python VM ready", "workers", o.pvmWorkers)
	}
	n, err := node.Open(cfg)
	if err != nil {
		return err
	}
	defer n.Close()
	if err := n.StateSync(ctx); err != nil {
		return fmt.Errorf("state sync: %w", err)
	}
	if o.dev && n.Genesis().Multi() {
		return fmt.Errorf("%s is a consensus network's home: run without --dev", o.home)
	}
	if !o.dev && !n.Genesis().Multi() {
		return fmt.Errorf("%s is a single-validator devnet: run with --dev", o.home)
	}
	if !o.dev && !changed("block-interval") && n.Genesis().Consensus.BlockIntervalMs > 0 {
		// The network's block time comes from its genesis unless overridden.
		n.SetBlockInterval(time.Duration(n.Genesis().Consensus.BlockIntervalMs) * time.Millisecond)
	}

	ln, err := net.Listen("tcp", o.rpc)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.rpc, err)
	}
	var mln net.Listener
	if o.metrics != "" {
		if mln, err = net.Listen("tcp", o.metrics); err != nil {
			ln.Close()
			return fmt.Errorf("--metrics: listen on %s: %w", o.metrics, err)
		}
	}
	met.Attach(n)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", met.Handler())
	mux.Handle("/", api.New(n, log).Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	srvErr, metErr := make(chan error, 1), make(chan error, 1) // metErr stays silent without --metrics
	go func() { srvErr <- srv.Serve(ln) }()
	log.Info("HTTP API listening", "addr", ln.Addr().String(), "version", version.String())
	if mln != nil {
		msrv := &http.Server{Handler: met.Handler(), ReadHeaderTimeout: 10 * time.Second}
		defer msrv.Close()
		go func() { metErr <- msrv.Serve(mln) }()
		log.Info("metrics listening", "addr", mln.Addr().String())
	}

	runErr := make(chan error, 1)
	go func() { runErr <- n.Run(ctx) }()

	var result error
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-srvErr:
		result = fmt.Errorf("HTTP API: %w", err)
	case err := <-metErr:
		result = fmt.Errorf("metrics listener: %w", err)
	case err := <-runErr:
		result = err
	}
	stop()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		srv.Close()
	}
	if err := <-runErr; err != nil && result == nil {
		result = err
	}
	return result
}

// networkConfig assembles the validator settings from flags and
// HOME/config.json (flags win) and reads the BLS key.
func networkConfig(o *runOptions, changed func(string) bool) (*node.Network, error) {
	if _, err := os.Stat(node.GenesisPath(o.home)); err != nil {
		return nil, fmt.Errorf("no genesis at %s: run with --dev for a devnet, or create a network with `cowboy testnet init`", node.GenesisPath(o.home))
	}
	fc, err := node.LoadNodeConfig(o.home)
	if err != nil {
		return nil, err
	}
	if !changed("rpc") && fc.RPC != "" {
		o.rpc = fc.RPC
	}
	listen := o.p2p
	if listen == "" {
		listen = fc.P2P
	}
	boot := o.bootstrap
	if !changed("bootstrap") {
		boot = fc.Bootstrap
	}
	peers, err := node.ParseBootstrap(boot)
	if err != nil {
		return nil, err
	}
	if !changed("bootnodes") {
		o.bootnodes = fc.Bootnodes
	}
	if !changed("discovery") {
		o.discovery = !fc.NoDiscovery
	}
	if !changed("max-peers") {
		o.maxPeers = fc.MaxPeers
	}
	nw, err := roleConfig(o, fc, listen, peers, changed)
	if err != nil {
		return nil, err
	}
	nw.Discovery, nw.Bootnodes, nw.MaxPeers = o.discovery, o.bootnodes, o.maxPeers
	nw.SnapshotInterval = o.snapEvery
	if !changed("snapshot-interval") && fc.SnapshotInterval != nil {
		nw.SnapshotInterval = *fc.SnapshotInterval
	}
	if nw.SnapshotInterval == 0 {
		nw.SnapshotInterval = -1 // 0 disables
	}
	nw.StateSync = nw.Full && (o.stateSync || !changed("state-sync") && fc.StateSync)
	return nw, nil
}

// roleConfig is the validator's or the full node's network configuration.
func roleConfig(o *runOptions, fc *node.NodeConfig, listen string, peers map[types.Address]string, changed func(string) bool) (*node.Network, error) {
	if o.full || fc.Role == node.RoleFull {
		return fullNodeConfig(o, fc, listen, peers)
	}
	keyPath := o.valKey
	if keyPath == "" {
		keyPath = fc.ValidatorKey
	}
	if keyPath == "" {
		keyPath = node.ConsensusKeyPath(o.home)
	} else if !filepath.IsAbs(keyPath) && !changed("validator-key") {
		keyPath = filepath.Join(o.home, keyPath)
	}
	key, err := bls.LoadKeyFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("validator key: %w", err)
	}
	nw := &node.Network{Key: key, Listen: listen, Bootstrap: peers, Retain: o.retain}
	// The account key pays for evidence transactions; a validator without
	// one still validates.
	if ak, err := node.LoadKeyFile(filepath.Join(o.home, "validator.key")); err == nil {
		nw.AccountKey = ak
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("validator account key: %w", err)
	}
	if o.viewTO > 0 {
		nw.Tick = 100 * time.Millisecond
		nw.TimeoutTicks = max(int(o.viewTO/nw.Tick), 2)
	}
	return nw, nil
}

// fullNodeConfig is networkConfig for a full node: its p2p identity is
// HOME/node.key (or config.json's node_key), created on first start.
func fullNodeConfig(o *runOptions, fc *node.NodeConfig, listen string, peers map[types.Address]string) (*node.Network, error) {
	if len(peers) == 0 && (len(o.bootnodes) == 0 || !o.discovery) {
		return nil, errors.New("a full node needs peers to follow: validators (--bootstrap 0xADDRESS@host:port,… or config.json's bootstrap) or discovery bootnodes (--bootnodes enr:…)")
	}
	keyPath := node.NodeKeyPath(o.home)
	if fc.NodeKey != "" {
		keyPath = fc.NodeKey
		if !filepath.IsAbs(keyPath) {
			keyPath = filepath.Join(o.home, keyPath)
		}
	}
	key, err := node.LoadOrCreateNodeKey(keyPath)
	if err != nil {
		return nil, fmt.Errorf("node key: %w", err)
	}
	return &node.Network{Key: key, Full: true, Listen: listen, Bootstrap: peers}, nil
}

func initDev(home string) (*genesis.Genesis, error) {
	if _, err := os.Stat(node.GenesisPath(home)); err == nil {
		return nil, fmt.Errorf("%s already exists; remove the home directory to start over", node.GenesisPath(home))
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	val, err := crypto.GenerateKey()
	if err != nil {
		return nil, err
	}
	faucet, err := crypto.GenerateKey()
	if err != nil {
		return nil, err
	}
	if err := node.WriteKeyFile(filepath.Join(home, "validator.key"), val); err != nil {
		return nil, err
	}
	if err := node.WriteKeyFile(node.FaucetKeyPath(home), faucet); err != nil {
		return nil, err
	}
	g := genesis.Dev(uint64(time.Now().UnixMilli()), types.PubkeyToAddress(val.PublicKey), types.PubkeyToAddress(faucet.PublicKey))
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if err := g.Save(node.GenesisPath(home)); err != nil {
		return nil, err
	}
	return g, nil
}

func newInit() *cobra.Command {
	var dev bool
	cmd := &cobra.Command{
		Use:   "init --dev",
		Short: "Write a devnet home: genesis.json, validator and faucet keys",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !dev {
				return errors.New("only devnet homes can be initialised by this build: pass --dev")
			}
			home, _ := cmd.Flags().GetString("home")
			g, err := initDev(home)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Initialised devnet home %s\n  chain id   %d\n  validator  %s\n  faucet     %s\n  genesis    %s\n",
				home, g.ChainID, g.Proposer(), *g.Faucet, node.GenesisPath(home))
			return nil
		},
	}
	cmd.Flags().BoolVar(&dev, "dev", false, "initialise a single-validator devnet")
	return cmd
}

func newVersion() *cobra.Command {
	return cmdutil.NewCmdVersion(cmdutil.IO{Out: os.Stdout, Err: os.Stderr}, func() string { return "cowboyd " + version.String() })
}

func newReindex() *cobra.Command {
	return &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild the transaction and event indexes from the ledger (node must be stopped)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, _ := cmd.Flags().GetString("home")
			st, err := store.Open(node.DBPath(home))
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.RebuildIndexes(); err != nil {
				return err
			}
			h, err := st.Head()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Rebuilt indexes for blocks 0..%d\n", h.Height)
			return nil
		},
	}
}

// pruneConfig is the state pruning setting from flags and HOME/config.json
// (flags win; a devnet home may have no config.json).
func pruneConfig(o *runOptions, changed func(string) bool) (keep uint64, archive bool, err error) {
	fc, err := node.LoadNodeConfig(o.home)
	if err != nil {
		return 0, false, err
	}
	keep, archive = fc.PruneKeep, fc.Archive
	if changed("prune-keep") {
		if o.pruneKeep == 0 {
			return 0, false, errors.New("--prune-keep must be at least 1 (use --archive to keep everything)")
		}
		keep = o.pruneKeep
	}
	if changed("archive") {
		archive = o.archive
	}
	if archive && changed("prune-keep") {
		return 0, false, errors.New("--prune-keep and --archive exclude each other")
	}
	return keep, archive, nil
}
