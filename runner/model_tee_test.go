package runner

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/system/models"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/sdk"
	"github.com/ethereum/go-ethereum/crypto"
)

// llmFake answers every LLM job with a fixed output.
type llmFake struct{ out []byte }

func (f llmFake) Type() job.JobType { return job.JobTypeLLM }
func (f llmFake) Close() error      { return nil }
func (f llmFake) Execute(context.Context, executor.Request) (executor.Result, error) {
	return executor.Result{Output: f.out, Usage: job.Usage{Tokens: 1, WallTimeMs: 1}}, nil
}

// TestModelBoundTEEEvidence (issue 19 item 5): runners declaring a
// registry model evidence a Deterministic job naming it with evidence that
// binds the model, which the Result Verifier requires: the job finalizes.
// Without the model in the evidence the submission is refused and the job
// fails.
func TestModelBoundTEEEvidence(t *testing.T) {
	n := newTestNet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pub, _ := crypto.GenerateKey()
	n.fund(t, types.PubkeyToAddress(pub.PublicKey), "1100")
	in := &types.ModelPublish{Weights: types.Hash{1}, Arch: types.Hash{2}, Tokenizer: types.Hash{3}, License: types.Hash{4}, Name: "m"}
	tx, err := n.client.Account(pub).Models().Publish(ctx, in, sdk.ModelDeposit, sdk.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := n.client.Chain().WaitForReceipt(ctx, tx.Hash()); err != nil || r.Receipt.Status != "success" {
		t.Fatalf("publish: %+v %v", r, err)
	}
	id := models.ID(in.Weights, in.Arch, in.Tokenizer, in.License)
	const out = "forty-two"
	for range 2 {
		key, _ := crypto.GenerateKey()
		_, ed, _ := ed25519.GenerateKey(rand.Reader)
		_, platform, _ := ed25519.GenerateKey(rand.Reader)
		n.fund(t, types.PubkeyToAddress(key.PublicKey), "100")
		sim, err := attest.NewSimulation(platform, attest.SimOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := &testRunner{key: key, ed: ed, dir: t.TempDir(), exec: &fixedExecutor{}, real: llmFake{out: []byte(out)}, att: sim,
			opts: func(o *Options) { o.Models = []string{id.String()} }}
		r.start(t, n)
	}
	spec := httpSpec(2)
	spec.JobType, spec.RequiredDomains, spec.Bounds.MaxTokens = job.JobTypeLLM, nil, 10
	spec.Verification = job.VerificationConfig{Mode: job.ModeDeterministic, Runners: 2}
	spec.ResultSchema.DataFormat = job.FormatText
	spec.TEERequired, spec.ModelID = true, id
	jobID := n.submit(t, spec)
	j := n.waitJob(t, jobID, 60*time.Second, finished)
	if j.Status != job.StateFinalized || len(j.Agreed) != 2 || string(j.Result) != out {
		t.Fatalf("deterministic model job: %+v", j)
	}
}
