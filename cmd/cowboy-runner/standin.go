package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/cowboy-foundation/cowboy/runner/executor/llm/standin"
	"github.com/spf13/cobra"
)

// newCmdStandin serves the local OpenAI-compatible stand-in used by the
// demo when no real LLM endpoint is configured. It is not a language model
// and says so in every answer.
func newCmdStandin(io IO) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "llm-standin",
		Short: "Serve a local OpenAI-compatible stand-in (demos and tests; not a language model)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			fmt.Fprintf(io.Out, "LLM stand-in (model %q, not a language model) at http://%s/v1\n", standin.DefaultModel, ln.Addr())
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err = standin.New(standin.Options{}).ServeListener(ctx, ln)
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "listen address")
	return cmd
}
