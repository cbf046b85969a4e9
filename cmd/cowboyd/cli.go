package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	clitestnet "github.com/cowboy-foundation/cowboy/internal/cli/testnet"
)

// Factory is the command factory shared with the cowboy CLI.
type Factory = cmdutil.Factory

// delegated reports whether cowboy ran this process for `cowboy testnet`
// (and clears the mark, so the validators `testnet up` starts do not
// inherit it).
func delegated(args []string) bool {
	_, ok := os.LookupEnv(clitestnet.DelegateEnv)
	os.Unsetenv(clitestnet.DelegateEnv)
	return ok && len(args) > 0 && args[0] == "testnet"
}

// newCowboyTestnetRoot is the tree cowboyd runs for `cowboy testnet`:
// cowboy's root and global flags with the testnet commands, so usage,
// help and errors read exactly as cowboy's.
func newCowboyTestnetRoot() *cobra.Command {
	f := cmdutil.NewFactory()
	root := cmdutil.NewCowboyRoot(f)
	root.AddCommand(newTestnetCmd(f))
	return root
}
