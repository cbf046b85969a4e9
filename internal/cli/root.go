// Package cli wires the cowboy command tree: one package per noun under
// internal/cli (account, actor, job, volume, …), each command a cobra
// constructor taking the shared cmdutil.Factory.
package cli

import (
	"github.com/cowboy-foundation/cowboy/internal/cli/account"
	"github.com/cowboy-foundation/cowboy/internal/cli/actor"
	"github.com/cowboy-foundation/cowboy/internal/cli/bridge"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
	"github.com/cowboy-foundation/cowboy/internal/cli/entitlement"
	"github.com/cowboy-foundation/cowboy/internal/cli/gov"
	"github.com/cowboy-foundation/cowboy/internal/cli/job"
	"github.com/cowboy-foundation/cowboy/internal/cli/keys"
	"github.com/cowboy-foundation/cowboy/internal/cli/ledger"
	"github.com/cowboy-foundation/cowboy/internal/cli/model"
	"github.com/cowboy-foundation/cowboy/internal/cli/relay"
	"github.com/cowboy-foundation/cowboy/internal/cli/runner"
	"github.com/cowboy-foundation/cowboy/internal/cli/status"
	"github.com/cowboy-foundation/cowboy/internal/cli/tee"
	"github.com/cowboy-foundation/cowboy/internal/cli/testnet"
	"github.com/cowboy-foundation/cowboy/internal/cli/timer"
	"github.com/cowboy-foundation/cowboy/internal/cli/token"
	"github.com/cowboy-foundation/cowboy/internal/cli/tx"
	"github.com/cowboy-foundation/cowboy/internal/cli/validator"
	"github.com/cowboy-foundation/cowboy/internal/cli/volume"
	"github.com/spf13/cobra"
)

// Factory is the shared command factory.
type Factory = cmdutil.Factory

// NewFactory returns a factory wired to the process's standard streams.
func NewFactory() *Factory { return cmdutil.NewFactory() }

// NewRoot builds the cowboy command tree on f.
func NewRoot(f *Factory) *cobra.Command {
	root := cmdutil.NewCowboyRoot(f)
	root.AddCommand(
		status.NewCmdStatus(f),
		account.NewCmdAccount(f),
		keys.NewCmdKeys(f),
		tx.NewCmdTx(f),
		ledger.NewCmdFaucet(f),
		ledger.NewCmdBlock(f),
		ledger.NewCmdEvents(f),
		actor.NewCmdActor(f),
		actor.NewCmdLib(f),
		relay.NewCmdRelay(f),
		volume.NewCmdVolume(f),
		volume.NewCmdBlob(f),
		job.NewCmdJob(f),
		runner.NewCmdRunner(f),
		entitlement.NewCmdEntitlement(f),
		entitlement.NewCmdPool(f),
		tee.NewCmdTEE(f),
		tee.NewCmdSecret(f),
		timer.NewCmdTimer(f),
		testnet.NewCmdProxy(f),
		validator.NewCmdValidator(f),
		model.NewCmdModel(f),
		token.NewCmdToken(f),
		bridge.NewCmdBridge(f),
		gov.NewCmdGov(f), gov.NewCmdParams(f), gov.NewCmdTreasury(f), gov.NewCmdCouncil(f),
	)
	return root
}
