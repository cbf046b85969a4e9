package mcp

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// The daemon reads Config from TOML; the documented example must decode.
func TestConfigTOML(t *testing.T) {
	const doc = `
[[servers]]
name = "everything"
command = "node"
args = ["dist/index.js", "stdio"]
env = { GZIP_ALLOWED_DOMAINS = "example.com" }
tools = ["echo", "get-sum"]
domains = ["*.example.com"]
connect_timeout_ms = 5000

[[servers]]
name = "remote"
url = "https://mcp.example.com/mcp"
headers = { Authorization = "Bearer x" }
`
	t.Setenv("COWBOY_TEST_RUNNER_SECRET", "hunter2")
	var c Config
	dec := toml.NewDecoder(strings.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	s := c.Servers[0]
	if s.Env["GZIP_ALLOWED_DOMAINS"] != "example.com" || len(s.Tools) != 2 || s.Domains[0] != "*.example.com" || s.ConnectTimeoutMs != 5000 {
		t.Fatalf("%+v", s)
	}
	if c.Servers[1].Headers["Authorization"] != "Bearer x" || c.Servers[1].URL == "" {
		t.Fatalf("%+v", c.Servers[1])
	}
	env := s.commandEnv()
	if env[len(env)-1] != "GZIP_ALLOWED_DOMAINS=example.com" {
		t.Fatalf("env %v", env)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "COWBOY_TEST_RUNNER_SECRET=") {
			t.Fatalf("runner environment leaked: %s", kv)
		}
	}
	s.InheritEnv = true
	if env := strings.Join(s.commandEnv(), "\n"); !strings.Contains(env, "COWBOY_TEST_RUNNER_SECRET=hunter2") {
		t.Fatal("inherit_env did not pass the environment")
	}
}
