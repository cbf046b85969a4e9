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
	"context"
	"os"

	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/internal/version"
	"github.com/spf13/cobra"
)

// IO carries the command streams so tests can replace them.
type IO = cmdutil.IO

func newRootCmd(io IO) *cobra.Command {
	root := cmdutil.NewDaemonRoot("cowboy-runner", "Cowboy runner daemon: executes off-chain compute jobs for the chain", io)
	root.AddCommand(newCmdInit(io, nil), newCmdRun(io, nil), newCmdStatus(io, nil), newCmdDeregister(io), newCmdWithdraw(io), newCmdStandin(io),
		cmdutil.NewCmdVersion(io, func() string { return "cowboy-runner " + version.String() }))
	return root
}

func main() {
	cmdutil.Main(context.Background(), newRootCmd(IO{Out: os.Stdout, Err: os.Stderr}), "cowboy-runner:")
}
