package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestDemoScript runs scripts/demo.sh — what `make demo` runs — against
// freshly built binaries, so the README's first command keeps working.
func TestDemoScript(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo takes about a minute")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	build := exec.Command("go", "build", "-o", filepath.Join(root, "bin")+"/", "./cmd/...")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// The demo holds its devnet up at the end (COWBOY_DEMO_HOLD) while the
	// explorer's browser checks run against what it left on chain.
	hold := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "demo.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "COWBOY_PASSWORD=", "COWBOY_DEMO_HOLD="+hold)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var node string
	var waitErr error
	waited := false
	for node == "" && !waited {
		select {
		case waitErr = <-exited:
			waited = true
		case <-time.After(200 * time.Millisecond):
			if b, err := os.ReadFile(filepath.Join(hold, "node")); err == nil {
				node = strings.TrimSpace(string(b))
			}
		}
	}
	if node != "" {
		t.Run("Explorer", func(t *testing.T) {
			checkExplorer(t, node, artifactsDir(t, root, "explorer"))
		})
		if err := os.WriteFile(filepath.Join(hold, "done"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		waitErr = <-exited
	}
	out := buf.Bytes()
	if waitErr != nil {
		t.Fatalf("demo failed: %v\n%s", waitErr, out)
	}
	for _, want := range []string{
		"Node stopped cleanly.",
		"Balance   250.5 CBY",
		"query get -> 6",
		"bob holds 12.5 CUSD",
		`UnresolvedImport { name: "engine" }`,
		"score(3) -> 30",
		"matches the original",
		"Full redundancy restored",
		"TimerFired",
		"ActorDormant: actor 0x", // state rent (scripts/demo_rent.sh)
		"Restored 0x",
		`"amount":"1500000000000000000"`, // Ethereum events (scripts/demo_ethbridge.sh)
		"1.5 wVETH",
		"LOCAL STAND-IN",
		"state       executed",
		`verified {"price":97000.5}`,
		`verified {"sentiment":`,
		`verified {"conditions":"Light rain / drizzle"`,
		"Settled     success",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("demo output:\n%s", out)
	}
}
