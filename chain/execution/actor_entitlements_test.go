package execution_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/timers/timerlane"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// testRequires is the deployment manifest of the test fixtures that use
// timers and off-chain jobs (deployValue): timers and every job type, no
// domains (the fixtures' jobs declare none).
var testRequires = mustManifest("jobs:custom,http,llm,mcp", "timers")

func mustManifest(reqs ...string) types.Bytes {
	var m entitlement.Manifest
	for _, r := range reqs {
		e, err := entitlement.ParseRequirement(r)
		if err != nil {
			panic(err)
		}
		m = append(m, e)
	}
	m, err := m.Normalize()
	if err != nil {
		panic(err)
	}
	b, err := m.Encode()
	if err != nil {
		panic(err)
	}
	return b
}

const gateActor = `from cowboy_sdk import actor, runtime, HostError

@actor
class Gate:
    def __init__(self):
        self.storage["err"] = None

    def timer(self, height):
        self.storage["err"] = None
        try:
            return runtime.set_timer(height, "noop")
        except HostError as e:
            self.storage["err"] = str(e)
            return None

    def interval(self, n):
        return runtime.set_interval(n, "noop")

    def job(self, job_type, domains):
        spec = {"job_type": job_type, "input": "https://api.example.com/price", "max_price": 10**18,
                "timeout_blocks": 5, "handler": "noop", "runners": 3, "mode": 3, "vote_field": "/price",
                "max_wall_time_ms": 5000, "max_memory_bytes": 1048576, "expected_execution_ms": 1000,
                "max_return_bytes": 1024, "data_format": 3, "required_domains": domains}
        self.storage["err"] = None
        if job_type == 1:
            spec["max_tokens"] = 100
            spec["input"] = "hello"
        try:
            return runtime.submit_job(spec)
        except HostError as e:
            self.storage["err"] = str(e)
            return None

    def noop(self, *args):
        pass

    def get(self, k):
        return self.storage.get(k)
`

func TestActorEntitlementGate(t *testing.T) {
	alice, _ := genKey()
	c, _ := newJobChain(t, 4, alice)
	deploy := func(salt string, req types.Bytes) types.Address {
		t.Helper()
		rs := c.ok(c.txValue(alice, nil, &types.Deploy{Code: types.Bytes(gateActor), Salt: types.Bytes(salt), Requires: req}, genesis.CBY(20)))
		return *rs[0].Created
	}
	call := func(a types.Address, handler string, args ...any) *types.Receipt {
		t.Helper()
		return c.block(c.tx(alice, &a, &types.Call{Handler: handler, Args: cborArgs(args)}, 0))[0]
	}
	lastErr := func(a types.Address) string {
		t.Helper()
		s, _ := c.query(a, "get", []any{"err"}).(string)
		return s
	}
	escrow := func() string { return balanceOf(t, c, types.TimerEscrowAddress).String() }

	// No manifest: least privilege, no timers and no jobs.
	bare := deploy("bare", nil)
	if m := readRequires(t, c, bare); m != nil {
		t.Fatalf("bare actor has manifest %v", m)
	}
	before, dispatcher := escrow(), balanceOf(t, c, types.JobDispatcherAddress).String()
	h := c.head().Height
	r := call(bare, "timer", h+5)
	if r.Status != types.ReceiptSuccess || len(timerEvents([]*types.Receipt{r}, timerlane.TopicTimerScheduled)) != 0 {
		t.Fatalf("caught refusal: %+v", r)
	}
	if e := lastErr(bare); !strings.Contains(e, `set_timer: missing entitlement "timers"`) {
		t.Fatalf("timer refusal %q", e)
	}
	r = call(bare, "interval", 3) // uncaught: the call fails, naming the entitlement
	if r.Status == types.ReceiptSuccess || !strings.Contains(r.Error, `set_interval: missing entitlement "timers"`) {
		t.Fatalf("uncaught refusal: %d %s", r.Status, r.Error)
	}
	call(bare, "job", 2, []any{"api.example.com"})
	if e := lastErr(bare); !strings.Contains(e, `submit_job: missing entitlement "jobs:http"`) {
		t.Fatalf("job refusal %q", e)
	}
	if escrow() != before || balanceOf(t, c, types.JobDispatcherAddress).String() != dispatcher {
		t.Fatal("a refused host call moved funds")
	}

	// Timers only.
	tm := deploy("timers", mustManifest("timers"))
	r = call(tm, "timer", c.head().Height+5)
	if len(timerEvents([]*types.Receipt{r}, timerlane.TopicTimerScheduled)) != 1 || lastErr(tm) != "" {
		t.Fatalf("declared timers refused: %+v %q", r, lastErr(tm))
	}
	call(tm, "job", 2, []any{"api.example.com"})
	if e := lastErr(tm); !strings.Contains(e, `missing entitlement "jobs:http"`) {
		t.Fatalf("job refusal %q", e)
	}

	// HTTP jobs to *.example.com; no timers.
	web := deploy("web", mustManifest("jobs:http", "http:*.example.com"))
	if m := readRequires(t, c, web); len(m) != 2 || m[0].String() != "jobs:http" || m[1].String() != "http:*.example.com" {
		t.Fatalf("stored manifest %v", m)
	}
	r = call(web, "job", 2, []any{"api.example.com"})
	if r.Status != types.ReceiptSuccess || !hasEvent(r, types.JobDispatcherAddress, "JobAssigned") || lastErr(web) != "" {
		t.Fatalf("declared job: %+v err %q", r, lastErr(web))
	}
	call(web, "job", 2, []any{"api.example.com", "evil.org"})
	if e := lastErr(web); !strings.Contains(e, `submit_job: missing entitlement "http:evil.org"`) {
		t.Fatalf("undeclared domain %q", e)
	}
	call(web, "job", 1, []any{})
	if e := lastErr(web); !strings.Contains(e, `missing entitlement "jobs:llm"`) {
		t.Fatalf("undeclared job type %q", e)
	}
	call(web, "timer", c.head().Height+5)
	if e := lastErr(web); !strings.Contains(e, `missing entitlement "timers"`) {
		t.Fatalf("undeclared timers %q", e)
	}
	// requires ⊆ provides at the scheduler: the gate admits a domain the
	// manifest covers, the dispatcher still needs a runner providing it.
	r = call(web, "job", 2, []any{"data.example.com"})
	if e := lastErr(web); strings.Contains(e, "entitlement") || hasEvent(r, types.JobDispatcherAddress, "JobAssigned") {
		t.Fatalf("job on a domain no runner provides: assigned=%v err %q", hasEvent(r, types.JobDispatcherAddress, "JobAssigned"), e)
	}
	auditSupply(t, c)
}

func readRequires(t *testing.T, c *chain, a types.Address) entitlement.Manifest {
	t.Helper()
	var m entitlement.Manifest
	if err := c.st.View(func(v *store.View) (err error) {
		m, err = actors.ReadActorRequires(v, a)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDeployManifestValidation(t *testing.T) {
	alice, _ := genKey()
	c := newChain(t, alice)
	bad := []struct {
		name string
		raw  types.Bytes
		want string
	}{
		{"not cbor", types.Bytes{0xff}, "InvalidManifest"},
		{"unsorted", append(types.Bytes{0x82}, append(append([]byte{}, mustManifest("timers")[1:]...), mustManifest("jobs:http")[1:]...)...), "canonical order"},
		{"not an actor entitlement", types.Bytes(codec.MustMarshal([]any{[]any{entitlement.Action{Kind: entitlement.ActionTokenMint}, []string{}, false}})), "not an actor entitlement"},
		{"timers with params", types.Bytes(codec.MustMarshal([]any{[]any{entitlement.TimersAction(), []string{"x"}, false}})), "timers takes no parameters"},
		{"bad domain", types.Bytes(codec.MustMarshal([]any{[]any{entitlement.HTTPAction(), []string{"Evil.COM"}, false}})), "only lower-case"},
	}
	for i, b := range bad {
		r := c.block(c.tx(alice, nil, &types.Deploy{Code: types.Bytes(gateActor), Salt: types.Bytes{byte(i)}, Requires: b.raw}, 0))[0]
		if r.Status == types.ReceiptSuccess || !strings.Contains(r.Error, b.want) || r.Created != nil {
			t.Fatalf("%s: %d %q", b.name, r.Status, r.Error)
		}
		addr := types.ActorAddress(types.PubkeyToAddress(alice.PublicKey), []byte{byte(i)}, types.CodeHash([]byte(gateActor)))
		if readRequires(t, c, addr) != nil || balanceOf(t, c, addr).Sign() != 0 {
			t.Fatalf("%s: a failed deploy left state", b.name)
		}
	}
}

// TestActorManifestDeterminism: two executors on the same genesis and
// transactions (with and without manifests) reach the same state roots.
func TestActorManifestDeterminism(t *testing.T) {
	alice, _ := crypto.HexToECDSA("8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63")
	var roots [2][]types.Hash
	for i := range roots {
		c := newChainWithGenesisKey(t, alice)
		rs := c.ok(c.txValue(alice, nil, &types.Deploy{Code: types.Bytes(gateActor), Salt: types.Bytes("a"),
			Requires: mustManifest("timers+inheritable", "jobs:http", "http:api.example.com")}, genesis.CBY(5)),
			c.tx(alice, nil, &types.Deploy{Code: types.Bytes(gateActor), Salt: types.Bytes("b")}, 0))
		a, b := *rs[0].Created, *rs[1].Created
		roots[i] = append(roots[i], c.head().StateRoot)
		c.block(c.tx(alice, &a, &types.Call{Handler: "timer", Args: cborArgs([]any{c.head().Height + 4})}, 0),
			c.tx(alice, &b, &types.Call{Handler: "timer", Args: cborArgs([]any{c.head().Height + 4})}, 0))
		roots[i] = append(roots[i], c.head().StateRoot)
	}
	for j := range roots[0] {
		if roots[0][j] != roots[1][j] {
			t.Fatalf("block %d: roots differ %s vs %s", j, roots[0][j], roots[1][j])
		}
	}
}

// TestExampleManifests: every example that uses jobs or timers ships a
// manifest that covers what it does, and fails, naming the entitlement,
// when deployed without it.
func TestExampleManifests(t *testing.T) {
	alice, _ := genKey()
	c, _ := newJobChain(t, 3, alice)
	cases := []struct {
		code, manifest, handler string
		args                    []any
		missing                 string
	}{
		{"jobs/oracle.py", "jobs/oracle.manifest.json", "request", []any{"https://api.example.com/btc", "api.example.com"}, "jobs:http"},
		// Without a domain the oracle declares the URL's host.
		{"jobs/oracle.py", "jobs/oracle.manifest.json", "request", []any{"https://API.example.com:443/btc?x=1"}, "jobs:http"},
		{"jobs/agent.py", "jobs/agent.manifest.json", "ask_http", []any{`{"url": "https://api.example.com/btc"}`, "/price", "api.example.com"}, "jobs:http"},
		{"jobs/continuation.py", "jobs/continuation.manifest.json", "watch", []any{"btc", "https://api.example.com/btc", 40}, "jobs:http"},
		{"timers/heartbeat.py", "timers/heartbeat.manifest.json", "start", nil, "timers"},
	}
	for i, tc := range cases {
		src, err := os.ReadFile("../../examples/" + tc.code)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile("../../examples/" + tc.manifest)
		if err != nil {
			t.Fatal(err)
		}
		m, err := entitlement.ParseManifestJSON(raw)
		if err != nil {
			t.Fatalf("%s: %v", tc.manifest, err)
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		for _, withManifest := range []bool{true, false} {
			d := &types.Deploy{Code: types.Bytes(src), Salt: types.Bytes(fmt.Sprint(i, withManifest))}
			if withManifest {
				d.Requires = enc
			}
			a := *c.ok(c.txValue(alice, nil, d, genesis.CBY(5)))[0].Created
			r := c.block(c.tx(alice, &a, &types.Call{Handler: tc.handler, Args: cborArgs(tc.args)}, 0))[0]
			if withManifest && r.Status != types.ReceiptSuccess {
				t.Fatalf("%s with %s: %s", tc.code, tc.manifest, r.Error)
			}
			if !withManifest && (r.Status == types.ReceiptSuccess || !strings.Contains(r.Error, fmt.Sprintf("missing entitlement %q", tc.missing))) {
				t.Fatalf("%s without a manifest: %d %q", tc.code, r.Status, r.Error)
			}
		}
	}
}
