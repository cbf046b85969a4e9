package runners_test

import (
	"crypto/ed25519"
	"errors"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func cby(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }

// The Runner Registry as a module: registration rules and stake, a
// delegation and its unbonding tranche, the busy check the dispatcher's
// job count drives, and exit with the self-bond unbonding.
func TestRegistryModule(t *testing.T) {
	m := runners.New(runners.Params{MinRunnerStake: cby(10), UnbondingBlocks: 5})
	c := systemtest.New()
	runner, delegator := types.Address{0x01}, types.Address{0x02}
	for _, a := range []types.Address{runner, delegator} {
		if err := c.Fund(a, cby(1000)); err != nil {
			t.Fatal(err)
		}
	}
	reg := types.RunnerRegistryAddress
	run := func(from types.Address, value *big.Int, in types.Instruction) *systemtest.Result {
		t.Helper()
		return c.MustRun(t, m, from, reg, value, in)
	}
	key := ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey)
	in := &types.RunnerRegister{ResultKey: types.Bytes(key), JobTypes: []uint64{2}, MaxConcurrentJobs: 2}
	if _, err := c.Run(m, runner, types.JobDispatcherAddress, cby(20), in); !errors.Is(err, types.ErrMalformedTx) {
		t.Fatalf("register at the dispatcher: %v", err)
	}
	if _, err := c.Run(m, runner, reg, big.NewInt(1), &types.RunnerHeartbeat{}); !errors.Is(err, types.ErrMalformedTx) {
		t.Fatalf("heartbeat with value: %v", err)
	}
	if r := run(runner, cby(5), in); r.Code() != system.CodeInsufficientStake {
		t.Fatalf("low stake: %v", r.Err)
	}
	if r := run(runner, cby(20), &types.RunnerRegister{ResultKey: types.Bytes{1}, JobTypes: []uint64{2}, MaxConcurrentJobs: 1}); r.Code() != system.CodeInvalidResultKey {
		t.Fatalf("bad key: %v", r.Err)
	}
	r := run(runner, cby(20), in)
	if r.Err != nil || len(r.Events) != 1 || r.Events[0].Topic != runners.TopicRunnerRegistered {
		t.Fatalf("register: %v %+v", r.Err, r.Events)
	}
	var ev runners.RunnerRegisteredEvent
	if err := codec.Unmarshal(r.Events[0].Data, &ev); err != nil || ev.Runner != runner || ev.Stake.Cmp(cby(20)) != 0 {
		t.Fatalf("event %+v: %v", ev, err)
	}
	if r := run(delegator, cby(30), &types.RunnerDelegateStake{Runner: runner}); r.Err != nil {
		t.Fatal(r.Err)
	}
	rn, err := runners.ReadRunner(c.State, runner)
	if err != nil || rn.EffectiveStake().Cmp(cby(50)) != 0 || rn.Delegators != 1 {
		t.Fatalf("record %+v: %v", rn, err)
	}
	// The dispatcher assigns a job: the runner is busy and cannot leave.
	if err := m.With(systemtest.Ctx(c)).AdjustRunners([]types.Address{runner}, 1, 0); err != nil {
		t.Fatal(err)
	}
	if r := run(runner, nil, &types.RunnerDeregister{}); r.Code() != system.CodeRunnerBusy {
		t.Fatalf("busy deregister: %v", r.Err)
	}
	if err := m.With(systemtest.Ctx(c)).AdjustRunners([]types.Address{runner}, -1, 10); err != nil {
		t.Fatal(err)
	}
	if r := run(runner, nil, &types.RunnerDeregister{}); r.Err != nil {
		t.Fatal(r.Err)
	}
	tr, err := runners.ReadTranches(c.State, runner)
	if err != nil || len(tr) != 1 || tr[0].Amount.Cmp(cby(20)) != 0 || tr[0].Release != c.Env.Height+5 {
		t.Fatalf("tranches %+v: %v", tr, err)
	}
	if r := run(runner, nil, &types.RunnerWithdraw{}); r.Code() != system.CodeNothingToWithdraw {
		t.Fatalf("early withdraw: %v", r.Err)
	}
	c.Env.Height += 5
	before, _ := c.Balance(runner)
	if r := run(runner, nil, &types.RunnerWithdraw{}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if after, _ := c.Balance(runner); new(big.Int).Sub(after, before).Cmp(cby(20)) != 0 {
		t.Fatalf("withdrew %s", new(big.Int).Sub(after, before))
	}
}
