package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	clitestnet "github.com/cowboy-foundation/cowboy/internal/cli/testnet"
	"github.com/cowboy-foundation/cowboy/sdk"
)

func newTestnetCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "testnet",
		Short: "Run a local multi-validator network on this machine",
		Long: "testnet init writes validator homes, keys and a shared genesis under --dir; up starts one cowboyd per\n" +
			"validator (logs and pid files in each home), down stops them, status shows heights and peers.",
	}
	cmd.PersistentFlags().String("dir", "testnet", "testnet directory")
	cmd.AddCommand(newTestnetInitCmd(f), newTestnetUpCmd(f), newTestnetDownCmd(f), newTestnetStatusCmd(f))
	return cmd
}

func newTestnetInitCmd(f *Factory) *cobra.Command {
	o := node.TestnetOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write keys, configs and genesis for a local network",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Dir, _ = cmd.Flags().GetString("dir")
			t, err := node.InitTestnet(o)
			if err != nil {
				return err
			}
			fulls := ""
			switch o.FullNodes {
			case 0:
			case 1:
				fulls = " with 1 full node"
			default:
				fulls = fmt.Sprintf(" with %d full nodes", o.FullNodes)
			}
			fmt.Fprintf(f.Out, "Initialised a %d-validator testnet%s in %s (chain id %d)\n", o.Validators, fulls, o.Dir, t.ChainID)
			tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tROLE\tADDRESS\tAPI\tP2P\tHOME")
			for _, n := range t.Nodes {
				addr := n.Address.String()
				if testnetRole(n) == node.RoleFull {
					addr = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\thttp://%s\t%s\t%s\n", n.Name, testnetRole(n), addr, n.RPC, n.P2P, n.Home)
			}
			tw.Flush()
			fmt.Fprintf(f.Out, "Start it with: cowboy testnet up --dir %s (node0 holds the faucet)\n", o.Dir)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&o.Validators, "validators", 4, "number of validators")
	fl.IntVar(&o.FullNodes, "full-nodes", 0, "number of full nodes (full0, …: follow the validators, serve the API, never vote)")
	fl.StringVar(&o.Host, "host", "127.0.0.1", "address the validators listen on")
	fl.StringSliceVar(&o.Hosts, "hosts", nil, "one address per validator, then optionally per full node (node i listens on the i-th), instead of --host for all")
	fl.IntVar(&o.RPCBase, "rpc-port", 8645, "HTTP API port of node0; node i uses rpc-port+i")
	fl.IntVar(&o.P2PBase, "p2p-port", 26656, "QUIC port of node0; node i uses p2p-port+i")
	fl.DurationVar(&o.BlockInterval, "block-interval", 0, "target time between blocks (default 1s)")
	fl.DurationVar(&o.ViewTimeout, "view-timeout", 0, "consensus view timeout (default 2s)")
	fl.DurationVar(&o.Tick, "tick", 0, "consensus clock tick (default 100ms)")
	fl.Uint64Var(&o.Stake, "stake", 100_000, "stake of each validator, whole CBY")
	fl.Uint64Var(&o.EpochLength, "epoch-length", 0, "blocks per epoch (validator set changes apply at epoch boundaries; default 3600)")
	return cmd
}

// loadTestnet reads the manifest of the command's --dir.
func loadTestnet(cmd *cobra.Command) (*node.Testnet, error) {
	dir, _ := cmd.Flags().GetString("dir")
	return node.LoadTestnet(dir)
}

func pidPath(home string) string { return filepath.Join(home, "cowboyd.pid") }
func logPath(home string) string { return filepath.Join(home, "cowboyd.log") }

// runningPid returns the pid recorded for a home if that process is alive
// and is a cowboyd (a recycled pid is not ours to signal).
func runningPid(home string) int {
	b, err := os.ReadFile(pidPath(home))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	if syscall.Kill(pid, 0) != nil {
		return 0
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && !strings.Contains(string(cmdline), "cowboyd") {
		return 0
	}
	return pid
}

func newTestnetUpCmd(f *Factory) *cobra.Command {
	var (
		bin, logLevel string
		only          []string
		noPVM         bool
		wait          time.Duration
	)
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start every validator of the testnet (or --only some) in the background",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := loadTestnet(cmd)
			if err != nil {
				return err
			}
			path, err := clitestnet.CowboydPath(bin)
			if err != nil {
				return err
			}
			var started []node.TestnetNode
			exits := map[string]chan struct{}{}
			for _, n := range t.Nodes {
				if len(only) > 0 && !contains(only, n.Name) {
					continue
				}
				if pid := runningPid(n.Home); pid != 0 {
					fmt.Fprintf(f.Out, "%s already running (pid %d)\n", n.Name, pid)
					continue
				}
				logf, err := os.OpenFile(logPath(n.Home), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
				if err != nil {
					return err
				}
				args := []string{"--home", n.Home, "--log-level", logLevel}
				if noPVM {
					args = append(args, "--no-pvm")
				}
				c := exec.Command(path, args...)
				c.Stdout, c.Stderr = logf, logf
				c.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives this command
				err = c.Start()
				logf.Close()
				if err != nil {
					return fmt.Errorf("start %s: %w", n.Name, err)
				}
				if err := os.WriteFile(pidPath(n.Home), []byte(strconv.Itoa(c.Process.Pid)+"\n"), 0o600); err != nil {
					return err
				}
				pid := c.Process.Pid
				// Waiting on our own child tells an exit apart from a slow
				// start without re-reading /proc (which raced with exec).
				exited := make(chan struct{})
				go func() { _ = c.Wait(); close(exited) }()
				exits[n.Name] = exited
				started = append(started, n)
				fmt.Fprintf(f.Out, "%s started (pid %d), API http://%s, log %s\n", n.Name, pid, n.RPC, logPath(n.Home))
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), wait)
			defer cancel()
			for _, n := range started {
				c := sdk.New("http://" + n.RPC)
				for {
					if _, err := c.Chain().Status(ctx); err == nil {
						break
					}
					select {
					case <-exits[n.Name]:
						return fmt.Errorf("%s exited; see %s", n.Name, logPath(n.Home))
					case <-ctx.Done():
						return fmt.Errorf("%s did not answer on http://%s within %v; see %s", n.Name, n.RPC, wait, logPath(n.Home))
					case <-time.After(200 * time.Millisecond):
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&bin, "cowboyd", "", "cowboyd binary (default: next to cowboy, else on PATH)")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "cowboyd log level")
	cmd.Flags().StringSliceVar(&only, "only", nil, "start only these nodes (node0,node2,…)")
	cmd.Flags().BoolVar(&noPVM, "no-pvm", false, "run the nodes without the Python VM (transfers only)")
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for the APIs to answer")
	return cmd
}

// testnetRole is a manifest node's role; manifests written before full
// nodes existed list validators only.
func testnetRole(n node.TestnetNode) string {
	if n.Role == "" {
		return node.RoleValidator
	}
	return n.Role
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func newTestnetDownCmd(f *Factory) *cobra.Command {
	var only []string
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the testnet's validators (SIGTERM, then SIGKILL after --grace)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := loadTestnet(cmd)
			if err != nil {
				return err
			}
			for _, n := range t.Nodes {
				if len(only) > 0 && !contains(only, n.Name) {
					continue
				}
				pid := runningPid(n.Home)
				if pid == 0 {
					os.Remove(pidPath(n.Home))
					continue
				}
				_ = syscall.Kill(pid, syscall.SIGTERM)
				deadline := time.Now().Add(grace)
				for runningPid(n.Home) != 0 && time.Now().Before(deadline) {
					time.Sleep(100 * time.Millisecond)
				}
				if runningPid(n.Home) != 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				os.Remove(pidPath(n.Home))
				fmt.Fprintf(f.Out, "%s stopped\n", n.Name)
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&only, "only", nil, "stop only these nodes (node0,node2,…)")
	cmd.Flags().DurationVar(&grace, "grace", 10*time.Second, "time to wait for a clean shutdown before SIGKILL")
	return cmd
}

// TestnetNodeStatus is one row of `cowboy testnet status --json`.
type TestnetNodeStatus struct {
	Name            string `json:"name"`
	Role            string `json:"role"` // "validator" or "full"
	Running         bool   `json:"running"`
	Pid             int    `json:"pid,omitempty"`
	API             string `json:"api"`
	Height          uint64 `json:"height"`
	FinalizedHeight uint64 `json:"finalized_height"`
	CommittedHeight uint64 `json:"committed_height"`
	Round           uint64 `json:"round"`
	Epoch           uint64 `json:"epoch"`
	Peers           int    `json:"peers"`
	Error           string `json:"error,omitempty"`
}

func newTestnetStatusCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each node's role, heights, round and peers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := loadTestnet(cmd)
			if err != nil {
				return err
			}
			var rows []TestnetNodeStatus
			for _, n := range t.Nodes {
				r := TestnetNodeStatus{Name: n.Name, Role: testnetRole(n), API: "http://" + n.RPC, Pid: runningPid(n.Home)}
				r.Running = r.Pid != 0
				ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Second)
				st, err := sdk.New(r.API).Chain().Status(ctx)
				cancel()
				if err != nil {
					if r.Running {
						r.Error = err.Error()
					}
				} else {
					r.Height, r.FinalizedHeight, r.CommittedHeight = st.Height, st.FinalizedHeight, st.CommittedHeight
					if st.Consensus != nil {
						r.Round, r.Peers, r.Epoch = st.Consensus.Round, st.Consensus.Peers, st.Consensus.Epoch
					}
				}
				rows = append(rows, r)
			}
			if asJSON {
				return cmdutil.PrintJSON(f.Out, rows)
			}
			tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tROLE\tSTATE\tHEIGHT\tFINALIZED\tCOMMITTED\tROUND\tEPOCH\tPEERS\tAPI")
			for _, r := range rows {
				state := "stopped"
				if r.Running {
					state = "running"
					if r.Error != "" {
						state = "no answer"
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", r.Name, r.Role, state, r.Height, r.FinalizedHeight, r.CommittedHeight, r.Round, r.Epoch, r.Peers, r.API)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
