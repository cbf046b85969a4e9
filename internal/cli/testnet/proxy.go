// Package testnet is `cowboy testnet`: it runs `cowboyd testnet` with the
// same arguments, so that writing validator homes and genesis (which needs
// the node's code) stays in the node binary and cowboy does not link it.
package testnet

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cowboy-foundation/cowboy/internal/cli/cmdutil"
)

// DelegateEnv is set in the environment of the cowboyd that cowboy runs
// for `cowboy testnet`; cowboyd then presents the commands as cowboy's.
const DelegateEnv = "COWBOY_TESTNET_DELEGATE"

// ErrNoCowboyd means the node binary was not found.
var ErrNoCowboyd = errors.New("cowboyd not found next to cowboy or on PATH; pass --cowboyd")

// NewCmdProxy is `cowboy testnet …`, run by the cowboyd next to this
// executable (or on PATH, or named by --cowboyd).
func NewCmdProxy(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "testnet",
		Short: "Run a local multi-validator network on this machine",
		Long: "testnet init writes validator homes, keys and a shared genesis under --dir; up starts one cowboyd per\n" +
			"validator (logs and pid files in each home), down stops them, status shows heights and peers.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return delegate(cmd, f, args)
		},
	}
	cmd.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		// `cowboy help testnet [SUB]`: cobra passes no arguments to a help
		// function, so SUB comes from the process's command line.
		if err := delegate(cmd, f, append(afterTestnet(os.Args[1:]), "--help")); err != nil {
			var ee *cmdutil.ExitError
			if !errors.As(err, &ee) {
				fmt.Fprintln(f.ErrOut, "Error:", err)
			}
		}
	})
	return cmd
}

func delegate(cmd *cobra.Command, f *cmdutil.Factory, args []string) error {
	bin, err := CowboydPath(flagValue(args, "cowboyd"))
	if err != nil {
		return err
	}
	c := exec.CommandContext(cmd.Context(), bin, append([]string{"testnet"}, args...)...)
	c.Stdin, c.Stdout, c.Stderr = f.In, f.Out, f.ErrOut
	c.Env = append(os.Environ(), DelegateEnv+"=1")
	if err := c.Run(); err != nil {
		var xe *exec.ExitError
		if errors.As(err, &xe) && xe.ExitCode() > 0 {
			// cowboyd has printed its error already.
			return &cmdutil.ExitError{Code: xe.ExitCode()}
		}
		return fmt.Errorf("run %s: %w", bin, err)
	}
	return nil
}

// afterTestnet is what follows "testnet" in args, without flags.
func afterTestnet(args []string) []string {
	var rest []string
	for i, a := range args {
		if a == "testnet" {
			for _, b := range args[i+1:] {
				if !strings.HasPrefix(b, "-") {
					rest = append(rest, b)
				}
			}
			break
		}
	}
	return rest
}

// flagValue finds --name VALUE or --name=VALUE in unparsed args.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// CowboydPath finds the node binary: flag if set, else next to this
// executable, else on PATH.
func CowboydPath(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "cowboyd")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("cowboyd")
	if err != nil {
		return "", ErrNoCowboyd
	}
	return p, nil
}
