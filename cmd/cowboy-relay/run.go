package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/heal"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/spf13/cobra"
)

// RunOptions are the flags of `run`.
type RunOptions struct {
	IO       IO
	Home     string
	Listen   string
	Metrics  string
	LogLevel string
	Grace    time.Duration
	// Node, when set, registers the relay in the chain's Relay Registry
	// (staking Stake CBY from the node key) and sends heartbeats.
	Node      string
	Stake     string
	Heartbeat time.Duration
	// Challenges is the storage-challenge poll interval.
	Challenges time.Duration
	// Heal is the interval of repair passes (relay/heal); 0 turns the
	// repair service off. RepairBudget bounds its traffic in bytes/s.
	Heal         time.Duration
	RepairBudget int64
	// EvictedRetention is how long the shards of an evicted volume are
	// kept before they are deleted (0: kept).
	EvictedRetention time.Duration
}

// RunInfo is written to HOME/run.json once the relay listens.
type RunInfo struct {
	ID      string `json:"id"`
	PubKey  string `json:"pubkey"`
	Addr    string `json:"addr"`
	Metrics string `json:"metrics,omitempty"`
	PID     int    `json:"pid"`
	Node    string `json:"node,omitempty"` // chain node the relay is registered with
}

func newCmdRun(io IO, runF func(*RunOptions) error) *cobra.Command {
	o := &RunOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the relay until SIGINT/SIGTERM",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Home == "" {
				return errors.New("--home is required")
			}
			if runF != nil {
				return runF(o)
			}
			return runRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Home, "home", "", "relay home directory")
	cmd.Flags().StringVar(&o.Listen, "listen", "", "QUIC listen address, overrides config")
	cmd.Flags().StringVar(&o.Metrics, "metrics", "", "metrics listen address, overrides config")
	cmd.Flags().StringVar(&o.LogLevel, "log-level", "", "debug|info|warn|error (default from config, else info)")
	cmd.Flags().DurationVar(&o.Grace, "grace", 10*time.Second, "graceful shutdown deadline")
	cmd.Flags().StringVar(&o.Node, "node", "", "chain node URL: register in the Relay Registry and heartbeat (the node key pays stake and fees)")
	cmd.Flags().StringVar(&o.Stake, "stake", "100", "CBY to stake when registering")
	cmd.Flags().DurationVar(&o.Heartbeat, "heartbeat", 5*time.Second, "heartbeat interval")
	cmd.Flags().DurationVar(&o.Challenges, "challenge-poll", time.Second, "how often to look for storage challenges to answer and rent to claim")
	cmd.Flags().DurationVar(&o.Heal, "heal-interval", 30*time.Second, "how often to look for stripes with shards on unhealthy relays and rebuild them (0: off; needs --node)")
	cmd.Flags().Int64Var(&o.RepairBudget, "repair-budget", 8<<20, "repair traffic limit in bytes/s (shards fetched and stored; 0: unlimited)")
	cmd.Flags().DurationVar(&o.EvictedRetention, "evicted-retention", 24*time.Hour, "delete the shards of a volume evicted for unpaid rent after this long (0: keep them)")
	return cmd
}

func runRun(parent context.Context, o *RunOptions) error {
	if parent == nil {
		parent = context.Background()
	}
	key, fc, err := relay.LoadHome(o.Home)
	if err != nil {
		return err
	}
	if o.Listen != "" {
		fc.Listen = o.Listen
	}
	if o.Metrics != "" {
		fc.Metrics = o.Metrics
	}
	lv := o.LogLevel
	if lv == "" {
		lv = fc.LogLevel
	}
	log, err := cmdutil.NewLogger(o.IO.Err, lv, false)
	if err != nil {
		return fmt.Errorf("bad log level %q: %w", lv, err)
	}
	cfg := relay.Config{
		Key: key, DataDir: filepath.Join(o.Home, relay.DataDir), Listen: fc.Listen, Metrics: fc.Metrics,
		Capacity: fc.CapacityBytes, MaxObjectSize: fc.MaxObjectBytes, RevocationFile: fc.RevocationFile, Logger: log,
	}
	if o.Node != "" {
		// Honour the revocation lists anchored on chain by volume owners.
		cfg.Revocations = (&onchain.RevocationCache{Client: sdk.New(o.Node)}).For
		// Accept relay-signed peer requests (repair) from registered relays.
		cfg.Peers = (&onchain.PeerCache{Client: sdk.New(o.Node)}).Active
	}
	node, err := relay.New(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(parent, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	runErr := make(chan error, 1)
	go func() { runErr <- node.Run(ctx) }()
	select {
	case <-node.Ready():
	case err := <-runErr:
		node.Close()
		return err
	}
	info := RunInfo{ID: crypto.PubkeyToAddress(key.PublicKey).Hex(), PubKey: fmt.Sprintf("%x", crypto.CompressPubkey(&key.PublicKey)),
		Addr: node.Addr().String(), PID: os.Getpid(), Node: o.Node}
	if a := node.MetricsAddr(); a != nil {
		info.Metrics = a.String()
	}
	removeRunFile, err := cmdutil.WriteRunFile(o.Home, info)
	if err != nil {
		log.Warn("no run file", "err", err)
	}
	defer removeRunFile()
	var regDone chan struct{}
	if o.Node != "" {
		stake, perr := sdk.ParseCBY(o.Stake)
		if perr != nil {
			stop()
			<-runErr
			return fmt.Errorf("--stake: %w", perr)
		}
		var sendMu sync.Mutex
		reg := &onchain.Registrar{Client: sdk.New(o.Node), Key: key, Addr: node.Addr().String(), Capacity: fc.CapacityBytes,
			Stake: stake, Interval: o.Heartbeat, Logger: log, Used: func() uint64 { used, _, _ := node.Store().Usage(); return used },
			SendMu: &sendMu}
		// Answer the Storage Manager's availability challenges from the
		// store and claim the rent of answered epochs.
		prover := &onchain.Prover{Client: sdk.New(o.Node), Key: key, Holdings: node, Interval: o.Challenges, Logger: log,
			SendMu: &sendMu, Refusable: relay.IsRefusable, OnEvent: node.ChallengeEvent}
		regDone = make(chan struct{})
		go func() {
			defer close(regDone)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); prover.Run(ctx) }()
			if o.Heal > 0 {
				// Rebuild the shards of unhealthy relays without the owner,
				// and drop evicted volumes after the retention period.
				pool := transport.NewPool()
				defer pool.Close()
				svc := heal.New(heal.Config{Key: key, Store: node.Store(), Pool: pool, Interval: o.Heal, BytesPerSecond: o.RepairBudget,
					Retention: o.EvictedRetention, Logger: log, Chain: &onchain.Healer{Client: sdk.New(o.Node), Key: key, SendMu: &sendMu}})
				wg.Add(1)
				go func() { defer wg.Done(); svc.Run(ctx) }()
			}
			reg.Run(ctx)
			wg.Wait()
		}()
	}
	err = <-runErr
	if regDone != nil {
		<-regDone
	}
	log.Info("shutting down", "reason", err)
	sctx, cancel := context.WithTimeout(context.Background(), o.Grace)
	defer cancel()
	if serr := node.Shutdown(sctx); serr != nil {
		return fmt.Errorf("shutdown: %w", serr)
	}
	if errors.Is(err, relay.ErrClosed) {
		log.Info("stopped")
		return nil
	}
	return err
}
