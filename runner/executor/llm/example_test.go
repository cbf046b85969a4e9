package llm_test

import (
	"context"
	"fmt"
	"math/big"
	"net/http/httptest"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/runner/executor"
	"github.com/cowboy-foundation/cowboy/runner/executor/llm"
	"github.com/cowboy-foundation/cowboy/runner/executor/llm/standin"
)

// An LLM job with a JSON Schema, run against the local stand-in: the model's
// pretty-printed JSON becomes canonical bytes every committee member agrees on.
func Example() {
	hs := httptest.NewServer(standin.New(standin.Options{}))
	defer hs.Close()
	ex, err := llm.New(llm.Config{Models: []llm.ModelConfig{{
		Name: "local", BaseURL: hs.URL + "/v1", UpstreamModel: standin.DefaultModel,
	}}})
	if err != nil {
		panic(err)
	}
	defer ex.Close()
	spec := &job.JobSpec{
		JobType:      job.JobTypeLLM,
		Bounds:       job.ResourceBounds{MaxTokens: 200, MaxWallTimeMs: 5000, MaxMemoryBytes: 1 << 20},
		Verification: job.VerificationConfig{Mode: job.ModeMajorityVote, Runners: 3, VoteField: "/sentiment"},
		MaxPrice:     big.NewInt(1), Tip: big.NewInt(0), TimeoutBlocks: 10,
		ResultSchema: job.ResultSchema{
			MaxReturnBytes: 1024, ExpectedExecutionMs: 1000, DataFormat: job.FormatJSON,
			JSONSchema: []byte(`{"type":"object","properties":{"sentiment":{"enum":["positive","negative","neutral"]}},"required":["sentiment"]}`),
		},
		Input: []byte(`{"model":"local","system":"Answer with JSON only.","prompt":"Sentiment of: I love how fast this chain settles"}`),
	}
	res, err := executor.NewRegistry(ex).Execute(context.Background(), executor.Request{Spec: spec})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n%d tokens\n", res.Output, res.Usage.Tokens)
	// Output:
	// {"sentiment":"positive"}
	// 28 tokens
}
