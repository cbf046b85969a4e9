package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor/llm/standin"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// TestModelRegistryJob (issue 19 item 5, "a model registered and used by
// an LLM job"): a model is published with the CLI and its deposit, one
// runner serves it under its registry id and another serves only a free
// model name; an LLM job naming the model is assigned to the declaring
// runner, run against the OpenAI-compatible stand-in, verified and paid,
// and a job naming an unregistered model is refused with NoSuchModel.
// Then governance bans the model (a Tier 1 proposal from the CLI, voted by
// the dev validator and executed at its ETA), and a job naming it is
// refused with ModelBanned.
func TestModelRegistryJob(t *testing.T) {
	node := startNode(t, t.TempDir(), freePort(t), 200*time.Millisecond)
	home := t.TempDir()
	cli(t, node, home, "keys", "new", "pub", "--light-kdf")
	cli(t, node, home, "faucet", "pub", "--value", "1100")
	h := func(b byte) string { return types.Hash{b}.String() }
	out := cli(t, node, home, "model", "publish", "--from", "pub", "--name", "standin-7b",
		"--weights", h(1), "--arch", h(2), "--tokenizer", h(3), "--license", h(4))
	m := regexp.MustCompile(`Model id (0x[0-9a-f]{64})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("publish output:\n%s", out)
	}
	id, _ := types.ParseHash(m[1])
	var listed []apitypes.Model
	if err := json.Unmarshal([]byte(cli(t, node, home, "model", "list", "--json")), &listed); err != nil || len(listed) != 1 ||
		listed[0].ID != id || listed[0].Deposit != sdk.MustCBY("1000").String() || listed[0].Status != "active" {
		t.Fatalf("model list %+v: %v", listed, err)
	}
	if show := cli(t, node, home, "model", "show", id.String()); !strings.Contains(show, "standin-7b") {
		t.Fatalf("model show:\n%s", show)
	}

	llmSrv := httptest.NewServer(standin.New(standin.Options{}))
	t.Cleanup(llmSrv.Close)
	// The registry model is configured under its id (what the runner
	// declares and jobs name); the upstream server knows it by its own name.
	writeExecutors := func(name string) string {
		p := filepath.Join(t.TempDir(), "executors.toml")
		if err := os.WriteFile(p, []byte(fmt.Sprintf("[[executors.llm.models]]\nname = %q\nbase_url = %q\nupstream_model = %q\n",
			name, llmSrv.URL+"/v1", standin.DefaultModel)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	serving := initRunnerTypes(t, node, "serving", writeExecutors(id.String()), "llm")
	other := initRunnerTypes(t, node, "other", writeExecutors(standin.DefaultModel), "llm")
	serving.start()
	other.start()
	waitRunners(t, node, []*runnerProc{serving, other})

	spec := priceJob("", 10000)
	spec.JobType, spec.RequiredDomains, spec.Bounds.MaxTokens = job.JobTypeLLM, nil, 256
	spec.Verification = job.VerificationConfig{Mode: job.ModeNone, Runners: 1}
	spec.ResultSchema.JSONSchema = []byte(`{"type":"object","properties":{"sentiment":{"type":"string"}},"required":["sentiment"]}`)
	spec.Input = []byte(fmt.Sprintf(`{"model": %q, "prompt": "Sentiment of: I love this chain", "temperature": 0, "seed": 7}`, id))
	spec.ModelID = id
	jobID, _, _, _ := submitJob(t, node, spec)
	j := waitChainJob(t, node, jobID, 60*time.Second, settled)
	if j.Status != job.StateFinalized || string(j.Result) != `{"sentiment":"positive"}` || j.Payments == nil || j.Payments.Outcome != "success" {
		t.Fatalf("model job: %+v result %s", j, j.Result)
	}
	if len(j.Committee) != 1 || j.Committee[0] != serving.addr {
		t.Fatalf("committee %v, want only the runner declaring the model (%s)", j.Committee, serving.addr)
	}
	paid := false
	for _, tr := range j.Payments.Transfers {
		paid = paid || (tr.Kind == "runner" && tr.To == serving.addr && amount(t, tr.Amount).Sign() > 0)
	}
	if !paid {
		t.Fatalf("the serving runner was not paid: %+v", j.Payments)
	}

	// A job naming a model that is not registered is refused on chain.
	spec.ModelID = types.Hash{0xee}
	key, _ := crypto.GenerateKey()
	fund(t, node, types.PubkeyToAddress(key.PublicKey), "1")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tx, err := node.client().Account(key).Jobs().Submit(ctx, spec, sdk.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := node.client().Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil || r.Receipt.Status == "success" || system.Code(r.Receipt.Code) != system.CodeNoSuchModel {
		t.Fatalf("job naming an unregistered model: %+v %v", r, err)
	}

	// Governance bans the model; a job naming it is refused.
	cli(t, node, home, "keys", "import", "val", "--key-file", filepath.Join(node.home, "validator.key"), "--light-kdf")
	out = cli(t, node, home, "gov", "propose", "--ban-model", id.String(), "--reason", "unsafe outputs", "--title", "ban standin-7b", "--from", "val")
	pm := proposalID.FindStringSubmatch(out)
	if pm == nil {
		t.Fatalf("propose: %s", out)
	}
	cli(t, node, home, "gov", "vote", pm[1], "yes", "--from", "val")
	p := waitProposal(ctx, t, node, home, pm[1], "executed")
	if p.Tier != 1 || len(p.Models) != 1 || p.Models[0] != (apitypes.GovModel{ID: id, Action: "ban", Reason: "unsafe outputs"}) {
		t.Fatalf("ban proposal %+v", p)
	}
	if show := cli(t, node, home, "gov", "show", pm[1]); !strings.Contains(show, "ban         model "+id.String()+" (unsafe outputs)") {
		t.Fatalf("gov show:\n%s", show)
	}
	if show := cli(t, node, home, "model", "show", id.String()); !strings.Contains(show, "banned: unsafe outputs") {
		t.Fatalf("model show after the ban:\n%s", show)
	}
	spec.ModelID = id
	tx, err = node.client().Account(key).Jobs().Submit(ctx, spec, sdk.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err = node.client().Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil || r.Receipt.Status == "success" || system.Code(r.Receipt.Code) != system.CodeModelBanned {
		t.Fatalf("job naming a banned model: %+v %v", r, err)
	}
}
