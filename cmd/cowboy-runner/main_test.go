package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(IO{Out: &out, Err: &errb})
	root.SetArgs(args)
	err := root.Execute()
	return out.String() + errb.String(), err
}

// TestInitRunStatus: init writes a commented config and keys, refuses to
// overwrite, run registers on a devnet node and serves /healthz, status
// reports the chain record and the running daemon, and SIGTERM-style
// cancellation stops it cleanly.
func TestInitRunStatus(t *testing.T) {
	t.Setenv("COWBOY_PASSWORD", "pw")
	d := nodetest.New(t)
	srv := d.Serve(t, 40*time.Millisecond)
	home := filepath.Join(t.TempDir(), "runner")
	out, err := runCmd(t, "init", "--home", home, "--node", srv.URL, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0",
		"--domains", "api.example.com", "--light-kdf")
	if err != nil || !strings.Contains(out, "account") {
		t.Fatalf("init: %v %s", err, out)
	}
	cfg, err := os.ReadFile(filepath.Join(home, "runner.toml"))
	if err != nil || !strings.Contains(string(cfg), "# Self-bond in CBY") || !strings.Contains(string(cfg), `domains = ["api.example.com"]`) {
		t.Fatalf("config: %v\n%s", err, cfg)
	}
	if _, err := runCmd(t, "init", "--home", home); err == nil {
		t.Fatal("second init overwrote the config")
	}
	var addr types.Address
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "account" {
			addr, _ = types.ParseAddress(f[1])
		}
	}
	c := sdk.New(srv.URL)
	ctx := context.Background()
	h, err := c.Chain().Faucet(ctx, addr, sdk.MustCBY("50"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chain().WaitForReceipt(ctx, h); err != nil {
		t.Fatal(err)
	}

	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		var o bytes.Buffer
		done <- runRun(rctx, &RunOptions{IO: IO{Out: &o, Err: &o}, Home: home, Grace: time.Second})
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(home, RunFile)); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("run stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("run.json not written")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var st Status
	for i := 0; i < 100; i++ {
		out, err = runCmd(t, "status", "--home", home, "--json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status json: %v %s", err, out)
		}
		if st.Running && st.Health.Status == "ok" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !st.Running || st.Record == nil || st.Record.Status != "active" || st.Record.Stake != sdk.MustCBY("10").String() ||
		!strings.HasPrefix(st.Record.Endpoint, "http://127.0.0.1:") {
		t.Fatalf("status: %+v record %+v", st, st.Record)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop")
	}
	if _, err := os.Stat(filepath.Join(home, RunFile)); !os.IsNotExist(err) {
		t.Fatal("run.json left behind")
	}
	out, err = runCmd(t, "status", "--home", home)
	if err != nil || !strings.Contains(out, "daemon      not running") {
		t.Fatalf("status after stop: %v %s", err, out)
	}
	if out, err := runCmd(t, "deregister", "--home", home); err != nil || !strings.Contains(out, "unbonding 10 CBY, release at height") {
		t.Fatalf("deregister: %v %s", err, out)
	}
	if r, err := c.Runners().Get(ctx, addr); err != nil || r.Status != "exited" {
		t.Fatalf("record after deregister: %+v %v", r, err)
	}
}
