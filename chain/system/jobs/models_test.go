package jobs_test

import (
	"crypto/ed25519"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/models"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// A job naming a registry model: runners may declare only usable model
// ids, the job is offered only to the runners declaring its model, and a
// job naming an unregistered or banned model is refused.
func TestModelJobs(t *testing.T) {
	reg := runners.New(runners.Params{MinRunnerStake: cby(10)})
	m := jobs.New(reg, attest.Policy{})
	mr := models.New(models.Params{})
	c := systemtest.New()
	serving, other, owner := types.Address{0x01}, types.Address{0x02}, types.Address{0x03}
	for _, a := range []types.Address{serving, other, owner} {
		if err := c.Fund(a, cby(5000)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := c.Run(mr, owner, types.ModelRegistryAddress, cby(1000), &types.ModelPublish{Weights: types.Hash{1}, Name: "m"})
	if err != nil || r.Err != nil {
		t.Fatalf("publish: %v %v", err, r.Err)
	}
	id := models.ID(types.Hash{1}, types.Hash{}, types.Hash{}, types.Hash{})
	register := func(a types.Address, model string) system.Code {
		t.Helper()
		ed := ed25519.NewKeyFromSeed(append(make([]byte, 31), a[0]))
		r, err := c.Run(reg, a, types.RunnerRegistryAddress, cby(100), &types.RunnerRegister{ResultKey: types.Bytes(ed.Public().(ed25519.PublicKey)),
			JobTypes: []uint64{uint64(job.JobTypeLLM)}, Models: []string{model}, MaxConcurrentJobs: 4, MaxJobValue: cby(20)})
		if err != nil {
			t.Fatal(err)
		}
		return r.Code()
	}
	if code := register(serving, types.Hash{7}.String()); code != system.CodeNoSuchModel {
		t.Fatalf("declaring an unregistered model id: %s", code)
	}
	if code := register(serving, id.String()); code != system.CodeOK {
		t.Fatalf("declaring the model: %s", code)
	}
	if code := register(other, "a-free-name"); code != system.CodeOK {
		t.Fatalf("declaring a free name: %s", code)
	}
	submit := func(model types.Hash, jt job.JobType) *systemtest.Result {
		t.Helper()
		spec := &job.JobSpec{JobType: jt, Bounds: job.ResourceBounds{MaxTokens: 10, MaxWallTimeMs: 1000, MaxMemoryBytes: 1 << 20},
			Verification: job.VerificationConfig{Mode: job.ModeEconomicBond, Runners: 1}, MaxPrice: cby(1), Tip: new(big.Int),
			TimeoutBlocks: 50, Callback: job.CallbackInfo{Actor: owner, Handler: "on_result"},
			ResultSchema: job.ResultSchema{MaxReturnBytes: 100, ExpectedExecutionMs: 100, DataFormat: job.FormatText}, Input: []byte("x"), ModelID: model}
		sb, err := spec.Encode()
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Run(m, owner, types.JobDispatcherAddress, nil, &types.SubmitJob{Spec: sb})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for range 3 { // whatever the seed, only the declaring runner is a candidate
		r := submit(id, job.JobTypeLLM)
		if r.Err != nil {
			t.Fatalf("submit: %v", r.Err)
		}
		for _, ev := range r.Events {
			switch ev.Topic {
			case jobs.TopicJobSubmitted:
				var e jobs.JobSubmittedEvent
				if err := codec.Unmarshal(ev.Data, &e); err != nil || e.Candidates != 1 {
					t.Fatalf("candidates %d (%v), want the 1 declaring runner", e.Candidates, err)
				}
			case jobs.TopicJobAssigned:
				var e jobs.JobAssignedEvent
				if err := codec.Unmarshal(ev.Data, &e); err != nil || len(e.Runners) != 1 || e.Runners[0] != serving {
					t.Fatalf("assigned %+v (%v)", e.Runners, err)
				}
			}
		}
		c.Env.Height++
	}
	if r := submit(types.Hash{7}, job.JobTypeLLM); r.Code() != system.CodeNoSuchModel {
		t.Fatalf("unregistered model: %v", r.Err)
	}
	if r := submit(id, job.JobTypeHTTP); r.Code() != system.CodeInvalidJobSpec {
		t.Fatalf("model on an http job: %v", r.Err)
	}
	if err := mr.Ban(systemtest.Ctx(c), id, "test"); err != nil {
		t.Fatal(err)
	}
	if r := submit(id, job.JobTypeLLM); r.Code() != system.CodeModelBanned {
		t.Fatalf("banned model: %v", r.Err)
	}
	if code := register(other, id.String()); code != system.CodeModelBanned {
		t.Fatalf("declaring a banned model: %s", code)
	}
}
