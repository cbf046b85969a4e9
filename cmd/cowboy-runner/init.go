package main

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cowboy-foundation/cowboy/runner"
	"github.com/cowboy-foundation/cowboy/runner/executor/httpx"
	"github.com/cowboy-foundation/cowboy/sdk/keystore"
	"github.com/spf13/cobra"
)

// InitOptions are the flags of `init`.
type InitOptions struct {
	IO           IO
	Home         string
	Node         string
	Keystore     string
	Account      string
	Stake        string
	JobTypes     string
	Domains      string
	Listen       string
	PublicURL    string
	Metrics      string
	MaxJobs      uint64
	AllowPrivate bool
	TEE          string
	LightKDF     bool
	Extra        string // file whose TOML is appended (executor tables)
}

func newCmdInit(io IO, runF func(*InitOptions) error) *cobra.Command {
	o := &InitOptions{IO: io}
	d := runner.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create a runner home: commented runner.toml, account key and Ed25519 result key",
		Long: `Create a runner home. The account key is created in the keystore (or an
existing key of that name is used); its password comes from
COWBOY_RUNNER_PASSWORD or COWBOY_PASSWORD. Fund the printed address with the
stake plus fees before 'cowboy-runner run'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Home == "" {
				return errors.New("--home is required")
			}
			if runF != nil {
				return runF(o)
			}
			return initRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Home, "home", "", "runner home directory")
	f.StringVar(&o.Node, "node", d.Node, "node HTTP API URL")
	f.StringVar(&o.Keystore, "keystore", d.Account.Keystore, "keystore directory (relative to --home), e.g. ~/.cowboy/keys to use a cowboy CLI key")
	f.StringVar(&o.Account, "account", d.Account.Name, "key name in the keystore (created if missing)")
	f.StringVar(&o.Stake, "stake", d.Registration.Stake, "self-bond in CBY")
	f.StringVar(&o.JobTypes, "job-types", strings.Join(d.Registration.JobTypes, ","), "job types served: http,llm,mcp")
	f.StringVar(&o.Domains, "domains", "", "HTTP domains / curated sets advertised (comma-separated)")
	f.StringVar(&o.Listen, "listen", d.Aggregator.Listen, "aggregator API listen address")
	f.StringVar(&o.PublicURL, "public-url", "", "aggregator URL registered on chain (default http://<listen>)")
	f.StringVar(&o.Metrics, "metrics", d.Metrics.Listen, "metrics and /healthz listen address, empty = off")
	f.Uint64Var(&o.MaxJobs, "max-concurrent-jobs", d.Registration.MaxConcurrentJobs, "jobs worked on at once")
	f.BoolVar(&o.AllowPrivate, "allow-private", false, "let the HTTP executor reach loopback/private addresses (tests and demos only)")
	f.StringVar(&o.TEE, "tee", d.TEE.Backend, "TEE backend: none | simulation | sgx")
	f.BoolVar(&o.LightKDF, "light-kdf", false, "weak key encryption, for throwaway devnet keys")
	f.StringVar(&o.Extra, "append", "", "file of TOML appended to the config (e.g. [[executors.llm.models]] tables)")
	return cmd
}

func initRun(o *InitOptions) error {
	if _, err := os.Stat(filepath.Join(o.Home, runner.ConfigFile)); err == nil {
		return fmt.Errorf("%s already exists; edit it or choose another --home", filepath.Join(o.Home, runner.ConfigFile))
	}
	c := runner.DefaultConfig()
	c.Node, c.Account.Keystore, c.Account.Name, c.Registration.Stake = o.Node, o.Keystore, o.Account, o.Stake
	c.Registration.JobTypes = splitComma(o.JobTypes)
	c.Registration.Domains = splitComma(o.Domains)
	c.Registration.MaxConcurrentJobs = o.MaxJobs
	c.Aggregator.Listen, c.Aggregator.PublicURL, c.Metrics.Listen, c.TEE.Backend = o.Listen, o.PublicURL, o.Metrics, o.TEE
	c.Executors.HTTP = &httpx.Config{AllowPrivate: o.AllowPrivate}
	var extra string
	if o.Extra != "" {
		b, err := os.ReadFile(o.Extra)
		if err != nil {
			return fmt.Errorf("--append: %w", err)
		}
		extra = string(b)
	}
	if _, err := c.Validate(); err != nil {
		return err
	}
	password, err := c.Password(o.Home)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.Home, 0o700); err != nil {
		return err
	}
	ks, err := keystore.Open(runner.Path(o.Home, c.Account.Keystore))
	if err != nil {
		return err
	}
	entry, err := ks.Get(c.Account.Name)
	created := false
	if errors.Is(err, keystore.ErrNotFound) {
		kdf := keystore.Standard
		if o.LightKDF {
			kdf = keystore.Light
		}
		if entry, err = ks.New(c.Account.Name, password, kdf); err != nil {
			return err
		}
		created = true
	} else if err != nil {
		return err
	} else if _, err := ks.Unlock(c.Account.Name, password); err != nil {
		return err
	}
	keyPath := runner.Path(o.Home, c.Account.ResultKeyFile)
	rk, err := runner.LoadResultKey(keyPath)
	if err != nil {
		if rk, err = runner.NewResultKey(keyPath); err != nil {
			return err
		}
	}
	if err := runner.WriteConfig(o.Home, c, extra); err != nil {
		return err
	}
	how := "existing key"
	if created {
		how = "new key"
	}
	fmt.Fprintf(o.IO.Out, "initialised %s\naccount     %s (%s %q)\nresult key  %x\nconfig      %s\n",
		o.Home, entry.Address, how, c.Account.Name, rk.Public().(ed25519.PublicKey), filepath.Join(o.Home, runner.ConfigFile))
	fmt.Fprintf(o.IO.Out, "fund the account with %s CBY of stake plus fees, then: cowboy-runner run --home %s\n", c.Registration.Stake, o.Home)
	return nil
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
