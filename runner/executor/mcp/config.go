package mcp

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// Config configures the MCP executor. The runner daemon reads it from the
// [executors.mcp] table of its TOML config file.
type Config struct {
	// Servers are the MCP servers jobs may call, by name.
	Servers []ServerConfig `toml:"servers" json:"servers"`
	// HTTPClient carries streamable-HTTP sessions; nil uses a client on a
	// clone of http.DefaultTransport.
	HTTPClient *http.Client `toml:"-" json:"-"`
	// Logger receives connection events and one line per job; nil discards.
	Logger *slog.Logger `toml:"-" json:"-"`
}

// ServerConfig is one MCP server: a local program spoken to over stdio
// (Command) or a streamable HTTP endpoint (URL), exactly one of the two.
type ServerConfig struct {
	// Name is what jobs call the server ("server" in the job input).
	Name string `toml:"name" json:"name"`

	// Command and Args start a stdio server, e.g. command = "node",
	// args = ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"].
	Command string   `toml:"command" json:"command,omitempty"`
	Args    []string `toml:"args" json:"args,omitempty"`
	// Dir is the working directory of the command (default: the runner's).
	Dir string `toml:"dir" json:"dir,omitempty"`
	// Env adds variables to the command's environment. The command gets
	// only PATH, HOME, LANG, TZ and TMPDIR from the runner unless
	// InheritEnv is set, so runner secrets do not leak into tools.
	Env        map[string]string `toml:"env" json:"env,omitempty"`
	InheritEnv bool              `toml:"inherit_env" json:"inherit_env,omitempty"`

	// URL is a streamable HTTP endpoint, e.g. "http://127.0.0.1:3001/mcp".
	URL string `toml:"url" json:"url,omitempty"`
	// Headers are sent with every HTTP request (e.g. Authorization).
	// A value "env:NAME" is read from the environment variable NAME.
	Headers map[string]string `toml:"headers" json:"headers,omitempty"`
	// OAuth, for a url server, authorizes requests by the MCP
	// authorization spec with the OAuth 2.0 client credentials grant.
	OAuth *OAuthConfig `toml:"oauth" json:"oauth,omitempty"`

	// Tools, when non-empty, is the only tools jobs may call on this server.
	Tools []string `toml:"tools" json:"tools,omitempty"`
	// Domains are the external domains this server's tools may reach
	// (names, "*.suffix" wildcards or curated "set:" names, as in
	// entitlements). A job whose required_domains this list does not cover
	// is refused.
	Domains []string `toml:"domains" json:"domains,omitempty"`
	// ConnectTimeoutMs bounds starting and initialising the server when it
	// is not tied to a job (New); default 20000.
	ConnectTimeoutMs uint64 `toml:"connect_timeout_ms" json:"connect_timeout_ms,omitempty"`
	// HealthTimeoutMs bounds the ping that checks a session after a call
	// was cut (wall time or cancellation); a server that does not answer
	// in time is restarted (stdio) or reconnected (HTTP). Default 2000.
	HealthTimeoutMs uint64 `toml:"health_timeout_ms" json:"health_timeout_ms,omitempty"`
}

// OAuthConfig is a pre-registered confidential client of the server's
// authorization server. The token endpoint and scopes are discovered from
// the server's 401 challenge (Protected Resource Metadata, RFC 9728, then
// Authorization Server Metadata, RFC 8414); tokens are requested with the
// client credentials grant (SEP-1046) through the official go-sdk
// (auth/extauth), refreshed when they expire, and re-requested with the
// union of scopes when the server answers 403 insufficient_scope (step-up).
// There is no user, so the authorization code flow is not offered.
type OAuthConfig struct {
	ClientID string `toml:"client_id" json:"client_id"`
	// ClientSecret: "env:NAME" reads the environment variable NAME (keep
	// secrets out of the file).
	ClientSecret string `toml:"client_secret" json:"client_secret"`
	// Issuer, when set, binds the credentials to that authorization
	// server: a server pointing elsewhere is refused.
	Issuer string `toml:"issuer" json:"issuer,omitempty"`
}

func (o *OAuthConfig) secret() string {
	if name, ok := strings.CutPrefix(o.ClientSecret, "env:"); ok {
		return os.Getenv(name)
	}
	return o.ClientSecret
}

func (s *ServerConfig) healthTimeout() time.Duration {
	if s.HealthTimeoutMs == 0 {
		return 2 * time.Second
	}
	return time.Duration(s.HealthTimeoutMs) * time.Millisecond
}

func (s *ServerConfig) connectTimeout() time.Duration {
	if s.ConnectTimeoutMs == 0 {
		return 20 * time.Second
	}
	return time.Duration(s.ConnectTimeoutMs) * time.Millisecond
}

func (c *Config) validate() error {
	if len(c.Servers) == 0 {
		return fmt.Errorf("mcp: config lists no servers")
	}
	seen := map[string]bool{}
	for i := range c.Servers {
		s := &c.Servers[i]
		if s.Name == "" || strings.TrimSpace(s.Name) != s.Name {
			return fmt.Errorf("mcp: servers[%d]: name must be non-empty without surrounding spaces", i)
		}
		if seen[s.Name] {
			return fmt.Errorf("mcp: server %q configured twice", s.Name)
		}
		seen[s.Name] = true
		if (s.Command == "") == (s.URL == "") {
			return fmt.Errorf("mcp: server %q: set exactly one of command (stdio) and url (streamable HTTP)", s.Name)
		}
		if s.URL != "" {
			u, err := url.Parse(s.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("mcp: server %q: url %q is not an http(s) URL", s.Name, s.URL)
			}
			if len(s.Args) > 0 || len(s.Env) > 0 || s.Dir != "" || s.InheritEnv {
				return fmt.Errorf("mcp: server %q: args, env, dir and inherit_env apply only to command servers", s.Name)
			}
		} else if len(s.Headers) > 0 || s.OAuth != nil {
			return fmt.Errorf("mcp: server %q: headers and oauth apply only to url servers", s.Name)
		}
		if o := s.OAuth; o != nil {
			if o.ClientID == "" || o.ClientSecret == "" {
				return fmt.Errorf("mcp: server %q: oauth needs client_id and client_secret", s.Name)
			}
			if name, ok := strings.CutPrefix(o.ClientSecret, "env:"); ok && os.Getenv(name) == "" {
				return fmt.Errorf("mcp: server %q: oauth client_secret: environment variable %s is not set", s.Name, name)
			}
		}
		for k, v := range s.Headers {
			if name, ok := strings.CutPrefix(v, "env:"); ok {
				if os.Getenv(name) == "" {
					return fmt.Errorf("mcp: server %q: header %s: environment variable %s is not set", s.Name, k, name)
				}
			}
		}
	}
	return nil
}

// commandEnv is the environment of a stdio server.
func (s *ServerConfig) commandEnv() []string {
	var env []string
	if s.InheritEnv {
		env = os.Environ()
	} else {
		for _, k := range []string{"PATH", "HOME", "LANG", "TZ", "TMPDIR"} {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+s.Env[k])
	}
	return env
}

// textCheckTransport checks every 2xx response body (JSON or server-sent
// events of JSON) for bytes the SDK's JSON decoding would turn into U+FFFD
// (executor.TextChecker), counting each bad body in bad and ending it with
// the checker's error.
type textCheckTransport struct {
	next http.RoundTripper
	bad  *atomic.Int64
}

func (t *textCheckTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 || resp.Body == nil {
		return resp, err
	}
	resp.Body = &checkedBody{rc: resp.Body, bad: t.bad}
	return resp, nil
}

type checkedBody struct {
	rc     io.ReadCloser
	bad    *atomic.Int64
	check  executor.TextChecker
	failed bool
}

func (b *checkedBody) Read(p []byte) (int, error) {
	if b.failed {
		return 0, executor.ErrNotUTF8
	}
	n, err := b.rc.Read(p)
	_, cerr := b.check.Write(p[:n])
	if cerr == nil && errors.Is(err, io.EOF) {
		cerr = b.check.Close()
	}
	if cerr != nil {
		b.failed = true
		b.bad.Add(1)
		return 0, cerr
	}
	return n, err
}

func (b *checkedBody) Close() error { return b.rc.Close() }

// headerTransport adds configured headers to every request.
type headerTransport struct {
	next    http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range t.headers {
		r.Header[k] = vs
	}
	return t.next.RoundTrip(r)
}

func (s *ServerConfig) header() http.Header {
	h := http.Header{}
	for k, v := range s.Headers {
		if name, ok := strings.CutPrefix(v, "env:"); ok {
			v = os.Getenv(name)
		}
		h.Set(k, v)
	}
	return h
}
