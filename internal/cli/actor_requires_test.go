package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
)

const clockSrc = "from cowboy_sdk import actor, runtime\n\n@actor\nclass Clock:\n    def __init__(self):\n        self.storage['t'] = None\n\n" +
	"    def arm(self, n):\n        self.storage['t'] = runtime.set_interval(n, 'tick')\n\n    def tick(self):\n        pass\n"

// TestActorDeployRequires: --require and --manifest put a deployment
// manifest on the actor, shown by deploy and `actor show`; without one the
// actor's timer call is refused, naming the entitlement.
func TestActorDeployRequires(t *testing.T) {
	h := newActorHarness(t)
	h.must("keys", "new", "alice", "--light-kdf")
	h.must("faucet", "alice", "--value", "10")
	code := writeFile(t, "clock.py", clockSrc)

	bare := h.must("actor", "deploy", "--code", code, "--salt", "bare", "--value", "1")
	if !strings.Contains(bare, "requires none (no timers, no off-chain jobs)") {
		t.Fatalf("bare deploy: %s", bare)
	}
	if _, err := h.run("", "actor", "call", deployed(t, bare), "arm", "--payload", "[3]"); err == nil || !strings.Contains(err.Error(), `missing entitlement "timers"`) {
		t.Fatalf("timer without entitlement: %v", err)
	}

	out := h.must("actor", "deploy", "--code", code, "--salt", "req", "--value", "1",
		"--require", "timers+inheritable", "--require", "http:API.example.com,*.example.org", "--require", "jobs:http")
	if !strings.Contains(out, "requires jobs:http http:*.example.org,api.example.com timers+inheritable") {
		t.Fatalf("deploy with --require: %s", out)
	}
	addr := deployed(t, out)
	h.must("actor", "call", addr, "arm", "--payload", "[3]")
	show := h.must("actor", "show", addr)
	if !strings.Contains(show, "requires   jobs:http http:*.example.org,api.example.com timers+inheritable") || !strings.Contains(show, "code hash") {
		t.Fatalf("actor show: %s", show)
	}
	var act apitypes.Actor
	if err := json.Unmarshal([]byte(h.must("actor", "show", addr, "--json")), &act); err != nil {
		t.Fatal(err)
	}
	if len(act.Requires) != 3 || act.Requires[2].Entitlement != "timers" || !act.Requires[2].Inheritable || act.Requires[0].Action != "runner_submit_job" || act.Requires[1].Action != "custom:http" {
		t.Fatalf("API requires %+v", act.Requires)
	}

	m := writeFile(t, "m.json", `{"requires": [{"entitlement": "timers"}]}`)
	if out := h.must("actor", "deploy", "--code", code, "--salt", "file", "--manifest", m); !strings.Contains(out, "requires timers\n") {
		t.Fatalf("deploy with --manifest: %s", out)
	}
	for _, bad := range [][]string{
		{"--require", "disk"},
		{"--require", "jobs:gpu"},
		{"--require", "timers", "--require", "timers+inheritable"},
		{"--require", "timers", "--manifest", m},
		{"--manifest", writeFile(t, "bad.json", `{"requires": [{"entitlement": "http"}]}`)},
	} {
		args := append([]string{"actor", "deploy", "--code", code, "--salt", "bad"}, bad...)
		if _, err := h.run("", args...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
