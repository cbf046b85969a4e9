package main

import (
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/spf13/cobra"
)

// InitOptions are the flags of `init`.
type InitOptions struct {
	IO       IO
	Home     string
	Listen   string
	Metrics  string
	Capacity uint64
}

func newCmdInit(io IO, runF func(*InitOptions) error) *cobra.Command {
	o := &InitOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create a relay home: node key and config",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Home == "" {
				return errors.New("--home is required")
			}
			if runF != nil {
				return runF(o)
			}
			return initRun(o)
		},
	}
	cmd.Flags().StringVar(&o.Home, "home", "", "relay home directory")
	cmd.Flags().StringVar(&o.Listen, "listen", "127.0.0.1:7400", "QUIC listen address (UDP)")
	cmd.Flags().StringVar(&o.Metrics, "metrics", "", "Prometheus /metrics listen address (TCP), empty = off")
	cmd.Flags().Uint64Var(&o.Capacity, "capacity", 0, "storage capacity in bytes, 0 = unlimited")
	return cmd
}

func initRun(o *InitOptions) error {
	key, err := relay.InitHome(o.Home, relay.FileConfig{Listen: o.Listen, Metrics: o.Metrics, CapacityBytes: o.Capacity})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "initialised %s\nrelay id  %s\npubkey    %x\n", o.Home,
		crypto.PubkeyToAddress(key.PublicKey).Hex(), crypto.CompressPubkey(&key.PublicKey))
	return nil
}
