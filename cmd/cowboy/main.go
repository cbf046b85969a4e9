// Command cowboy is the Cowboy user CLI: keys, accounts, transfers,
// transactions, blocks and the devnet faucet. See `cowboy --help`.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/cowboy-foundation/cowboy/internal/cli"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	f := cli.NewFactory()
	cmdutil.Main(ctx, cli.NewRoot(f), "Error:")
}
