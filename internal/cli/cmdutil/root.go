package cmdutil

import (
	"github.com/cowboy-foundation/cowboy/internal/version"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

// NewCowboyRoot is the cowboy root command with its global flags and no
// subcommands. internal/cli adds the command tree; `cowboyd testnet` hangs
// the testnet commands on it when cowboy delegates to it, so their help
// and errors read as cowboy's.
func NewCowboyRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "cowboy",
		Short:         "Cowboy command-line client",
		Long:          "cowboy talks to a Cowboy node: keys, accounts, transfers, transactions and blocks.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.String(),
	}
	root.SetIn(f.In)
	root.SetOut(f.Out)
	root.SetErr(f.ErrOut)
	pf := root.PersistentFlags()
	pf.StringVar(&f.NodeURL, "node", EnvOr("COWBOY_NODE", sdk.DefaultNodeURL), "node HTTP API URL (env COWBOY_NODE)")
	pf.StringVar(&f.Home, "home", EnvOr("COWBOY_HOME", DefaultHome()), "CLI home directory holding keys/ (env COWBOY_HOME)")
	pf.StringVar(&f.PasswordFile, "password-file", "", "file holding the keystore password (else env COWBOY_PASSWORD, else a prompt)")
	return root
}
