package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/runner"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/cowboy-foundation/cowboy/sdk/keystore"
	"github.com/spf13/cobra"
)

// StatusOptions are the flags of `status`.
type StatusOptions struct {
	IO   IO
	Home string
	Node string
	JSON bool
}

// Status is what `status --json` prints.
type Status struct {
	Runner  string                   `json:"runner"`
	Node    string                   `json:"node"`
	Running bool                     `json:"running"`
	Health  *runner.Health           `json:"health,omitempty"`
	Metrics string                   `json:"metrics,omitempty"`
	Balance string                   `json:"balance,omitempty"`
	Record  *apitypes.Runner         `json:"record,omitempty"` // nil: not registered
	Jobs    map[string]int           `json:"jobs,omitempty"`   // by local state (when the daemon is stopped)
	NodeErr string                   `json:"node_error,omitempty"`
	RunInfo *RunInfo                 `json:"run,omitempty"`
	Params  *apitypes.OffchainParams `json:"params,omitempty"`
}

func newCmdStatus(io IO, runF func(*StatusOptions) error) *cobra.Command {
	o := &StatusOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the runner's chain record, balance and local health",
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
	cmd.Flags().StringVar(&o.Home, "home", "", "runner home directory")
	cmd.Flags().StringVar(&o.Node, "node", "", "node HTTP API URL, overrides the config")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

func statusRun(ctx context.Context, o *StatusOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := runner.LoadConfig(o.Home)
	if err != nil {
		return err
	}
	if o.Node != "" {
		c.Node = o.Node
	}
	ks, err := keystore.Open(runner.Path(o.Home, c.Account.Keystore))
	if err != nil {
		return err
	}
	entry, err := ks.Get(c.Account.Name)
	if err != nil {
		return fmt.Errorf("account %q: %w", c.Account.Name, err)
	}
	st := Status{Runner: entry.Address.String(), Node: c.Node, Metrics: c.Metrics.Listen}
	var ri RunInfo
	if cmdutil.ReadRunFile(o.Home, &ri) == nil {
		st.RunInfo = &ri
		if ri.Metrics != "" {
			st.Metrics = ri.Metrics
		}
	}
	if st.Metrics != "" {
		hc := &http.Client{Timeout: 3 * time.Second}
		if resp, err := hc.Get("http://" + st.Metrics + "/healthz"); err == nil {
			var h runner.Health
			if json.NewDecoder(resp.Body).Decode(&h) == nil && h.Runner == entry.Address {
				st.Running, st.Health = true, &h
			}
			resp.Body.Close()
		}
	}
	if !st.Running {
		if s, err := runner.OpenStoreReadOnly(filepath.Join(runner.Path(o.Home, c.DataDir), "runner.db")); err == nil {
			if jobs, err := s.Jobs(); err == nil {
				st.Jobs = map[string]int{}
				for _, j := range jobs {
					st.Jobs[string(j.State)]++
				}
			}
			s.Close()
		}
	}
	cl := sdk.New(c.Node)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if bal, err := cl.Chain().Balance(cctx, entry.Address); err != nil {
		st.NodeErr = err.Error()
	} else {
		st.Balance = sdk.FormatCBY(bal)
		if r, err := cl.Runners().Get(cctx, entry.Address); err == nil {
			st.Record = r
		} else if !errors.Is(err, sdk.ErrNotFound) {
			st.NodeErr = err.Error()
		}
		if p, err := cl.Jobs().Params(cctx); err == nil {
			st.Params = p
		}
	}
	if o.JSON {
		return cmdutil.PrintJSON(o.IO.Out, st)
	}
	w := o.IO.Out
	fmt.Fprintf(w, "runner      %s\nnode        %s\n", st.Runner, st.Node)
	if st.NodeErr != "" {
		fmt.Fprintf(w, "node error  %s\n", st.NodeErr)
	} else {
		fmt.Fprintf(w, "balance     %s\n", st.Balance)
	}
	if r := st.Record; r != nil {
		fmt.Fprintf(w, "registered  %s, healthy %v, stake %s, reputation %d, jobs %d/%d, last heartbeat %d (height %d)\n",
			r.Status, r.Healthy, formatBase(r.Stake), r.Reputation, r.ActiveJobs, r.MaxConcurrentJobs, r.LastHeartbeat, r.Height)
		if r.Endpoint != "" {
			fmt.Fprintf(w, "endpoint    %s\n", r.Endpoint)
		}
	} else if st.NodeErr == "" {
		fmt.Fprintln(w, "registered  no (cowboy-runner run registers)")
	}
	if st.Running {
		fmt.Fprintf(w, "daemon      running (%s), height %d, %d jobs in flight, last block %s ago\n", st.Health.Status, st.Health.Height, st.Health.InFlight, st.Health.LastBlock)
		fmt.Fprintf(w, "metrics     http://%s/metrics\n", st.Metrics)
	} else {
		fmt.Fprintln(w, "daemon      not running")
		states := make([]string, 0, len(st.Jobs))
		for s := range st.Jobs {
			states = append(states, s)
		}
		sort.Strings(states)
		for _, s := range states {
			fmt.Fprintf(w, "  jobs %-10s %d\n", s, st.Jobs[s])
		}
	}
	return nil
}

func formatBase(s string) string {
	v, err := sdk.ParseAmount(s)
	if err != nil {
		return s
	}
	return sdk.FormatCBY(v)
}
