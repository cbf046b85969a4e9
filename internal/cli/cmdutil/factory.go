// Package cmdutil is what the command packages of cowboy (internal/cli/…)
// and the cowboyd, cowboy-relay and cowboy-runner binaries share: a
// Factory that builds the node client and the keystore lazily (so tests
// drive commands with fake IO against a real node served by httptest),
// --json printing, transaction flags and receipt printing, home and run
// files, loggers, daemon roots and Main.
package cmdutil

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/cowboy-foundation/cowboy/sdk/keystore"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Factory carries global options and builds shared dependencies lazily.
type Factory struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	Now    func() time.Time

	NodeURL      string
	Home         string
	PasswordFile string
	LightKDF     bool

	client *sdk.Client
	keys   *keystore.Store
}

// NewFactory returns a factory wired to the process's standard streams.
func NewFactory() *Factory {
	return &Factory{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, Now: time.Now}
}

// DefaultHome is ~/.cowboy.
func DefaultHome() string { return HomeDir(".cowboy") }

// HomeDir is ~/name (name itself, relative, without a user home).
func HomeDir(name string) string {
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, name)
	}
	return name
}

// Client returns the node client.
func (f *Factory) Client() *sdk.Client {
	if f.client == nil {
		f.client = sdk.New(f.NodeURL)
	}
	return f.client
}

// Keys returns the keystore under --home.
func (f *Factory) Keys() (*keystore.Store, error) {
	if f.keys == nil {
		ks, err := keystore.Open(filepath.Join(f.Home, "keys"))
		if err != nil {
			return nil, err
		}
		f.keys = ks
	}
	return f.keys, nil
}

// Password returns the keystore password from --password-file, then the
// COWBOY_PASSWORD environment variable (which may be empty), then a
// terminal prompt. confirm asks twice (for new keys).
func (f *Factory) Password(prompt string, confirm bool) (string, error) {
	if f.PasswordFile != "" {
		b, err := os.ReadFile(f.PasswordFile)
		if err != nil {
			return "", fmt.Errorf("password file: %w", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	if p, ok := os.LookupEnv("COWBOY_PASSWORD"); ok {
		return p, nil
	}
	file, ok := f.In.(*os.File)
	if !ok || !term.IsTerminal(int(file.Fd())) {
		return "", errors.New("no password: use --password-file, set COWBOY_PASSWORD (may be empty), or run in a terminal")
	}
	read := func(p string) (string, error) {
		fmt.Fprint(f.ErrOut, p)
		b, err := term.ReadPassword(int(file.Fd()))
		fmt.Fprintln(f.ErrOut)
		return string(b), err
	}
	p, err := read(prompt)
	if err != nil {
		return "", err
	}
	if confirm {
		again, err := read("Repeat password: ")
		if err != nil {
			return "", err
		}
		if again != p {
			return "", errors.New("passwords do not match")
		}
	}
	return p, nil
}

// ReadLine reads one line from the factory's input (for piped secrets).
func (f *Factory) ReadLine() (string, error) {
	line, err := bufio.NewReader(f.In).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// JSONFlag adds --json to a read command.
func JSONFlag(cmd *cobra.Command, v *bool) {
	cmd.Flags().BoolVar(v, "json", false, "print JSON instead of human-readable output")
}

// PrintJSON writes v as indented JSON (what --json prints).
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
