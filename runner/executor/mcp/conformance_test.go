package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
)

// envConformanceClient makes the test binary act as the MCP client the
// conformance suite drives (conformanceClient) instead of running tests.
const envConformanceClient = "COWBOY_MCP_CONFORMANCE_CLIENT"

// conformanceClient is the client under test for one conformance scenario:
// the runner's MCP executor, configured with the suite's server (the last
// argument) as an operator-configured streamable HTTP server, running the
// job the scenario expects. The suite judges the protocol traffic; the exit
// status reports whether the executor itself got through.
func conformanceClient() int {
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sc := ServerConfig{Name: "suite", URL: url, ConnectTimeoutMs: 10_000}
	if strings.HasPrefix(scenario, "auth/client-credentials") {
		// The suite hands the pre-registered client in the context.
		var cc struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &cc); err != nil {
			fmt.Fprintln(os.Stderr, "MCP_CONFORMANCE_CONTEXT:", err)
			return 1
		}
		sc.OAuth = &OAuthConfig{ClientID: cc.ClientID, ClientSecret: cc.ClientSecret}
	}
	ex, err := New(ctx, Config{Servers: []ServerConfig{sc}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "connect:", err)
		return 1
	}
	defer ex.Close()
	call := map[string]string{
		"tools_call":                          `{"server":"suite","tool":"add_numbers","arguments":{"a":5,"b":3}}`,
		"elicitation-sep1034-client-defaults": `{"server":"suite","tool":"test_client_elicitation_defaults"}`,
		"sse-retry":                           `{"server":"suite","tool":"test_reconnection"}`,
	}[scenario]
	if call == "" {
		return 0 // initialize: New connected and listed the tools
	}
	spec := &job.JobSpec{JobType: job.JobTypeMCP, Bounds: job.ResourceBounds{MaxWallTimeMs: 10_000, MaxMemoryBytes: 1 << 20},
		ResultSchema: job.ResultSchema{MaxReturnBytes: 4096, DataFormat: job.FormatText}, Input: []byte(call)}
	start := time.Now()
	res, err := executor.NewRegistry(ex).Execute(ctx, executor.Request{JobID: types.Hash{1}, Spec: spec})
	fmt.Printf("scenario %s: %q err=%v after %v\n", scenario, res.Output, err, time.Since(start).Round(time.Millisecond))
	if strings.HasPrefix(scenario, "elicitation") {
		// Declined at once: the job fails as the job's fault.
		if !errors.Is(err, ErrElicitation) || !errors.Is(err, executor.ErrBadInput) || time.Since(start) > 5*time.Second {
			return 1
		}
		return 0
	}
	if err != nil {
		return 1
	}
	return 0
}

// conformanceBin is the suite's command from node_modules (make deps), with
// the PATH that puts its Node 22 first; it skips the test if absent.
func conformanceBin(t *testing.T) (bin string, env []string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Skip("MCP conformance suite: no module root above the working directory")
		}
		dir = filepath.Dir(dir)
	}
	binDir := filepath.Join(dir, "node_modules", ".bin")
	bin = filepath.Join(binDir, "conformance")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("MCP conformance suite not installed (%s): run `make deps` (npm installs @modelcontextprotocol/conformance and Node 22 from package.json)", bin)
	}
	if _, err := os.Stat(filepath.Join(binDir, "node")); err != nil {
		t.Skipf("Node 22 for the MCP conformance suite not installed (%s/node): run `make deps`", binDir)
	}
	return bin, append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), envConformanceClient+"=1")
}

// check is one entry of the suite's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// runScenario runs one client scenario against conformanceClient and
// returns its checks.
func runScenario(t *testing.T, bin string, env []string, scenario string) []check {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "client", "--command", os.Args[0], "--scenario", scenario, "--timeout", "25000", "-o", out)
	cmd.Env = env
	text, err := cmd.CombinedOutput()
	t.Logf("conformance %s (exit %v):\n%s", scenario, err, text)
	if strings.Contains(string(text), "CLIENT EXITED WITH ERROR") {
		t.Errorf("scenario %s: the runner's client failed its job (see its stdout above)", scenario)
	}
	var files []string // <out>/<scenario>-<time>/checks.json; auth/ scenarios nest one deeper
	_ = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "checks.json" {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 1 {
		t.Fatalf("scenario %s: want one checks.json under %s, got %v", scenario, out, files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []check
	if err := json.Unmarshal(raw, &checks); err != nil {
		t.Fatalf("checks.json: %v", err)
	}
	if stdout, err := os.ReadFile(filepath.Join(filepath.Dir(files[0]), "stdout.txt")); err == nil {
		t.Logf("client stdout: %s", stdout)
	}
	if stderr, err := os.ReadFile(filepath.Join(filepath.Dir(files[0]), "stderr.txt")); err == nil && len(stderr) > 0 {
		t.Logf("client stderr: %s", stderr)
	}
	return checks
}

// TestConformance runs the official MCP conformance suite's client
// scenarios (@modelcontextprotocol/conformance, Node 22; both installed by
// make deps) against the runner's MCP executor. Every check must pass, but
// for the elicitation scenario: a runner has no user, so it declines
// elicitation requests at once (the suite then records that the client did
// not accept), and the job fails as the job's fault instead of hanging to
// its wall time.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Node processes")
	}
	bin, env := conformanceBin(t)
	for _, sc := range []string{"initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults", "auth/client-credentials-basic"} {
		t.Run(sc, func(t *testing.T) {
			start := time.Now()
			checks := runScenario(t, bin, env, sc)
			if len(checks) == 0 {
				t.Fatal("no checks recorded")
			}
			declined := false
			for _, c := range checks {
				if c.ID == "client-elicitation-sep1034-general" && strings.Contains(c.ErrorMessage, "elicitation declined") {
					declined = true
				}
			}
			for _, c := range checks {
				if c.Status != "FAILURE" {
					continue
				}
				if declined && strings.HasPrefix(c.ID, "client-elicitation-sep1034-") {
					continue // declined by design; the field checks were never reached
				}
				t.Errorf("check %s failed: %s", c.ID, c.ErrorMessage)
			}
			if sc == "elicitation-sep1034-client-defaults" && !declined {
				t.Error("the suite's server did not see the runner decline its elicitation request")
			}
			if sc == "elicitation-sep1034-client-defaults" && time.Since(start) > 15*time.Second {
				t.Errorf("the elicitation scenario took %v: the request was not answered at once", time.Since(start))
			}
		})
	}
}
