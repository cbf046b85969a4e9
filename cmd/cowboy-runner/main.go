// Command cowboy-runner is the runner daemon of the off-chain compute
// market (docs/RUNNER.md).
//
//	cowboy-runner init    --home DIR [--node URL] [--keystore DIR --account NAME] [--stake CBY] ...
//	cowboy-runner run     --home DIR [--node URL] [--listen ADDR] [--metrics ADDR] ...
//	cowboy-runner status  --home DIR [--json]
//	cowboy-runner deregister --home DIR   (daemon stopped; the stake starts unbonding)
//	cowboy-runner withdraw   --home DIR   (matured unbonding stake to the account)
//	cowboy-runner version
//	cowboy-runner llm-standin [--listen ADDR]   (local OpenAI-compatible stand-in for demos)
//
// HOME holds runner.toml, the keystore (unless the config points
// elsewhere), result.key (Ed25519 seed, 0600), data/runner.db (bbolt) and,
// while running, run.json (bound addresses, pid).
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/cowboy-foundation/cowboy/internal/version"
	"github.com/spf13/cobra"
)

// IO carries the command streams so tests can replace them.
type IO struct {
	Out, Err io.Writer
}

func newRootCmd(io IO) *cobra.Command {
	root := &cobra.Command{
		Use:           "cowboy-runner",
		Short:         "Cowboy runner daemon: executes off-chain compute jobs for the chain",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	root.AddCommand(newCmdInit(io, nil), newCmdRun(io, nil), newCmdStatus(io, nil), newCmdDeregister(io), newCmdWithdraw(io), newCmdStandin(io), &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(io.Out, "cowboy-runner", version.String()) },
	})
	return root
}

func main() {
	if err := newRootCmd(IO{Out: os.Stdout, Err: os.Stderr}).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "cowboy-runner:", err)
		os.Exit(1)
	}
}
