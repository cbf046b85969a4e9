package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/transport"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/spf13/cobra"
)

// StatusOptions are the flags of `status`.
type StatusOptions struct {
	IO   IO
	Home string
	JSON bool
	// Node is the chain node to read the registry record from; default:
	// the one the running relay was started with.
	Node string
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
	// Chain is the Relay Registry record (health, stake, challenges,
	// earnings) when a node is known.
	Chain *apitypes.Relay `json:"chain,omitempty"`
	// ChainError says why the record could not be read.
	ChainError string `json:"chain_error,omitempty"`
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
	cmd.Flags().StringVar(&o.Node, "node", "", "chain node URL for the registry record (default: the running relay's)")
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
	if cmdutil.ReadRunFile(o.Home, &ri) == nil {
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
	node := o.Node
	if node == "" {
		node = ri.Node
	}
	if node != "" {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rec, err := sdk.New(node).Relays().Get(cctx, types.PubkeyToAddress(key.PublicKey))
		cancel()
		if err != nil {
			st.ChainError = err.Error()
		} else {
			st.Chain = rec
		}
	}
	if !st.Running {
		if used, objs, err := relay.DiskUsage(filepath.Join(o.Home, relay.DataDir)); err == nil {
			st.Used, st.Objects = used, objs
		}
	}
	if o.JSON {
		return cmdutil.PrintJSON(o.IO.Out, st)
	}
	fmt.Fprintf(o.IO.Out, "relay id  %s\npubkey    %s\naddr      %s\nrunning   %v\nused      %d of %d bytes (0 = unlimited)\nobjects   %d\n",
		st.ID, st.PubKey, st.Addr, st.Running, st.Used, st.Capacity, st.Objects)
	if st.Metrics != "" {
		fmt.Fprintf(o.IO.Out, "metrics   http://%s/metrics\n", st.Metrics)
	}
	if r := st.Chain; r != nil {
		health := "healthy"
		if !r.Healthy {
			health = "UNHEALTHY"
		}
		fmt.Fprintf(o.IO.Out, "registry  %s, %s, stake %s base units, last heartbeat %d (head %d)\n", r.Status, health, r.Stake, r.LastHeartbeat, r.Height)
		if c := r.Challenges; c != nil {
			fmt.Fprintf(o.IO.Out, "challenges %d answered, %d failed, %d missed; reputation %d/1000; flagged %v\n", c.Answered, c.Failed, c.Missed, c.Reputation, c.Flagged)
			fmt.Fprintf(o.IO.Out, "earnings  %s base units rent, %s slashed\n", c.Earned, c.Slashed)
		}
	} else if st.ChainError != "" {
		fmt.Fprintf(o.IO.Out, "registry  unavailable: %s\n", st.ChainError)
	}
	return nil
}
