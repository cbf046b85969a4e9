package governance_test

import (
	"crypto/ed25519"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/governance"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// A Tier 0 change of runners.heartbeat_timeout_blocks is observed by the
// Job Dispatcher that consumes it: a runner silent for 80 blocks is left
// out of selection under the 60-block default, and selected once the
// timeout is 200.
func TestHeartbeatTimeoutConsumer(t *testing.T) {
	reg := runners.New(runners.Params{MinRunnerStake: cby(10)})
	m, err := governance.New(governance.Params{Genesis: map[string]uint64{governance.KeyVotingPeriod: 10, governance.TierKey(0, "timelock_blocks"): 2, governance.KeyMinDeposit: 0},
		Voters: []types.Address{alice}}, runners.ParamDefs(reg.Params())...)
	if err != nil {
		t.Fatal(err)
	}
	d := jobs.New(reg, attest.Policy{})
	d.UseParams(m.Store())
	c := systemtest.New()
	runner, owner := types.Address{0x01}, types.Address{0x02}
	for _, a := range []types.Address{runner, owner, alice} {
		if err := c.Fund(a, cby(5000)); err != nil {
			t.Fatal(err)
		}
	}
	ed := ed25519.NewKeyFromSeed(make([]byte, 32))
	if r, err := c.Run(reg, runner, types.RunnerRegistryAddress, cby(100), &types.RunnerRegister{ResultKey: types.Bytes(ed.Public().(ed25519.PublicKey)),
		JobTypes: []uint64{uint64(job.JobTypeHTTP)}, Domains: []string{"api.example.com"}, RateBase: big.NewInt(1e16), MaxConcurrentJobs: 4, MaxJobValue: cby(20)}); err != nil || r.Err != nil {
		t.Fatalf("register: %v %v", err, r)
	}
	candidates := func(nonce byte) uint64 {
		t.Helper()
		spec := &job.JobSpec{JobType: job.JobTypeHTTP, Bounds: job.ResourceBounds{MaxWallTimeMs: 1000, MaxMemoryBytes: 1 << 20},
			Verification: job.VerificationConfig{Mode: job.ModeEconomicBond, Runners: 1}, MaxPrice: cby(1), Tip: new(big.Int),
			TimeoutBlocks: 50, Callback: job.CallbackInfo{Actor: owner, Handler: "on_result"},
			ResultSchema: job.ResultSchema{MaxReturnBytes: 100, ExpectedExecutionMs: 100, DataFormat: job.FormatText}, Input: []byte{nonce}}
		sb, err := spec.Encode()
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Run(d, owner, types.JobDispatcherAddress, nil, &types.SubmitJob{Spec: sb})
		if err != nil || r.Err != nil {
			t.Fatalf("submit: %v %v", err, r)
		}
		for _, ev := range r.Events {
			if ev.Topic == jobs.TopicJobSubmitted {
				var e jobs.JobSubmittedEvent
				if err := codec.Unmarshal(ev.Data, &e); err != nil {
					t.Fatal(err)
				}
				return e.Candidates
			}
		}
		t.Fatal("no JobSubmitted event")
		return 0
	}
	c.Env.Height = 81 // 80 blocks after the heartbeat at 1
	if n := candidates(1); n != 0 {
		t.Fatalf("%d candidates under the 60-block default", n)
	}
	f := &fixture{t: t, m: m, c: c}
	f.want(f.run(alice, nil, paramChange(0, runners.KeyHeartbeatTimeout, 200)), system.CodeOK)
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeOK)
	f.advance(83) // closes at 81, executes at the end of 83
	if p := f.proposal(1); p.Status != governance.StatusExecuted {
		t.Fatalf("status %s", governance.StatusName(p.Status))
	}
	c.Env.Height = 84
	if n := candidates(2); n != 1 {
		t.Fatalf("%d candidates with a 200-block timeout", n)
	}
	// Out of its declared range: refused.
	f.want(f.run(alice, nil, paramChange(0, runners.KeyHeartbeatTimeout, 0)), system.CodeParamOutOfRange)
}
