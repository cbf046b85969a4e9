package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/relay/cbfs"
	"github.com/cowboy-foundation/cowboy/relay/onchain"
	"github.com/cowboy-foundation/cowboy/runner"
	"github.com/cowboy-foundation/cowboy/runner/volumes"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/cowboy-foundation/cowboy/sdk/keystore"
	"github.com/spf13/cobra"
)

// RunOptions are the flags of `run`; set ones override runner.toml.
type RunOptions struct {
	IO        IO
	Home      string
	Node      string
	Listen    string
	PublicURL string
	Metrics   string
	LogLevel  string
	LogJSON   bool
	Grace     time.Duration
}

// RunFile is the name of the run info file.
const RunFile = cmdutil.RunFile

// RunInfo is written to HOME/run.json while the daemon runs.
type RunInfo struct {
	Runner     string `json:"runner"`
	Aggregator string `json:"aggregator,omitempty"`
	PublicURL  string `json:"public_url,omitempty"`
	Metrics    string `json:"metrics,omitempty"`
	PID        int    `json:"pid"`
}

func newCmdRun(io IO, runF func(*RunOptions) error) *cobra.Command {
	o := &RunOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the runner until SIGINT/SIGTERM",
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
	f := cmd.Flags()
	f.StringVar(&o.Home, "home", "", "runner home directory")
	f.StringVar(&o.Node, "node", "", "node HTTP API URL, overrides the config")
	f.StringVar(&o.Listen, "listen", "", "aggregator API listen address, overrides the config")
	f.StringVar(&o.PublicURL, "public-url", "", "aggregator URL registered on chain, overrides the config")
	f.StringVar(&o.Metrics, "metrics", "", "metrics listen address, overrides the config")
	f.StringVar(&o.LogLevel, "log-level", "", "debug|info|warn|error, overrides the config")
	f.BoolVar(&o.LogJSON, "log-json", false, "structured JSON logs instead of text")
	f.DurationVar(&o.Grace, "grace", 15*time.Second, "on SIGTERM, how long in-flight jobs may run to their next persisted step")
	return cmd
}

func runRun(parent context.Context, o *RunOptions) error {
	if parent == nil {
		parent = context.Background()
	}
	c, err := runner.LoadConfig(o.Home)
	if err != nil {
		return err
	}
	override := func(v string, dst *string) {
		if v != "" {
			*dst = v
		}
	}
	override(o.Node, &c.Node)
	override(o.Listen, &c.Aggregator.Listen)
	override(o.PublicURL, &c.Aggregator.PublicURL)
	override(o.Metrics, &c.Metrics.Listen)
	override(o.LogLevel, &c.LogLevel)
	s, err := c.Validate()
	if err != nil {
		return err
	}
	log, err := cmdutil.NewLogger(o.IO.Err, c.LogLevel, o.LogJSON)
	if err != nil {
		return fmt.Errorf("log level %q: %w", c.LogLevel, err)
	}

	password, err := c.Password(o.Home)
	if err != nil {
		return err
	}
	ks, err := keystore.Open(runner.Path(o.Home, c.Account.Keystore))
	if err != nil {
		return err
	}
	key, err := ks.Unlock(c.Account.Name, password)
	if err != nil {
		return fmt.Errorf("account %q: %w", c.Account.Name, err)
	}
	resultKey, err := runner.LoadResultKey(runner.Path(o.Home, c.Account.ResultKeyFile))
	if err != nil {
		return err
	}
	var attester attest.Attester
	if s.TEESGX {
		sgx, err := attest.NewSGX()
		if err != nil {
			return fmt.Errorf("tee.backend sgx: %w (build with ego-go build -tags ego and run under ego run; docs/TEE.md §5)", err)
		}
		attester = sgx
	}
	if s.TEESimulated {
		// Devnets only: evidence signed by a local platform key; every
		// production policy refuses it.
		path := runner.Path(o.Home, "tee-simulation.key")
		pk, err := runner.LoadResultKey(path)
		if err != nil {
			if pk, err = runner.NewResultKey(path); err != nil {
				return err
			}
		}
		if attester, err = attest.NewSimulation(pk, attest.SimOptions{}); err != nil {
			return err
		}
		log.Warn("TEE backend is SIMULATION: attestations are not backed by hardware and only devnet policies accept them")
	}
	ctx, stop := signal.NotifyContext(parent, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	execs, err := runner.BuildExecutors(ctx, &c, s.JobTypes, log)
	if err != nil {
		return err
	}
	defer execs.Close()
	models := c.Registration.Models
	if c.Executors.LLM != nil && len(models) == 0 {
		for _, m := range c.Executors.LLM.Models {
			models = append(models, m.Name)
		}
	}
	domains := c.Registration.Domains
	if len(domains) == 0 {
		// Advertise what the executors will serve (the HTTP allowlist).
		for _, t := range execs.Types() {
			if e, ok := execs.Get(t); ok {
				if ds, ok := e.(interface{ Domains() []string }); ok {
					domains = append(domains, ds.Domains()...)
				}
			}
		}
		slices.Sort(domains)
		domains = slices.Compact(domains)
	}
	var vols *volumes.Access
	if c.Jobs.Volumes {
		client := sdk.New(c.Node)
		// On chain only a volume's owner anchors it: the runner's writes
		// are durable on the relays and the owner's checkpoint anchors them.
		cc, err := cbfs.New(cbfs.Config{Key: key, Directory: onchain.Directory{Client: client},
			Anchor: &onchain.Anchor{Client: client, Key: key}, Logger: log, CheckpointInterval: -1})
		if err != nil {
			return fmt.Errorf("job volumes: %w", err)
		}
		defer cc.Close()
		vols = volumes.New(cc, key, false)
	}
	d, err := runner.New(runner.Options{
		Volumes: vols,
		Client:  sdk.New(c.Node), Key: key, ResultKey: resultKey, Executors: execs, Check: runner.DefaultCheck,
		DataDir: runner.Path(o.Home, c.DataDir), Stake: s.Stake, MaxConcurrentJobs: c.Registration.MaxConcurrentJobs,
		MaxJobValue: s.MaxJobValue, JobTypes: s.JobTypes, Models: models, Domains: domains, Rates: s.Rates, Attester: attester,
		AggregatorListen: c.Aggregator.Listen, PublicURL: s.PublicURL, PushTimeout: s.PushTimeout, MetricsListen: c.Metrics.Listen,
		CommitMarginBlocks: c.Jobs.CommitMarginBlocks, KeepBlocks: c.Jobs.KeepBlocks, Grace: o.Grace, Logger: log,
	})
	if err != nil {
		return err
	}
	runErr := make(chan error, 1)
	go func() { runErr <- d.Run(ctx) }()
	select {
	case <-d.Ready():
		info := RunInfo{Runner: d.Address().String(), PID: os.Getpid()}
		if a := d.AggregatorAddr(); a != nil {
			info.Aggregator = a.String()
		}
		if a := d.MetricsAddr(); a != nil {
			info.Metrics = a.String()
		}
		info.PublicURL = d.PublicURL()
		removeRunFile, err := cmdutil.WriteRunFile(o.Home, info)
		if err != nil {
			log.Warn("no run file", "err", err)
		}
		defer removeRunFile()
		log.Info("runner ready", "runner", info.Runner, "aggregator", info.Aggregator, "metrics", info.Metrics)
	case err := <-runErr:
		return err
	}
	return <-runErr
}
