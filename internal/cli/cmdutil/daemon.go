package cmdutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// IO carries a daemon command's output streams so tests can replace them.
type IO struct {
	Out, Err io.Writer
}

// RunFile is the file a running daemon (relay, runner) keeps in its home:
// its bound addresses and pid, removed when it stops.
const RunFile = "run.json"

// WriteRunFile writes v as JSON to home/run.json, atomically. remove
// deletes the file (call it when the daemon stops).
func WriteRunFile(home string, v any) (remove func(), err error) {
	b, err := json.Marshal(v)
	if err != nil {
		return func() {}, err
	}
	path := filepath.Join(home, RunFile)
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		return func() {}, fmt.Errorf("write run file: %w", err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return func() {}, fmt.Errorf("write run file: %w", err)
	}
	return func() { os.Remove(path) }, nil
}

// ReadRunFile decodes home/run.json into v; the error wraps
// os.ErrNotExist when no daemon is running there.
func ReadRunFile(home string, v any) error {
	b, err := os.ReadFile(filepath.Join(home, RunFile))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// NewLogger returns a text (or JSON) logger on w at level ("" is info).
// A bad level is returned as slog.Level.UnmarshalText's error, for the
// caller to name its flag or setting.
func NewLogger(w io.Writer, level string, asJSON bool) (*slog.Logger, error) {
	var l slog.Level
	if level != "" {
		if err := l.UnmarshalText([]byte(level)); err != nil {
			return nil, err
		}
	}
	opts := &slog.HandlerOptions{Level: l}
	if asJSON {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

// NewDaemonRoot is a daemon binary's root command: no usage or error
// printing of its own (Main prints the error once).
func NewDaemonRoot(use, short string, io IO) *cobra.Command {
	root := &cobra.Command{Use: use, Short: short, SilenceUsage: true, SilenceErrors: true}
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	return root
}

// NewCmdVersion is `version`, printing line() and a newline.
func NewCmdVersion(io IO, line func() string) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { fmt.Fprintln(io.Out, line()) },
	}
}

// Main executes root and exits the process: 0 on success, the code of an
// ExitError quietly, else 1 after printing prefix and the error to stderr.
func Main(ctx context.Context, root *cobra.Command, prefix string) {
	err := root.ExecuteContext(ctx)
	if err == nil {
		return
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.Code)
	}
	fmt.Fprintln(os.Stderr, prefix, err)
	os.Exit(1)
}
