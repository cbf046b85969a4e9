package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor/llm/standin"
	"github.com/cowboy-foundation/cowboy/runner/executor/mcp/mcptest"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// runnerProc is a cowboy-runner process with its home.
type runnerProc struct {
	t    testing.TB
	name string
	home string
	addr types.Address
	node *daemon
	cmd  *exec.Cmd
	done chan error
	info struct {
		Aggregator string `json:"aggregator"`
		Metrics    string `json:"metrics"`
	}
}

// initRunner creates a runner home (10 CBY stake; HTTP jobs on loopback,
// LLM and MCP jobs with the executor tables in the file `executors`) and
// funds its account from the faucet.
func initRunner(t testing.TB, node *daemon, name, executors string) *runnerProc {
	t.Helper()
	return initRunnerTypes(t, node, name, executors, "http,llm,mcp")
}

func initRunnerTypes(t testing.TB, node *daemon, name, executors, jobTypes string) *runnerProc {
	t.Helper()
	return initRunnerFlags(t, node, name, executors, "--job-types", jobTypes, "--domains", "127.0.0.1", "--allow-private")
}

// initRunnerFlags is initRunner with the capability flags given.
func initRunnerFlags(t testing.TB, node *daemon, name, executors string, flags ...string) *runnerProc {
	t.Helper()
	r := &runnerProc{t: t, name: name, home: t.TempDir(), node: node}
	args := append([]string{"init", "--home", r.home, "--node", node.url(), "--stake", "10",
		// A fixed aggregator port keeps the registered endpoint across
		// restarts (no re-registration), as an operator's config would.
		"--listen", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--metrics", "127.0.0.1:0",
		"--light-kdf", "--append", executors}, flags...)
	cmd := exec.Command(filepath.Join(binDir, "cowboy-runner"), args...)
	cmd.Env = append(os.Environ(), "COWBOY_PASSWORD=e2e")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cowboy-runner init: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`account\s+(0x[0-9a-fA-F]{40})`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no account in init output:\n%s", out)
	}
	if r.addr, err = types.ParseAddress(m[1]); err != nil {
		t.Fatal(err)
	}
	fund(t, node, r.addr, "100")
	return r
}

func fund(t testing.TB, node *daemon, a types.Address, cby string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := node.client().Chain().Faucet(ctx, a, sdk.MustCBY(cby))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.client().Chain().WaitForReceipt(ctx, h); err != nil {
		t.Fatal(err)
	}
}

// start runs the daemon and waits until it is registered and serving.
func (r *runnerProc) start() {
	r.t.Helper()
	os.Remove(filepath.Join(r.home, "run.json"))
	logf, err := os.OpenFile(filepath.Join(r.home, "runner.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	r.cmd = exec.Command(filepath.Join(binDir, "cowboy-runner"), "run", "--home", r.home, "--log-level", "debug", "--grace", "3s")
	r.cmd.Env = append(os.Environ(), "COWBOY_PASSWORD=e2e")
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	logf.Close()
	r.done = make(chan error, 1)
	cmd := r.cmd
	go func() { r.done <- cmd.Wait() }()
	r.t.Cleanup(r.kill)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(filepath.Join(r.home, "run.json")); err == nil && json.Unmarshal(b, &r.info) == nil {
			return
		}
		select {
		case err := <-r.done:
			r.done <- err
			r.t.Fatalf("runner %s exited: %v\n%s", r.name, err, r.log())
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("runner %s not ready\n%s", r.name, r.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *runnerProc) log() string {
	b, _ := os.ReadFile(filepath.Join(r.home, "runner.log"))
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

func (r *runnerProc) running() bool { return r.cmd != nil && r.cmd.ProcessState == nil }

// kill sends SIGKILL and waits for the process to go.
func (r *runnerProc) kill() {
	if !r.running() {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		r.t.Errorf("runner %s did not die", r.name)
	}
}

// stop sends SIGTERM and requires a clean exit within the grace period.
func (r *runnerProc) stop() {
	r.t.Helper()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Fatalf("runner %s exited with %v\n%s", r.name, err, r.log())
		}
	case <-time.After(15 * time.Second):
		r.t.Fatalf("runner %s ignored SIGTERM\n%s", r.name, r.log())
	}
}

// localJob is the runner's own record of a job (its aggregator API).
type localJob struct {
	State     string `json:"state"`
	Outcome   string `json:"outcome"`
	Error     string `json:"error"`
	ExecError string `json:"exec_error"`
}

func (r *runnerProc) job(id types.Hash) (*localJob, bool) {
	resp, err := http.Get("http://" + r.info.Aggregator + "/v1/jobs/" + id.String())
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	var j localJob
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&j) != nil {
		return nil, false
	}
	return &j, true
}

func (r *runnerProc) waitJob(id types.Hash, timeout time.Duration, states ...string) *localJob {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if j, ok := r.job(id); ok && slices.Contains(states, j.State) {
			return j
		}
		time.Sleep(20 * time.Millisecond)
	}
	j, _ := r.job(id)
	r.t.Fatalf("runner %s job %s: want state %v, have %+v\n%s", r.name, id, states, j, r.log())
	return nil
}

// priceServer answers price requests; a client with User-Agent "liar" gets
// a different price, /bad breaks the result schema, /hang never answers,
// /gated answers like /btc once *gate is closed.
func priceServer(t testing.TB, gate *chan struct{}) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gated" {
			select {
			case <-*gate:
			case <-r.Context().Done():
				return
			}
			r.URL.Path = "/btc"
		}
		switch r.URL.Path {
		case "/btc":
			w.Header().Set("Content-Type", "application/json")
			if r.Header.Get("User-Agent") == "liar" {
				fmt.Fprint(w, `{"price": 1.25}`)
				return
			}
			fmt.Fprint(w, `{"price": 97000.5, "currency": "USD"}`)
		case "/bad":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"price": "ninety-seven thousand"}`)
		case "/hang":
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

const priceSchema = `{"type":"object","properties":{"price":{"type":"number"}},"required":["price"]}`

func priceJob(url string, wallMs uint64) *job.JobSpec {
	in := fmt.Sprintf(`{"url": %q, "extract": [{"kind": "jsonpath", "query": "$.price", "name": "price"}]}`, url)
	return &job.JobSpec{
		JobType: job.JobTypeHTTP, Bounds: job.ResourceBounds{MaxWallTimeMs: wallMs, MaxMemoryBytes: 1 << 20},
		Verification: job.VerificationConfig{Mode: job.ModeMajorityVote, Runners: 3, VoteField: "/price"},
		MaxPrice:     sdk.MustCBY("0.1"), Tip: new(big.Int), TimeoutBlocks: 20,
		Callback:        job.CallbackInfo{Actor: types.Address{0xca, 0x11, 0xba, 0xc4}, Handler: "on_result"},
		ResultSchema:    job.ResultSchema{MaxReturnBytes: 1024, ExpectedExecutionMs: wallMs / 2, DataFormat: job.FormatJSON, JSONSchema: []byte(priceSchema)},
		RequiredDomains: []string{"127.0.0.1"},
		Input:           []byte(in),
	}
}

// submitJob submits spec from a fresh funded account and returns the job id,
// the account and the fee its submission paid.
func submitJob(t testing.TB, node *daemon, spec *job.JobSpec) (types.Hash, types.Address, *big.Int, *big.Int) {
	t.Helper()
	key, _ := crypto.GenerateKey()
	from := types.PubkeyToAddress(key.PublicKey)
	fund(t, node, from, "1")
	c := node.client()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before, err := c.Chain().Balance(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.Account(key).Jobs().Submit(ctx, spec, sdk.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil || r.Receipt.Status != "success" {
		t.Fatalf("submit job: %+v %v", r, err)
	}
	id, err := jobIDFromReturn(r.Receipt.Return)
	if err != nil {
		t.Fatal(err)
	}
	fee, err := sdk.ParseAmount(r.Receipt.FeePaid)
	if err != nil {
		t.Fatal(err)
	}
	return id, from, before, fee
}

// jobIDFromReturn reads submit_job's return value: the 32-byte id, bare or
// as a CBOR byte string.
func jobIDFromReturn(b []byte) (types.Hash, error) {
	if len(b) == 34 && b[0] == 0x58 && b[1] == 32 {
		b = b[2:]
	}
	return types.BytesToHash(b)
}

func waitChainJob(t testing.TB, node *daemon, id types.Hash, timeout time.Duration, ok func(*apitypes.Job) bool) *apitypes.Job {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last *apitypes.Job
	for time.Now().Before(deadline) {
		if j, err := node.client().Jobs().Get(context.Background(), id); err == nil {
			last = j
			if ok(j) {
				return j
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("job %s: condition not reached; last %+v", id, last)
	return nil
}

func settled(j *apitypes.Job) bool {
	return j.Status == job.StateFinalized || j.Status == job.StateFailed
}

func amount(t testing.TB, s string) *big.Int {
	t.Helper()
	v, err := sdk.ParseAmount(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func byRunner(rs []*runnerProc, a types.Address) *runnerProc {
	for _, r := range rs {
		if r.addr == a {
			return r
		}
	}
	return nil
}

// TestRunnerCommittee runs a devnet and three cowboy-runner processes with
// the real HTTP executor against a local price server, through: a verified
// and paid job with exact amounts; schema-violating output (not committed,
// refunded); a hanging endpoint (cut at the wall time); the aggregator
// SIGKILLed after committing (restarts and finishes); a silent aggregator (members
// reveal individually); a runner answering differently (outvoted, unpaid).
func TestRunnerCommittee(t *testing.T) {
	node := startNode(t, t.TempDir(), freePort(t), 200*time.Millisecond)
	gate := make(chan struct{})
	prices := priceServer(t, &gate)
	// LLM: the OpenAI-compatible stand-in in this process; MCP: the real
	// server-everything, over stdio (each runner starts one) and over
	// streamable HTTP (one shared server).
	llmSrv := httptest.NewServer(standin.New(standin.Options{}))
	t.Cleanup(llmSrv.Close)
	mcpCmd, mcpArgs, err := mcptest.StdioCommand()
	if err != nil {
		t.Fatalf("MCP server (make deps installs it): %v", err)
	}
	mcpHTTP, err := mcptest.StartHTTP(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mcpHTTP.Stop)
	args, _ := json.Marshal(mcpArgs)
	executors := filepath.Join(t.TempDir(), "executors.toml")
	if err := os.WriteFile(executors, []byte(fmt.Sprintf(`
[[executors.llm.models]]
name = %q
base_url = %q

[[executors.mcp.servers]]
name = "stdio"
command = %q
args = %s

[[executors.mcp.servers]]
name = "http"
url = %q
`, standin.DefaultModel, llmSrv.URL+"/v1", mcpCmd, args, mcpHTTP.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := []*runnerProc{initRunner(t, node, "r1", executors), initRunner(t, node, "r2", executors), initRunner(t, node, "r3", executors)}
	for _, r := range rs {
		r.start()
	}
	c := node.client()
	ctx := context.Background()

	t.Run("verified and paid", func(t *testing.T) {
		spec := priceJob(prices.URL+"/btc", 3000)
		id, from, before, fee := submitJob(t, node, spec)
		j := waitChainJob(t, node, id, 60*time.Second, settled)
		if j.Status != job.StateFinalized || string(j.Result) != `{"price":97000.5}` || len(j.Agreed) != 3 {
			t.Fatalf("job: %+v result %q", j, j.Result)
		}
		// Three runners at 0.001 CBY each: X = 0.003 CBY, burn 10%,
		// treasury 1%, the aggregator's 5% bonus out of the runners' 89%,
		// the rest split equally, the remainder to the aggregator.
		x := sdk.MustCBY("0.003")
		burn := new(big.Int).Div(new(big.Int).Mul(x, big.NewInt(1000)), big.NewInt(10000))
		treasury := new(big.Int).Div(new(big.Int).Mul(x, big.NewInt(100)), big.NewInt(10000))
		pool := new(big.Int).Sub(new(big.Int).Sub(x, burn), treasury)
		bonus := new(big.Int).Div(new(big.Int).Mul(pool, big.NewInt(500)), big.NewInt(10000))
		share := new(big.Int).Div(new(big.Int).Sub(pool, bonus), big.NewInt(3))
		rem := new(big.Int).Sub(new(big.Int).Sub(pool, bonus), new(big.Int).Mul(share, big.NewInt(3)))
		refund := new(big.Int).Sub(spec.MaxPrice, x)
		p := j.Payments
		if p.Outcome != "success" || amount(t, p.Payment).Cmp(x) != 0 || amount(t, p.Refund).Cmp(refund) != 0 {
			t.Fatalf("payments: %+v", p)
		}
		paid := map[types.Address]*big.Int{}
		for _, tr := range p.Transfers {
			v := amount(t, tr.Amount)
			switch tr.Kind {
			case "burn":
				if v.Cmp(burn) != 0 {
					t.Fatalf("burn %s, want %s", v, burn)
				}
			case "treasury":
				if v.Cmp(treasury) != 0 {
					t.Fatalf("treasury %s, want %s", v, treasury)
				}
			case "runner":
				paid[tr.To] = v
			}
		}
		for _, r := range rs {
			want := new(big.Int).Set(share)
			if r.addr == j.Aggregator {
				want.Add(want, bonus).Add(want, rem)
			}
			if paid[r.addr] == nil || paid[r.addr].Cmp(want) != 0 {
				t.Fatalf("runner %s paid %v, want %s", r.name, paid[r.addr], want)
			}
		}
		after, err := c.Chain().Balance(ctx, from)
		if err != nil {
			t.Fatal(err)
		}
		want := new(big.Int).Sub(before, fee)
		want.Sub(want, spec.MaxPrice).Add(want, refund)
		if after.Cmp(want) != 0 {
			t.Fatalf("submitter balance %s, want %s (before %s, fee %s)", after, want, before, fee)
		}
		for _, r := range rs {
			if lj := r.waitJob(id, 10*time.Second, "done"); lj.Outcome != "finalized" {
				t.Fatalf("runner %s outcome %+v", r.name, lj)
			}
		}
		resp, err := http.Get("http://" + rs[0].info.Metrics + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 1<<16)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		for _, want := range []string{`cowboy_runner_jobs_total{outcome="finalized",type="http"} 1`, "cowboy_runner_earnings_cby_total", "cowboy_runner_heartbeat_lag_blocks"} {
			if !strings.Contains(b.String(), want) {
				t.Fatalf("metrics lack %q", want)
			}
		}
	})

	t.Run("LLM and MCP jobs", func(t *testing.T) {
		llm := priceJob("", 10000)
		llm.JobType, llm.RequiredDomains, llm.Bounds.MaxTokens = job.JobTypeLLM, nil, 256
		llm.Verification.VoteField = "/sentiment"
		llm.ResultSchema.JSONSchema = []byte(`{"type":"object","properties":{"sentiment":{"type":"string","enum":["positive","negative","neutral"]}},"required":["sentiment"],"additionalProperties":false}`)
		llm.Input = []byte(fmt.Sprintf(`{"model": %q, "prompt": "Sentiment of: I love this chain", "temperature": 0, "seed": 7}`, standin.DefaultModel))
		ids := map[string]types.Hash{}
		ids["llm"], _, _, _ = submitJob(t, node, llm)
		for _, server := range []string{"stdio", "http"} {
			m := priceJob("", 10000)
			m.JobType, m.RequiredDomains, m.ResultSchema.JSONSchema = job.JobTypeMCP, nil, nil
			m.Verification.VoteField = "/temperature"
			m.Input = []byte(fmt.Sprintf(`{"server": %q, "tool": "get-structured-content", "arguments": {"location": "Chicago"}}`, server))
			ids["mcp-"+server], _, _, _ = submitJob(t, node, m)
		}
		want := map[string]string{"llm": `{"sentiment":"positive"}`,
			"mcp-stdio": `{"conditions":"Light rain / drizzle","humidity":82,"temperature":36}`}
		want["mcp-http"] = want["mcp-stdio"]
		for k, id := range ids {
			j := waitChainJob(t, node, id, 60*time.Second, settled)
			if j.Status != job.StateFinalized || len(j.Agreed) != 3 || string(j.Result) != want[k] || j.Payments.Outcome != "success" {
				t.Fatalf("%s job: %+v result %s", k, j, j.Result)
			}
		}
	})

	t.Run("schema violation and hanging endpoint", func(t *testing.T) {
		bad := priceJob(prices.URL+"/bad", 3000)
		bad.TimeoutBlocks = 10
		hang := priceJob(prices.URL+"/hang", 400)
		hang.TimeoutBlocks = 10
		start := time.Now()
		badID, from, before, fee := submitJob(t, node, bad)
		hangID, _, _, _ := submitJob(t, node, hang)
		for _, r := range rs {
			if lj := r.waitJob(badID, 20*time.Second, "failed"); lj.Outcome != "rejected_locally" || !strings.Contains(lj.Error, "result_schema") {
				t.Fatalf("runner %s on the schema-violating job: %+v", r.name, lj)
			}
			// Cut at the wall time, each runner commits a signed
			// ImpossibleJob fault report instead of a result.
			if lj := r.waitJob(hangID, 20*time.Second, "done"); !strings.Contains(lj.ExecError, "wall time") || lj.Outcome != "failed" {
				t.Fatalf("runner %s on the hanging job: %+v", r.name, lj)
			}
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Fatalf("hanging endpoint held the runners for %v", d)
		}
		j := waitChainJob(t, node, badID, 60*time.Second, settled)
		if j.Status != job.StateFailed || len(j.Commitments) != 0 || j.Payments == nil || j.Payments.Outcome != "runner_fault" {
			t.Fatalf("schema-violating job: %+v", j)
		}
		after, _ := c.Chain().Balance(ctx, from)
		if want := new(big.Int).Sub(before, fee); after.Cmp(want) != 0 {
			t.Fatalf("submitter of the rejected job: balance %s, want %s (full refund)", after, want)
		}
		// The committee agreed on the fault: the ImpossibleJob row, paid
		// by progress (none), no timeout and no reputation lost.
		hj := waitChainJob(t, node, hangID, 60*time.Second, settled)
		if hj.Status != job.StateFailed || hj.FailReason != "verification" || len(hj.Commitments) != 3 || hj.Payments.Outcome != "impossible_job" {
			t.Fatalf("hanging job: %+v payments %+v", hj, hj.Payments)
		}
	})

	t.Run("aggregator killed after commit restarts and finishes", func(t *testing.T) {
		// The aggregator is the victim: after a restart it either
		// aggregates what it committed, or — if the restart outlasts its
		// window — reveals it individually; both keep its result.
		id, _, _, _ := submitJob(t, node, priceJob(prices.URL+"/btc", 3000))
		j := waitChainJob(t, node, id, 20*time.Second, func(j *apitypes.Job) bool { return len(j.Committee) == 3 })
		victim := byRunner(rs, j.Aggregator)
		victim.waitJob(id, 20*time.Second, "committing", "committed", "revealing")
		victim.kill()
		victim.start()
		j = waitChainJob(t, node, id, 60*time.Second, settled)
		if j.Status != job.StateFinalized || len(j.Agreed) != 3 {
			t.Fatalf("job: %+v", j)
		}
		victim.waitJob(id, 10*time.Second, "done")
		if n := strings.Count(victim.log(), "msg=executed job="+id.String()); n != 1 {
			t.Fatalf("victim executed the job %d times\n%s", n, victim.log())
		}
	})

	t.Run("silent aggregator: members reveal", func(t *testing.T) {
		// The price feed holds every runner in execution until the
		// aggregator is killed, so it never commits or aggregates.
		id, _, _, _ := submitJob(t, node, priceJob(prices.URL+"/gated", 10000))
		j := waitChainJob(t, node, id, 20*time.Second, func(j *apitypes.Job) bool { return len(j.Committee) == 3 })
		agg := byRunner(rs, j.Aggregator)
		agg.waitJob(id, 20*time.Second, "executing")
		agg.kill()
		close(gate)
		j = waitChainJob(t, node, id, 60*time.Second, settled)
		if j.Status != job.StateFinalized || len(j.Agreed) != 2 || slices.Contains(j.Agreed, agg.addr) {
			t.Fatalf("job: %+v", j)
		}
		agg.start()
		agg.waitJob(id, 20*time.Second, "done")
	})

	t.Run("different answer outvoted", func(t *testing.T) {
		liar := rs[2]
		liar.stop()
		cfg := filepath.Join(liar.home, "runner.toml")
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.Replace(string(b), "max_response_bytes = 4194304\n", "max_response_bytes = 4194304\nuser_agent = \"liar\"\n", 1))
		if err := os.WriteFile(cfg, b, 0o600); err != nil {
			t.Fatal(err)
		}
		liar.start()
		// All three must be healthy and free to form a committee.
		waitRunners(t, node, rs)
		id, _, _, _ := submitJob(t, node, priceJob(prices.URL+"/btc", 3000))
		j := waitChainJob(t, node, id, 60*time.Second, settled)
		if j.Status != job.StateFinalized || !slices.Equal(j.Dissented, []types.Address{liar.addr}) || len(j.Agreed) != 2 {
			t.Fatalf("job: %+v", j)
		}
		for _, tr := range j.Payments.Transfers {
			if tr.To == liar.addr {
				t.Fatalf("the outvoted runner was paid: %+v", tr)
			}
		}
		if lj := liar.waitJob(id, 10*time.Second, "done"); lj.Outcome != "outvoted" {
			t.Fatalf("liar outcome %+v", lj)
		}
	})

	for _, r := range rs {
		if r.running() {
			r.stop()
		}
	}
}

func waitRunners(t testing.TB, node *daemon, rs []*runnerProc) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ok := true
		for _, r := range rs {
			rec, err := node.client().Runners().Get(context.Background(), r.addr)
			if err != nil || !rec.Healthy || rec.ActiveJobs != 0 || rec.Reputation < 50 {
				ok = false
			}
		}
		if ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("runners not all healthy and idle")
}

// TestRunnerSoak (make soak; COWBOY_SOAK=1, COWBOY_SOAK_DURATION, default
// 3m): three runner processes serve a steady stream of HTTP jobs while one
// of them is SIGKILLed and restarted every few seconds. Every job must
// settle, none may stay stuck, most must be verified, and no runner may
// ever find the chain holding a commitment it did not make.
func TestRunnerSoak(t *testing.T) {
	if os.Getenv("COWBOY_SOAK") == "" {
		t.Skip("set COWBOY_SOAK=1 (make soak)")
	}
	dur := 3 * time.Minute
	if v := os.Getenv("COWBOY_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		dur = d
	}
	node := startNode(t, t.TempDir(), freePort(t), 200*time.Millisecond)
	gate := make(chan struct{})
	close(gate)
	prices := priceServer(t, &gate)
	executors := filepath.Join(t.TempDir(), "executors.toml")
	if err := os.WriteFile(executors, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rs := make([]*runnerProc, 3)
	for i := range rs {
		rs[i] = initRunnerTypes(t, node, fmt.Sprintf("s%d", i), executors, "http")
		rs[i].start()
	}
	var ids []types.Hash
	end := time.Now().Add(dur)
	nextKill := time.Now().Add(3 * time.Second)
	for k := 0; time.Now().Before(end); k++ {
		id, _, _, _ := submitJob(t, node, priceJob(prices.URL+"/btc", 3000))
		ids = append(ids, id)
		if time.Now().After(nextKill) {
			r := rs[k%len(rs)]
			r.kill()
			time.Sleep(300 * time.Millisecond)
			r.start()
			nextKill = time.Now().Add(4 * time.Second)
		}
		time.Sleep(300 * time.Millisecond)
	}
	verified := 0
	for _, id := range ids {
		j := waitChainJob(t, node, id, 3*time.Minute, settled)
		if j.Status == job.StateFinalized {
			verified++
		}
	}
	t.Logf("%d jobs, %d verified and paid, %d failed", len(ids), verified, len(ids)-verified)
	if verified*10 < len(ids)*8 {
		t.Fatalf("only %d of %d jobs verified", verified, len(ids))
	}
	for _, r := range rs {
		if strings.Contains(r.log(), "different commitment") {
			t.Fatalf("runner %s saw a foreign commitment:\n%s", r.name, r.log())
		}
		r.stop()
	}
}
