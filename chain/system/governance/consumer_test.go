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
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
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

// A Tier 0 change of validators.unbonding_ms, voted by the validators
// themselves (stake chamber from the registry), is observed by the
// Validator Registry when a validator exits.
func TestUnbondingConsumer(t *testing.T) {
	vp := validators.Params{EpochLength: 1000, MinStake: cby(100)}
	vals := validators.New(vp, 1)
	m, err := governance.New(governance.Params{Genesis: map[string]uint64{governance.KeyMinDeposit: 0, governance.TierKey(0, "timelock_blocks"): 1}},
		validators.ParamDefs(vals.Params())...)
	if err != nil {
		t.Fatal(err)
	}
	vals.UseParams(m.Store())
	c := systemtest.New()
	v1, v2 := types.Address{0xd1}, types.Address{0xd2}
	validators.SetGenesisValidators(c.State, []validators.GenesisValidator{
		{Address: v1, BLSKey: types.Bytes{1}, Stake: cby(600)}, {Address: v2, BLSKey: types.Bytes{2}, Stake: cby(400)}}, 0)
	exit := func(v types.Address) uint64 {
		t.Helper()
		r, err := c.Run(vals, v, types.ValidatorRegistryAddress, nil, &types.ValidatorExit{})
		if err != nil || r.Err != nil {
			t.Fatalf("exit: %v %v", err, r.Err)
		}
		rec, err := validators.ReadValidator(c.State, v)
		if err != nil {
			t.Fatal(err)
		}
		return rec.UnbondAt - c.Env.Timestamp
	}
	f := &fixture{t: t, m: m, c: c}
	f.want(f.run(v1, nil, paramChange(0, validators.KeyUnbondingMs, 5000)), system.CodeOK)
	f.want(f.run(v1, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeOK)
	f.want(f.run(v2, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeOK)
	// v2 exits before the change: the default (7 days) applies, and its
	// unbonding stake still counts in the snapshot.
	before := vals.Params().UnbondingMs
	if got := exit(v2); got != before {
		t.Fatalf("unbonding %d ms before the change, want %d", got, before)
	}
	f.advance(2) // closes at 1, executes at 2
	if p := f.proposal(1); !governance.Count(p).Passed() {
		t.Fatalf("tally %+v", governance.Count(p))
	}
	if f.param(validators.KeyUnbondingMs) != 5000 {
		t.Fatal("not changed")
	}
	c.Env.Height, c.Env.Timestamp = 3, 3000
	if got := exit(v1); got != 5000 || before == 5000 {
		t.Fatalf("unbonding %d ms after the change (default %d)", got, before)
	}
}

// A Tier 0 change of runners.max_delegators and runners.unbonding_blocks
// is observed by the Runner Registry that consumes them: before it, a
// second delegator is accepted and an undelegation unbonds for the
// genesis 7,200 blocks; from the block after its execution, a third
// delegator is refused with TooManyDelegators (the boundary: two
// delegators, limit 2) and an undelegation unbonds for 50 blocks.
func TestRunnerStakeParamsConsumer(t *testing.T) {
	reg := runners.New(runners.Params{MinRunnerStake: cby(10)})
	m, err := governance.New(governance.Params{Genesis: map[string]uint64{governance.KeyVotingPeriod: 10, governance.TierKey(0, "timelock_blocks"): 2, governance.KeyMinDeposit: 0},
		Voters: []types.Address{alice}}, runners.ParamDefs(reg.Params())...)
	if err != nil {
		t.Fatal(err)
	}
	reg.UseParams(m.Store())
	c := systemtest.New()
	runner, d1, d2, d3 := types.Address{0x01}, types.Address{0x02}, types.Address{0x03}, types.Address{0x04}
	for _, a := range []types.Address{runner, d1, d2, d3, alice} {
		if err := c.Fund(a, cby(5000)); err != nil {
			t.Fatal(err)
		}
	}
	run := func(from types.Address, value *big.Int, in types.Instruction) system.Code {
		t.Helper()
		r, err := c.Run(reg, from, types.RunnerRegistryAddress, value, in)
		if err != nil {
			t.Fatal(err)
		}
		return r.Code()
	}
	ed := ed25519.NewKeyFromSeed(make([]byte, 32))
	if code := run(runner, cby(1000), &types.RunnerRegister{ResultKey: types.Bytes(ed.Public().(ed25519.PublicKey)), JobTypes: []uint64{2}, MaxConcurrentJobs: 1}); code != system.CodeOK {
		t.Fatalf("register: %s", code)
	}
	unbonds := func(d types.Address) uint64 {
		t.Helper()
		if code := run(d, nil, &types.RunnerUndelegateStake{Runner: runner, Amount: cby(1)}); code != system.CodeOK {
			t.Fatalf("undelegate: %s", code)
		}
		ts, err := runners.ReadTranches(c.State, d)
		if err != nil || len(ts) == 0 {
			t.Fatalf("tranches %v: %v", ts, err)
		}
		return ts[len(ts)-1].Release - c.Env.Height
	}
	for _, d := range []types.Address{d1, d2} {
		if code := run(d, cby(10), &types.RunnerDelegateStake{Runner: runner}); code != system.CodeOK {
			t.Fatalf("delegate: %s", code)
		}
	}
	if got := unbonds(d1); got != 7200 {
		t.Fatalf("unbonding %d blocks under the genesis value", got)
	}
	f := &fixture{t: t, m: m, c: c}
	f.want(f.run(alice, nil, &types.GovPropose{Tier: 0, Title: "t", Params: []types.GovParam{
		{Key: runners.KeyMaxDelegators, Value: 2}, {Key: runners.KeyUnbondingBlocks, Value: 50}}}), system.CodeOK)
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeOK)
	f.advance(c.Env.Height + 2) // closes now, executes at the end of the ETA block 2 blocks on
	if p := f.proposal(1); p.Status != governance.StatusExecuted {
		t.Fatalf("status %s", governance.StatusName(p.Status))
	}
	c.Env.Height++
	if code := run(d3, cby(10), &types.RunnerDelegateStake{Runner: runner}); code != system.CodeTooManyDelegators {
		t.Fatalf("third delegator under a limit of 2: %s", code)
	}
	if got := unbonds(d2); got != 50 {
		t.Fatalf("unbonding %d blocks after the change", got)
	}
	f.want(f.run(alice, nil, paramChange(0, runners.KeyMaxDelegators, 0)), system.CodeParamOutOfRange)
}

// Runner-delegated CBY has zero weight in the stake chamber (spec 002
// §11.1): a runner and its delegator, however much they bonded in the
// Runner Registry, are not in the snapshot; their votes are refused with
// NoVotingPower and the tally is the validators' alone.
func TestRunnerDelegationHasNoVotingWeight(t *testing.T) {
	f := newFixture(t, alice)
	reg := runners.New(runners.Params{MinRunnerStake: cby(10)})
	runner, delegator := types.Address{0x01}, types.Address{0x02}
	for _, a := range []types.Address{runner, delegator} {
		if err := f.c.Fund(a, cby(5000)); err != nil {
			t.Fatal(err)
		}
	}
	ed := ed25519.NewKeyFromSeed(make([]byte, 32))
	for _, s := range []struct {
		from  types.Address
		value *big.Int
		in    types.Instruction
	}{
		{runner, cby(1000), &types.RunnerRegister{ResultKey: types.Bytes(ed.Public().(ed25519.PublicKey)), JobTypes: []uint64{2}, MaxConcurrentJobs: 1}},
		{delegator, cby(4000), &types.RunnerDelegateStake{Runner: runner}},
	} {
		if r, err := f.c.Run(reg, s.from, types.RunnerRegistryAddress, s.value, s.in); err != nil || r.Err != nil {
			t.Fatalf("%T: %v %v", s.in, err, r.Err)
		}
	}
	f.want(f.run(alice, cby(5), paramChange(4, governance.KeyVotingPeriod, 20)), system.CodeOK)
	for _, a := range []types.Address{runner, delegator} {
		f.want(f.run(a, nil, &types.GovVote{Proposal: 1, Choice: types.VoteNo}), system.CodeNoVotingPower)
	}
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeOK)
	if c := governance.Count(f.proposal(1)); c.No.Sign() != 0 || c.Total.Cmp(c.Yes) != 0 || !c.Passed() {
		t.Fatalf("tally %+v", c)
	}
}
