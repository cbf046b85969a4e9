// Command cowboy-runner is the runner daemon. This build only starts,
// reports its version and configuration, and exits cleanly on SIGTERM or
// SIGINT: job execution arrives with the runner daemon issue.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cowboy-foundation/cowboy/internal/version"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/spf13/cobra"
)

type config struct {
	Home string `json:"home"`
	Node string `json:"node"`
}

func main() {
	cfg := config{}
	root := &cobra.Command{
		Use:           "cowboy-runner",
		Short:         "Cowboy runner daemon (job execution not yet available in this build)",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&cfg.Home, "home", "", "runner home directory")
	root.PersistentFlags().StringVar(&cfg.Node, "node", sdk.DefaultNodeURL, "node HTTP API URL")
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "cowboy-runner", version.String())
		},
	}, &cobra.Command{
		Use:   "run",
		Short: "Start, print the configuration and wait for SIGTERM",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			b, _ := json.Marshal(cfg)
			fmt.Fprintf(cmd.OutOrStdout(), "cowboy-runner %s starting with config %s\n", version.String(), b)
			fmt.Fprintln(cmd.OutOrStdout(), "job execution is not available in this build; waiting for SIGTERM")
			<-ctx.Done()
			fmt.Fprintln(cmd.OutOrStdout(), "cowboy-runner stopped")
			return nil
		},
	})
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
