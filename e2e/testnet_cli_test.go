package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runCowboy runs the built cowboy binary and returns stdout, stderr and
// the exit code.
func runCowboy(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(filepath.Join(binDir, "cowboy"), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var xe *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &xe):
		return out.String(), errOut.String(), xe.ExitCode()
	}
	t.Fatalf("cowboy %v: %v", args, err)
	return "", "", 0
}

// TestTestnetCLI drives `cowboy testnet init|up|status|down` through the
// binary: cowboy hands them to the cowboyd next to it (cowboy does not
// link the node), and the output, help and exit codes are cowboy's.
func TestTestnetCLI(t *testing.T) {
	dir := t.TempDir()
	rpc, p2p := freeBases(t, 1)
	out, errOut, code := runCowboy(t, "testnet", "init", "--dir", dir, "--validators", "1",
		"--rpc-port", strconv.Itoa(rpc), "--p2p-port", strconv.Itoa(p2p), "--block-interval", "150ms")
	if code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.HasPrefix(out, "Initialised a 1-validator testnet in "+dir+" (chain id ") ||
		!strings.Contains(out, "Start it with: cowboy testnet up --dir "+dir+" (node0 holds the faucet)") {
		t.Fatalf("init output:\n%s", out)
	}

	help, _, code := runCowboy(t, "testnet", "up", "--help")
	if code != 0 || !strings.Contains(help, "cowboy testnet up [flags]") || strings.Contains(help, "cowboyd testnet") ||
		!strings.Contains(help, "--password-file") {
		t.Fatalf("help (exit %d):\n%s", code, help)
	}

	// An error is printed once, by the cowboyd cowboy ran, and cowboy exits 1.
	out, errOut, code = runCowboy(t, "testnet", "status", "--dir", filepath.Join(dir, "missing"))
	if code != 1 || out != "" || strings.Count(errOut, "Error:") != 1 || !strings.Contains(errOut, "cowboy testnet init --dir") {
		t.Fatalf("status of a missing testnet: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	t.Cleanup(func() { runCowboy(t, "testnet", "down", "--dir", dir, "--grace", "5s") })
	out, errOut, code = runCowboy(t, "testnet", "up", "--dir", dir, "--no-pvm", "--wait", "60s")
	if code != 0 || !strings.HasPrefix(out, "node0 started (pid ") {
		t.Fatalf("up: exit %d\n%s%s", code, out, errOut)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		out, errOut, code = runCowboy(t, "testnet", "status", "--dir", dir, "--json")
		var rows []struct {
			Name    string `json:"name"`
			Running bool   `json:"running"`
			Height  uint64 `json:"height"`
		}
		if code != 0 {
			t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
		}
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || !rows[0].Running {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		if rows[0].Height > 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("node0 made no block: %s", out)
		case <-time.After(200 * time.Millisecond):
		}
	}
	out, errOut, code = runCowboy(t, "testnet", "down", "--dir", dir)
	if code != 0 || out != "node0 stopped\n" {
		t.Fatalf("down: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = runCowboy(t, "testnet", "status", "--dir", dir)
	if !strings.Contains(out, "stopped") {
		t.Fatalf("status after down:\n%s", out)
	}
}
