package main

import (
	"fmt"
	"runtime"

	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/spf13/cobra"
)

func newCmdVersion(io IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			fmt.Fprintf(io.Out, "cowboy-relay %s (protocol %s, %s)\n", relay.Version, wire.ALPN, runtime.Version())
		},
	}
}
