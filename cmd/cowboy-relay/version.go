package main

import (
	"fmt"
	"runtime"

	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/relay"
	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/spf13/cobra"
)

func newCmdVersion(io IO) *cobra.Command {
	return cmdutil.NewCmdVersion(io, func() string {
		return fmt.Sprintf("cowboy-relay %s (protocol %s, %s)", relay.Version, wire.ALPN, runtime.Version())
	})
}
