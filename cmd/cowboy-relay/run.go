package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cowboy-foundation/cowboy/relay"
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
}

// RunInfo is written to HOME/run.json once the relay listens.
type RunInfo struct {
	ID      string `json:"id"`
	PubKey  string `json:"pubkey"`
	Addr    string `json:"addr"`
	Metrics string `json:"metrics,omitempty"`
	PID     int    `json:"pid"`
}

// RunFile is the name of the run info file.
const RunFile = "run.json"

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
	level := slog.LevelInfo
	lv := o.LogLevel
	if lv == "" {
		lv = fc.LogLevel
	}
	if lv != "" {
		if err := level.UnmarshalText([]byte(lv)); err != nil {
			return fmt.Errorf("bad log level %q: %w", lv, err)
		}
	}
	log := slog.New(slog.NewTextHandler(o.IO.Err, &slog.HandlerOptions{Level: level}))
	node, err := relay.New(relay.Config{
		Key: key, DataDir: filepath.Join(o.Home, relay.DataDir), Listen: fc.Listen, Metrics: fc.Metrics,
		Capacity: fc.CapacityBytes, MaxObjectSize: fc.MaxObjectBytes, RevocationFile: fc.RevocationFile, Logger: log,
	})
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
		Addr: node.Addr().String(), PID: os.Getpid()}
	if a := node.MetricsAddr(); a != nil {
		info.Metrics = a.String()
	}
	b, _ := json.Marshal(info)
	runPath := filepath.Join(o.Home, RunFile)
	if err := os.WriteFile(runPath+".tmp", b, 0o600); err == nil {
		os.Rename(runPath+".tmp", runPath)
	}
	defer os.Remove(runPath)
	err = <-runErr
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
