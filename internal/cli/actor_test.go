package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/pvm"
)

func newActorHarness(t *testing.T) *harness {
	engine, err := pvm.New(context.Background(), pvm.Config{PoolSize: 1})
	if err != nil {
		t.Fatalf("start PVM: %v", err)
	}
	t.Cleanup(func() { engine.Close() })
	d := nodetest.NewWithVM(t, engine)
	srv := d.Serve(t, 20*time.Millisecond)
	t.Setenv("COWBOY_PASSWORD", "pw")
	return &harness{t: t, url: srv.URL, home: t.TempDir()}
}

func writeFile(t *testing.T, name, body string) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func deployed(t *testing.T, out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Actor deployed: ") {
			return strings.TrimPrefix(l, "Actor deployed: ")
		}
	}
	t.Fatalf("no actor address in %q", out)
	return ""
}

func TestActorCommands(t *testing.T) {
	h := newActorHarness(t)
	h.must("keys", "new", "alice", "--light-kdf")
	h.must("faucet", "alice", "--value", "10")
	counter := writeFile(t, "counter.py", "from cowboy_sdk import actor\n\n@actor\nclass C:\n    def __init__(self):\n        self.storage['n'] = 0\n\n    def add(self, k):\n        self.storage['n'] += k\n        return self.storage['n']\n\n    def get(self):\n        return self.storage['n']\n")
	addr := deployed(t, h.must("actor", "deploy", "--code", counter, "--salt", "s"))
	if out := h.must("actor", "call", addr, "add", "--payload", "[7]"); !strings.Contains(out, "Returned 7") {
		t.Fatalf("call: %s", out)
	}
	if out := strings.TrimSpace(h.must("actor", "query", addr, "get")); out != "7" {
		t.Fatalf("query: %q", out)
	}
	if out := h.must("actor", "state", addr, "n"); !strings.Contains(out, "7") {
		t.Fatalf("state: %s", out)
	}
	if out := h.must("actor", "code", addr); !strings.Contains(out, "class C") {
		t.Fatalf("code: %s", out)
	}
	// A failing call is reported with the actor's error and a non-zero exit.
	if _, err := h.run("", "actor", "call", addr, "add", "--payload", `["x"]`); err == nil || !strings.Contains(err.Error(), "TypeError") {
		t.Fatalf("failing call: %v", err)
	}
	// Forbidden code never reaches the chain.
	bad := writeFile(t, "bad.py", "import socket\nclass Actor:\n    pass\n")
	if _, err := h.run("", "actor", "deploy", "--code", bad, "--salt", "b"); err == nil || !strings.Contains(err.Error(), "invalid_code") || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("forbidden import: %v", err)
	}
	// Libraries: publish, deploy with a pin, list, remove.
	lib := writeFile(t, "engine.py", "VERSION = 1\n")
	user := writeFile(t, "user.py", "import engine\nfrom cowboy_sdk import actor\n\n@actor\nclass U:\n    def v(self):\n        return engine.VERSION\n")
	if out := h.must("lib", "publish", "--name", "engine", "--code", lib); !strings.Contains(out, "Library published") {
		t.Fatalf("publish: %s", out)
	}
	out := h.must("actor", "deploy", "--code", user, "--salt", "u")
	if !strings.Contains(out, "Library imports resolved:") || !strings.Contains(out, "engine 0x") {
		t.Fatalf("deploy with library: %s", out)
	}
	u := deployed(t, out)
	if !strings.Contains(h.must("actor", "pins", u), "engine") || !strings.Contains(h.must("lib", "list"), "engine") {
		t.Fatal("pins or list")
	}
	h.must("lib", "remove", "--name", "engine")
	if strings.TrimSpace(h.must("actor", "query", u, "v")) != "1" {
		t.Fatal("pinned actor broke after removal")
	}
}
