package jobs_test

import (
	"crypto/ed25519"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func cby(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }

// The dispatcher as a module over the runner registry: a job is submitted
// with its escrow, assigned to the only eligible runner (typed JobAssigned
// event, the runner's job count), committed by it, and a commitment from
// outside the committee fails as a JobTransition.
func TestDispatcherModule(t *testing.T) {
	reg := runners.New(runners.Params{MinRunnerStake: cby(10)})
	m := jobs.New(reg, attest.Policy{})
	c := systemtest.New()
	runner, owner, stranger := types.Address{0x01}, types.Address{0x02}, types.Address{0x03}
	for _, a := range []types.Address{runner, owner, stranger} {
		if err := c.Fund(a, cby(1000)); err != nil {
			t.Fatal(err)
		}
	}
	ed := ed25519.NewKeyFromSeed(make([]byte, 32))
	r, err := c.Run(reg, runner, types.RunnerRegistryAddress, cby(100), &types.RunnerRegister{ResultKey: types.Bytes(ed.Public().(ed25519.PublicKey)),
		JobTypes: []uint64{uint64(job.JobTypeHTTP)}, Domains: []string{"api.example.com"}, RateBase: big.NewInt(1e16), MaxConcurrentJobs: 4, MaxJobValue: cby(20)})
	if err != nil || r.Err != nil {
		t.Fatalf("register: %v %v", err, r.Err)
	}
	spec := &job.JobSpec{JobType: job.JobTypeHTTP, Bounds: job.ResourceBounds{MaxWallTimeMs: 1000, MaxMemoryBytes: 1 << 20},
		Verification: job.VerificationConfig{Mode: job.ModeEconomicBond, Runners: 1}, MaxPrice: cby(1), Tip: new(big.Int),
		TimeoutBlocks: 50, Callback: job.CallbackInfo{Actor: owner, Handler: "on_result"},
		ResultSchema: job.ResultSchema{MaxReturnBytes: 100, ExpectedExecutionMs: 100, DataFormat: job.FormatText}, Input: []byte("x")}
	sb, err := spec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	jd := types.JobDispatcherAddress
	r, err = c.Run(m, owner, jd, nil, &types.SubmitJob{Spec: sb})
	if err != nil || r.Err != nil {
		t.Fatalf("submit: %v %v", err, r.Err)
	}
	var idb []byte
	if err := codec.Unmarshal(r.Return, &idb); err != nil || len(idb) != 32 {
		t.Fatalf("job id %x: %v", r.Return, err)
	}
	id := types.Hash(idb)
	var assigned *jobs.JobAssignedEvent
	for _, ev := range r.Events {
		if ev.Topic == jobs.TopicJobAssigned {
			assigned = new(jobs.JobAssignedEvent)
			if err := codec.Unmarshal(ev.Data, assigned); err != nil {
				t.Fatal(err)
			}
		}
	}
	if assigned == nil || assigned.JobID != id || len(assigned.Runners) != 1 || assigned.Runners[0] != runner {
		t.Fatalf("assignment %+v in %d events", assigned, len(r.Events))
	}
	if rn, _ := runners.ReadRunner(c.State, runner); rn.ActiveJobs != 1 {
		t.Fatalf("active jobs %d", rn.ActiveJobs)
	}
	if bal, _ := c.Balance(types.JobDispatcherAddress); bal.Cmp(cby(1)) != 0 {
		t.Fatalf("escrow %s", bal)
	}
	sig := verify.Sign(ed, id, runner, []byte("42"), nil)
	commit := &types.CommitResult{JobID: id, Commitment: verify.Commitment([]byte("42"), sig)}
	if r, _ := c.Run(m, stranger, jd, nil, commit); r.Code() != system.CodeJobTransition {
		t.Fatalf("stranger's commitment: %v", r.Err)
	}
	if r, _ := c.Run(m, runner, jd, nil, commit); r.Err != nil {
		t.Fatal(r.Err)
	}
	if j, err := jobs.ReadJob(c.State, id); err != nil || j.State != job.StateCommitted {
		t.Fatalf("job %+v: %v", j, err)
	}
}
