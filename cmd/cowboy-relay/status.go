package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/spf13/cobra"
)

// StatusOptions are the flags of `status`.
type StatusOptions struct {
	IO   IO
	Home string
	JSON bool
}

// Status is what `status --json` prints; ID, Addr and PubKey match the
// cbfs.RelayInfo fields of a directory file.
type Status struct {
	ID       string `json:"id"`
	PubKey   string `json:"pubkey"`
	Addr     string `json:"addr"`
	Metrics  string `json:"metrics,omitempty"`
	Running  bool   `json:"running"`
	Healthy  bool   `json:"healthy"`
	Capacity uint64 `json:"capacity"`
	Used     uint64 `json:"used"`
	Objects  uint64 `json:"objects"`
	Version  string `json:"version,omitempty"`
}

func newCmdStatus(io IO, runF func(*StatusOptions) error) *cobra.Command {
	o := &StatusOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the relay identity and usage",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Home == "" {
				return errors.New("--home is required")
			}
			if runF != nil {
				return runF(o)
			}
			return statusRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Home, "home", "", "relay home directory")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

func statusRun(ctx context.Context, o *StatusOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	key, fc, err := relay.LoadHome(o.Home)
	if err != nil {
		return err
	}
	pub := crypto.CompressPubkey(&key.PublicKey)
	st := Status{ID: crypto.PubkeyToAddress(key.PublicKey).Hex(), PubKey: fmt.Sprintf("%x", pub), Addr: fc.Listen, Metrics: fc.Metrics, Capacity: fc.CapacityBytes}
	var ri RunInfo
	if b, err := os.ReadFile(filepath.Join(o.Home, RunFile)); err == nil && json.Unmarshal(b, &ri) == nil {
		st.Addr, st.Metrics = ri.Addr, ri.Metrics
		pool := transport.NewPool()
		defer pool.Close()
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		reply, err := pool.Do(cctx, ri.Addr, pub, &wire.Request{Op: wire.OpStat}, nil)
		cancel()
		if err == nil {
			if reply.Stat != nil {
				st.Running, st.Healthy = true, true
				st.Capacity, st.Used, st.Objects, st.Version = reply.Stat.Capacity, reply.Stat.Used, reply.Stat.Objects, reply.Stat.Version
			}
			reply.Close()
		}
	}
	if !st.Running {
		if used, objs, err := relay.DiskUsage(filepath.Join(o.Home, relay.DataDir)); err == nil {
			st.Used, st.Objects = used, objs
		}
	}
	if o.JSON {
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	fmt.Fprintf(o.IO.Out, "relay id  %s\npubkey    %s\naddr      %s\nrunning   %v\nused      %d of %d bytes (0 = unlimited)\nobjects   %d\n",
		st.ID, st.PubKey, st.Addr, st.Running, st.Used, st.Capacity, st.Objects)
	if st.Metrics != "" {
		fmt.Fprintf(o.IO.Out, "metrics   http://%s/metrics\n", st.Metrics)
	}
	return nil
}
