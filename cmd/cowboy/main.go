// Command cowboy is the Cowboy user CLI: keys, accounts, transfers,
// transactions, blocks and the devnet faucet. See `cowboy --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/cowboy-foundation/cowboy/internal/cli"
	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	f := cli.NewFactory()
	if err := cli.NewRoot(f).ExecuteContext(ctx); err != nil {
		var ee *cmdutil.ExitError
		if errors.As(err, &ee) {
			stop()
			os.Exit(ee.Code)
		}
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
