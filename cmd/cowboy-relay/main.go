// Command cowboy-relay runs a CBFS storage relay.
//
//	cowboy-relay init    --home DIR [--listen ADDR] [--capacity BYTES]
//	cowboy-relay run     --home DIR [--listen ADDR] [--metrics ADDR]
//	cowboy-relay status  --home DIR [--json]
//	cowboy-relay version
//
// HOME holds node.key (hex secp256k1 key, 0600), config.json, data/ (the
// object store) and, while running, run.json (actual listen addresses, pid).
package main

import (
	"context"
	"os"

	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// IO carries the command streams so tests can replace them.
type IO = cmdutil.IO

func newRootCmd(io IO) *cobra.Command {
	root := cmdutil.NewDaemonRoot("cowboy-relay", "CBFS storage relay", io)
	root.AddCommand(newCmdInit(io, nil), newCmdRun(io, nil), newCmdStatus(io, nil), newCmdVersion(io))
	return root
}

func main() {
	cmdutil.Main(context.Background(), newRootCmd(IO{Out: os.Stdout, Err: os.Stderr}), "cowboy-relay:")
}
