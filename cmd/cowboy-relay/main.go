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
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// IO carries the command streams so tests can replace them.
type IO struct {
	Out, Err io.Writer
}

func newRootCmd(io IO) *cobra.Command {
	root := &cobra.Command{
		Use:           "cowboy-relay",
		Short:         "CBFS storage relay",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	root.AddCommand(newCmdInit(io, nil), newCmdRun(io, nil), newCmdStatus(io, nil), newCmdVersion(io))
	return root
}

func main() {
	if err := newRootCmd(IO{Out: os.Stdout, Err: os.Stderr}).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "cowboy-relay:", err)
		os.Exit(1)
	}
}
