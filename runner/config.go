package runner

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/runner/executor/httpx"
	"github.com/cowboy-foundation/cowboy/runner/executor/llm"
	"github.com/cowboy-foundation/cowboy/runner/executor/mcp"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/pelletier/go-toml/v2"
)

// ConfigFile is the name of the configuration file in a runner home.
const ConfigFile = "runner.toml"

// Config is the runner's configuration file (HOME/runner.toml). Relative
// paths are relative to the home directory. Environment variables
// COWBOY_RUNNER_<KEY> (ApplyEnv) and command-line flags override it.
type Config struct {
	Node     string `toml:"node"`
	DataDir  string `toml:"data_dir"`
	LogLevel string `toml:"log_level"`

	Account      AccountConfig      `toml:"account"`
	Registration RegistrationConfig `toml:"registration"`
	Aggregator   AggregatorConfig   `toml:"aggregator"`
	Metrics      MetricsConfig      `toml:"metrics"`
	TEE          TEEConfig          `toml:"tee"`
	Jobs         JobsConfig         `toml:"jobs"`
	Executors    ExecutorsConfig    `toml:"executors"`
}

// AccountConfig names the runner's keys.
type AccountConfig struct {
	Keystore      string `toml:"keystore"`
	Name          string `toml:"name"`
	PasswordFile  string `toml:"password_file"`
	ResultKeyFile string `toml:"result_key_file"`
}

// RegistrationConfig is what the runner registers in the Runner Registry.
type RegistrationConfig struct {
	Stake             string      `toml:"stake"`
	MaxConcurrentJobs uint64      `toml:"max_concurrent_jobs"`
	MaxJobValue       string      `toml:"max_job_value"`
	JobTypes          []string    `toml:"job_types"`
	Models            []string    `toml:"models"`
	Domains           []string    `toml:"domains"`
	Rates             RatesConfig `toml:"rates"`
}

// RatesConfig is the rate card in CBY.
type RatesConfig struct {
	Base         string `toml:"base"`
	PerToken     string `toml:"per_token"`
	PerWallMs    string `toml:"per_wall_ms"`
	PerMemoryMiB string `toml:"per_memory_mib"`
}

// AggregatorConfig is the result-collection API.
type AggregatorConfig struct {
	Listen      string `toml:"listen"`
	PublicURL   string `toml:"public_url"`
	PushTimeout string `toml:"push_timeout"`
}

// MetricsConfig is the Prometheus and health endpoint.
type MetricsConfig struct {
	Listen string `toml:"listen"`
}

// TEEConfig selects the attestation backend.
type TEEConfig struct {
	Backend string `toml:"backend"` // none | simulation | sgx
}

// JobsConfig tunes job handling.
type JobsConfig struct {
	// CommitMarginBlocks: a job whose commit deadline is closer than this
	// when its result is ready is abandoned instead of committed late.
	CommitMarginBlocks uint64 `toml:"commit_margin_blocks"`
	// KeepBlocks: finished job records are pruned this many blocks later.
	KeepBlocks uint64 `toml:"keep_blocks"`
	// ToolchainDigest is the toolchain digest (0x-hex, spec 002 §5.4) this
	// runner declares: a job pinning another one is refused and not
	// committed. Empty: none, so every pinned job is refused.
	ToolchainDigest string `toml:"toolchain_digest"`
	// Volumes serves jobs that name CBFS volumes (JobSpec.Volumes): the
	// runner reads inputs and, as aggregator, writes outputs through the
	// chain's relay directory with its account key (docs/RUNNER.md, "Job
	// volumes"). Off: such jobs are refused (no fault reported).
	Volumes bool `toml:"volumes"`
}

// ExecutorsConfig holds each executor's own section ([executors.http],
// [executors.llm], [executors.mcp]); a job type listed in
// registration.job_types needs its section (http works with an empty one).
type ExecutorsConfig struct {
	HTTP *httpx.Config `toml:"http"`
	LLM  *llm.Config   `toml:"llm"`
	MCP  *mcp.Config   `toml:"mcp"`
}

// DefaultConfig returns the configuration `init` writes.
func DefaultConfig() Config {
	return Config{
		Node: sdk.DefaultNodeURL, DataDir: "data", LogLevel: "info",
		Account: AccountConfig{Keystore: "keystore", Name: "runner", ResultKeyFile: "result.key"},
		Registration: RegistrationConfig{Stake: "10", MaxConcurrentJobs: 4, JobTypes: []string{"http"},
			Rates: RatesConfig{Base: "0.001", PerToken: "0", PerWallMs: "0", PerMemoryMiB: "0"}},
		Aggregator: AggregatorConfig{Listen: "127.0.0.1:7700", PushTimeout: "5s"},
		Metrics:    MetricsConfig{Listen: "127.0.0.1:9700"},
		TEE:        TEEConfig{Backend: "none"},
		Jobs:       JobsConfig{CommitMarginBlocks: 1, KeepBlocks: 100_000},
	}
}

// LoadConfig reads HOME/runner.toml over the defaults, refusing unknown
// keys, then applies the environment.
func LoadConfig(home string) (Config, error) {
	c := DefaultConfig()
	b, err := os.ReadFile(filepath.Join(home, ConfigFile))
	if err != nil {
		return c, fmt.Errorf("read config: %w (run `cowboy-runner init --home %s`)", err, home)
	}
	dec := toml.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var se *toml.StrictMissingError
		if errors.As(err, &se) {
			return c, fmt.Errorf("config %s: %s", filepath.Join(home, ConfigFile), se.String())
		}
		return c, fmt.Errorf("config %s: %w", filepath.Join(home, ConfigFile), err)
	}
	if err := c.ApplyEnv(os.LookupEnv); err != nil {
		return c, err
	}
	return c, nil
}

// ApplyEnv overrides scalar settings from COWBOY_RUNNER_* variables:
// NODE, DATA_DIR, LOG_LEVEL, KEYSTORE, ACCOUNT, PASSWORD_FILE,
// RESULT_KEY_FILE, STAKE, MAX_CONCURRENT_JOBS, MAX_JOB_VALUE, JOB_TYPES,
// MODELS, DOMAINS (comma-separated), AGGREGATOR_LISTEN, PUBLIC_URL,
// METRICS_LISTEN, TEE_BACKEND.
func (c *Config) ApplyEnv(lookup func(string) (string, bool)) error {
	str := map[string]*string{
		"NODE": &c.Node, "DATA_DIR": &c.DataDir, "LOG_LEVEL": &c.LogLevel, "KEYSTORE": &c.Account.Keystore,
		"ACCOUNT": &c.Account.Name, "PASSWORD_FILE": &c.Account.PasswordFile, "RESULT_KEY_FILE": &c.Account.ResultKeyFile,
		"STAKE": &c.Registration.Stake, "MAX_JOB_VALUE": &c.Registration.MaxJobValue, "AGGREGATOR_LISTEN": &c.Aggregator.Listen,
		"PUBLIC_URL": &c.Aggregator.PublicURL, "METRICS_LISTEN": &c.Metrics.Listen, "TEE_BACKEND": &c.TEE.Backend,
	}
	for k, p := range str {
		if v, ok := lookup("COWBOY_RUNNER_" + k); ok {
			*p = v
		}
	}
	lists := map[string]*[]string{"JOB_TYPES": &c.Registration.JobTypes, "MODELS": &c.Registration.Models, "DOMAINS": &c.Registration.Domains}
	for k, p := range lists {
		if v, ok := lookup("COWBOY_RUNNER_" + k); ok {
			*p = splitList(v)
		}
	}
	if v, ok := lookup("COWBOY_RUNNER_MAX_CONCURRENT_JOBS"); ok {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("COWBOY_RUNNER_MAX_CONCURRENT_JOBS: %w", err)
		}
		c.Registration.MaxConcurrentJobs = n
	}
	return nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Path resolves p against home (absolute paths are kept).
func Path(home, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(home, p)
}

// Settings are the validated, parsed values of a Config.
type Settings struct {
	Stake        *big.Int
	MaxJobValue  *big.Int // nil: none declared
	JobTypes     []job.JobType
	Rates        job.RateCard
	PushTimeout  time.Duration
	PublicURL    string
	TEESimulated bool
	TEESGX       bool // needs a binary built with -tags ego, run in an EGo enclave (docs/TEE.md §5)
}

// Validate checks the configuration and parses its amounts.
func (c *Config) Validate() (*Settings, error) {
	s := &Settings{}
	var err error
	if c.Node == "" {
		return nil, errors.New("config: node is empty")
	}
	if s.Stake, err = sdk.ParseCBY(c.Registration.Stake); err != nil {
		return nil, fmt.Errorf("config: registration.stake: %w", err)
	}
	if c.Registration.MaxJobValue != "" {
		if s.MaxJobValue, err = sdk.ParseCBY(c.Registration.MaxJobValue); err != nil {
			return nil, fmt.Errorf("config: registration.max_job_value: %w", err)
		}
	}
	if c.Registration.MaxConcurrentJobs == 0 || c.Registration.MaxConcurrentJobs > 1<<16 {
		return nil, errors.New("config: registration.max_concurrent_jobs must be 1..65536")
	}
	if len(c.Registration.JobTypes) == 0 {
		return nil, errors.New("config: registration.job_types is empty")
	}
	for _, name := range c.Registration.JobTypes {
		t, ok := ParseJobType(name)
		if !ok {
			return nil, fmt.Errorf("config: registration.job_types: unknown type %q (llm, http, mcp)", name)
		}
		s.JobTypes = append(s.JobTypes, t)
	}
	for _, r := range []struct {
		name string
		v    string
		dst  **big.Int
	}{{"base", c.Registration.Rates.Base, &s.Rates.Base}, {"per_token", c.Registration.Rates.PerToken, &s.Rates.PerToken},
		{"per_wall_ms", c.Registration.Rates.PerWallMs, &s.Rates.PerWallMs}, {"per_memory_mib", c.Registration.Rates.PerMemoryMiB, &s.Rates.PerMemoryMiB}} {
		v := r.v
		if v == "" {
			v = "0"
		}
		if *r.dst, err = sdk.ParseCBY(v); err != nil {
			return nil, fmt.Errorf("config: registration.rates.%s: %w", r.name, err)
		}
	}
	if s.PushTimeout, err = time.ParseDuration(c.Aggregator.PushTimeout); err != nil || s.PushTimeout <= 0 {
		return nil, fmt.Errorf("config: aggregator.push_timeout %q: want a positive duration like 5s", c.Aggregator.PushTimeout)
	}
	// An empty public_url is derived from the bound listen address at start.
	s.PublicURL = c.Aggregator.PublicURL
	if s.PublicURL != "" {
		u, err := url.Parse(s.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(s.PublicURL) > 256 {
			return nil, fmt.Errorf("config: aggregator.public_url %q: want an http(s) URL of at most 256 bytes", s.PublicURL)
		}
	}
	switch c.TEE.Backend {
	case "", "none":
	case "simulation":
		s.TEESimulated = true
	case "sgx":
		s.TEESGX = true
	default:
		return nil, fmt.Errorf("config: tee.backend %q: none, simulation or sgx", c.TEE.Backend)
	}
	return s, nil
}

// ParseJobType maps a config name to a job type.
func ParseJobType(s string) (job.JobType, bool) {
	switch strings.ToLower(s) {
	case "llm":
		return job.JobTypeLLM, true
	case "http":
		return job.JobTypeHTTP, true
	case "mcp":
		return job.JobTypeMCP, true
	}
	return 0, false
}

// LoadResultKey reads the Ed25519 result key (hex seed) from path.
func LoadResultKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("result key: %w", err)
	}
	seed, err := hex.DecodeString(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x")))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("result key %s: want %d hex-encoded bytes (an Ed25519 seed)", path, ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// NewResultKey writes a fresh Ed25519 seed to path (0600), refusing to
// overwrite an existing key.
func NewResultKey(path string) (ed25519.PrivateKey, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("result key: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(seed) + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("result key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	return ed25519.NewKeyFromSeed(seed), f.Close()
}

// configTemplate is the commented file `cowboy-runner init` writes.
const configTemplate = `# cowboy-runner configuration (docs/RUNNER.md). Relative paths are relative
# to this directory. Every scalar can be overridden by an environment variable
# COWBOY_RUNNER_<NAME> (e.g. COWBOY_RUNNER_NODE) and by command-line flags.

# Node HTTP API the runner follows and sends transactions to.
node = {{q .Node}}
# Job database (bbolt) and other state.
data_dir = {{q .DataDir}}
# debug | info | warn | error
log_level = {{q .LogLevel}}

[account]
# secp256k1 account (sdk/keystore, go-ethereum v3 files) that pays stake and
# fees. The password comes from password_file, else COWBOY_RUNNER_PASSWORD,
# else COWBOY_PASSWORD.
keystore = {{q .Account.Keystore}}
name = {{q .Account.Name}}
password_file = {{q .Account.PasswordFile}}
# Ed25519 result key (hex seed, mode 0600): signs every result; its public
# half is registered on chain.
result_key_file = {{q .Account.ResultKeyFile}}

[registration]
# Self-bond in CBY. The runner tops its stake up to this on start. The chain
# requires at least max(min_runner_stake, 1.5 x max_job_value).
stake = {{q .Registration.Stake}}
# Jobs this runner works on at once; further assignments are declined.
max_concurrent_jobs = {{.Registration.MaxConcurrentJobs}}
# Largest escrow (CBY) this runner accepts; empty = 2/3 of the stake.
max_job_value = {{q .Registration.MaxJobValue}}
# Job types served: http, llm, mcp (each needs its [executors.*] section).
job_types = {{list .Registration.JobTypes}}
# LLM models served (names jobs ask for).
models = {{list .Registration.Models}}
# HTTP domains / curated sets (set:price_feeds, ...) this runner serves.
domains = {{list .Registration.Domains}}

[registration.rates]
# Rate card in CBY: cost = base + tokens*per_token + wall_ms*per_wall_ms
#                          + ceil(memory/MiB)*per_memory_mib
base = {{q .Registration.Rates.Base}}
per_token = {{q .Registration.Rates.PerToken}}
per_wall_ms = {{q .Registration.Rates.PerWallMs}}
per_memory_mib = {{q .Registration.Rates.PerMemoryMiB}}

[aggregator]
# Where committee members push their results when this runner aggregates.
listen = {{q .Aggregator.Listen}}
# URL registered on chain for other runners to reach the listener; empty =
# http://<bound listen address> (set it when listening on 0.0.0.0 or behind
# a proxy).
public_url = {{q .Aggregator.PublicURL}}
# Timeout of one push to another runner's aggregator.
push_timeout = {{q .Aggregator.PushTimeout}}

[metrics]
# Prometheus /metrics and /healthz; empty = off.
listen = {{q .Metrics.Listen}}

[tee]
# none | simulation (devnets only: evidence signed by a local key, refused by
# every production policy) | sgx (inside an ego enclave, docs/RUNNER.md).
backend = {{q .TEE.Backend}}

[jobs]
# Do not commit a result this many blocks or fewer before the commit deadline.
commit_margin_blocks = {{.Jobs.CommitMarginBlocks}}
# Finished job records are pruned this many blocks after they end.
keep_blocks = {{.Jobs.KeepBlocks}}
# The toolchain digest this runner executes under (0x + 64 hex digits); jobs
# pinning another digest are refused. Empty: only unpinned jobs run.
toolchain_digest = {{q .Jobs.ToolchainDigest}}

[executors.http]
# Runner allowlist: exact hosts, *.wildcards and curated sets
# (set:price_feeds, set:government_us, set:social_apis, set:blockchain_rpc).
# Empty = any public domain a job's entitlement allows.
allowed_domains = {{list .HTTPAllowed}}
# Loopback and private targets are refused unless this is true (tests, demos).
allow_private = {{.HTTPPrivate}}
# Cap on each response body in bytes (a job's max_memory_bytes lowers it).
max_response_bytes = 4194304
{{.Extra}}
# LLM executor: one table per model behind an OpenAI-compatible API
# (OpenAI, vLLM, llama.cpp server, Ollama /v1). Add "llm" to job_types.
# [[executors.llm.models]]
# name = "llama3"
# base_url = "http://127.0.0.1:8000/v1"
# api_key_env = "OPENAI_API_KEY"   # names the variable holding the key
# embeddings_model = ""            # set to serve semantic-similarity jobs
#
# MCP executor: servers jobs may call, over stdio (command) or streamable
# HTTP (url). Add "mcp" to job_types.
# [[executors.mcp.servers]]
# name = "everything"
# command = "npx"
# args = ["-y", "@modelcontextprotocol/server-everything", "stdio"]
# tools = []                       # empty = every tool the server lists
# health_timeout_ms = 2000         # ping after a cut call; no answer = restart
#
# [[executors.mcp.servers]]
# name = "remote"
# url = "https://mcp.example.com/mcp"
# [executors.mcp.servers.oauth]    # MCP authorization, client credentials
# client_id = "my-runner"
# client_secret = "env:MCP_REMOTE_SECRET"
`

// WriteConfig writes the commented configuration file into home, refusing
// to overwrite one. extra is appended TOML (further executor tables).
func WriteConfig(home string, c Config, extra string) error {
	q := func(s string) string { return strconv.Quote(s) }
	list := func(l []string) string {
		parts := make([]string, len(l))
		for i, s := range l {
			parts[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	t := template.Must(template.New("config").Funcs(template.FuncMap{"q": q, "list": list}).Parse(configTemplate))
	var b bytes.Buffer
	data := struct {
		Config
		HTTPAllowed []string
		HTTPPrivate bool
		Extra       string
	}{Config: c, Extra: extra}
	if h := c.Executors.HTTP; h != nil {
		data.HTTPAllowed, data.HTTPPrivate = h.AllowedDomains, h.AllowPrivate
	}
	if err := t.Execute(&b, data); err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	path := filepath.Join(home, ConfigFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Password returns the keystore password: account.password_file, else
// COWBOY_RUNNER_PASSWORD, else COWBOY_PASSWORD (either may be empty). A
// daemon never prompts.
func (c *Config) Password(home string) (string, error) {
	if c.Account.PasswordFile != "" {
		b, err := os.ReadFile(Path(home, c.Account.PasswordFile))
		if err != nil {
			return "", fmt.Errorf("password file: %w", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	for _, k := range []string{"COWBOY_RUNNER_PASSWORD", "COWBOY_PASSWORD"} {
		if p, ok := os.LookupEnv(k); ok {
			return p, nil
		}
	}
	return "", errors.New("no keystore password: set account.password_file, COWBOY_RUNNER_PASSWORD or COWBOY_PASSWORD (may be empty)")
}
