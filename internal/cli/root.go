package cli

import (
	"github.com/cowboy-foundation/cowboy/internal/version"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

// NewRoot builds the cowboy command tree on f.
func NewRoot(f *Factory) *cobra.Command {
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
	pf.StringVar(&f.NodeURL, "node", envOr("COWBOY_NODE", sdk.DefaultNodeURL), "node HTTP API URL (env COWBOY_NODE)")
	pf.StringVar(&f.Home, "home", envOr("COWBOY_HOME", DefaultHome()), "CLI home directory holding keys/ (env COWBOY_HOME)")
	pf.StringVar(&f.PasswordFile, "password-file", "", "file holding the keystore password (else env COWBOY_PASSWORD, else a prompt)")
	root.AddCommand(
		newStatusCmd(f),
		newAccountCmd(f),
		newKeysCmd(f),
		newTxCmd(f),
		newFaucetCmd(f),
		newBlockCmd(f),
		newEventsCmd(f),
		newActorCmd(f),
		newLibCmd(f),
		newRelayCmd(f),
		newVolumeCmd(f),
		newJobCmd(f),
		newRunnerCmd(f),
		newEntitlementCmd(f),
		newPoolCmd(f),
		newTEECmd(f),
		newSecretCmd(f),
		newTimerCmd(f),
		newTestnetCmd(f),
		newValidatorCmd(f),
		newModelCmd(f),
		newTokenCmd(f),
		newGovCmd(f), newParamsCmd(f), newTreasuryCmd(f), newCouncilCmd(f),
	)
	return root
}
