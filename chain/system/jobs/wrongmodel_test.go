package jobs_test

import (
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/sha256"
	"math/big"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/attest"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/models"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// liveRegistry is the TEE Verifier's view of the Runner Registry and the
// Job Dispatcher over the state (as the executor wires it).
type liveRegistry struct{}

func (liveRegistry) Runner(r state.Reader, a types.Address) (*tee.Runner, error) {
	rn, err := runners.ReadRunner(r, a)
	if err != nil || rn == nil {
		return nil, err
	}
	return &tee.Runner{Address: rn.Address, Active: rn.Status == runners.RunnerActive, TEE: rn.TEE, ResultKey: rn.ResultKey}, nil
}

func (liveRegistry) Committee(r state.Reader, id types.Hash) ([]types.Address, bool, error) {
	j, err := jobs.ReadJob(r, id)
	if err != nil || j == nil {
		return nil, false, err
	}
	return j.Runners, true, nil
}

func seed(label string) []byte { h := sha256.Sum256([]byte(label)); return h[:] }

// TestWrongModelSlashed (issue 19 item 5): per-job TEE evidence binds the
// registry model the enclave ran; evidence whose report data does not bind
// the claimed model is refused, and recorded evidence of another model
// than the job's model_id is a provable offence: anyone reporting it gets
// the runner slashed once, and evidence of the right model is no offence.
func TestWrongModelSlashed(t *testing.T) {
	reg := runners.New(runners.Params{MinRunnerStake: cby(10)})
	m := jobs.New(reg, attest.DevPolicy())
	mr := models.New(models.Params{})
	tv := tee.New(tee.Params{}, tee.DevChainID, liveRegistry{})
	c := systemtest.New()
	runner, owner, reporter := types.Address{0x01}, types.Address{0x02}, types.Address{0x03}
	for _, a := range []types.Address{runner, owner, reporter} {
		if err := c.Fund(a, cby(5000)); err != nil {
			t.Fatal(err)
		}
	}
	run := func(mod system.Module, from, to types.Address, value *big.Int, in types.Instruction) *systemtest.Result {
		t.Helper()
		r, err := c.Run(mod, from, to, value, in)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(mr, owner, types.ModelRegistryAddress, cby(1000), &types.ModelPublish{Weights: types.Hash{1}, Name: "right"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	right := models.ID(types.Hash{1}, types.Hash{}, types.Hash{}, types.Hash{})
	wrong := types.Hash{0x99}
	ed := ed25519.NewKeyFromSeed(seed("result"))
	if r := run(reg, runner, types.RunnerRegistryAddress, cby(100), &types.RunnerRegister{ResultKey: types.Bytes(ed.Public().(ed25519.PublicKey)),
		JobTypes: []uint64{uint64(job.JobTypeLLM)}, Models: []string{right.String()}, TEE: true, MaxConcurrentJobs: 4, MaxJobValue: cby(20)}); r.Err != nil {
		t.Fatalf("register: %v", r.Err)
	}
	sim, err := attest.NewSimulation(ed25519.NewKeyFromSeed(seed("platform")), attest.SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evidence := func(rd attest.ReportData) []byte {
		t.Helper()
		e, err := sim.Attest(context.Background(), rd)
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	seal, err := ecdh.X25519().NewPrivateKey(seed("seal"))
	if err != nil {
		t.Fatal(err)
	}
	if r := run(tv, runner, types.TEEVerifierAddress, nil, &types.TEEAttest{SealKey: seal.PublicKey().Bytes(),
		Evidence: evidence(attest.ReportDataForKey(runner, ed.Public().(ed25519.PublicKey), seal.PublicKey().Bytes()))}); r.Err != nil {
		t.Fatalf("attest: %v", r.Err)
	}
	submit := func() types.Hash {
		t.Helper()
		spec := &job.JobSpec{JobType: job.JobTypeLLM, Bounds: job.ResourceBounds{MaxTokens: 10, MaxWallTimeMs: 1000, MaxMemoryBytes: 1 << 20},
			Verification: job.VerificationConfig{Mode: job.ModeEconomicBond, Runners: 1}, MaxPrice: cby(1), Tip: new(big.Int),
			TimeoutBlocks: 50, Callback: job.CallbackInfo{Actor: owner, Handler: "on_result"},
			ResultSchema: job.ResultSchema{MaxReturnBytes: 100, ExpectedExecutionMs: 100, DataFormat: job.FormatText}, Input: []byte("x"), ModelID: right}
		sb, _ := spec.Encode()
		r := run(m, owner, types.JobDispatcherAddress, nil, &types.SubmitJob{Spec: sb})
		var idb []byte
		if r.Err != nil || codec.Unmarshal(r.Return, &idb) != nil {
			t.Fatalf("submit: %v", r.Err)
		}
		c.Env.Height++
		return types.Hash(idb)
	}
	honest, cheat := submit(), submit()
	res := types.Keccak256([]byte("answer"))
	attestResult := func(id, model types.Hash, rd attest.ReportData) system.Code {
		t.Helper()
		return run(tv, runner, types.TEEVerifierAddress, nil, &types.TEEAttestResult{JobID: id, ResultHash: res, ModelHash: model, Evidence: evidence(rd)}).Code()
	}
	// The claimed model must be the one the evidence binds.
	if code := attestResult(cheat, right, attest.ReportDataForResultModel(runner, cheat, res, wrong)); code != system.CodeAttestationRefused {
		t.Fatalf("evidence of another model than claimed: %s", code)
	}
	if code := attestResult(cheat, right, attest.ReportDataForResult(runner, cheat, res)); code != system.CodeAttestationRefused {
		t.Fatalf("model-less evidence claiming a model: %s", code)
	}
	if code := attestResult(honest, right, attest.ReportDataForResultModel(runner, honest, res, right)); code != system.CodeOK {
		t.Fatalf("evidence of the job's model: %s", code)
	}
	if code := attestResult(cheat, wrong, attest.ReportDataForResultModel(runner, cheat, res, wrong)); code != system.CodeOK {
		t.Fatalf("evidence of another model: %s", code)
	}
	rv := types.ResultVerifierAddress
	if r := run(m, reporter, rv, nil, &types.ReportWrongModel{JobID: honest, Runner: runner}); r.Code() != system.CodeInvalidEvidence {
		t.Fatalf("report against the right model: %v", r.Err)
	}
	before, _ := c.Balance(reporter)
	r := run(m, reporter, rv, nil, &types.ReportWrongModel{JobID: cheat, Runner: runner})
	if r.Err != nil {
		t.Fatalf("report: %v", r.Err)
	}
	var ev *jobs.WrongModelEvent
	for _, e := range r.Events {
		if e.Topic == jobs.TopicWrongModel {
			ev = new(jobs.WrongModelEvent)
			if err := codec.Unmarshal(e.Data, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ev == nil || ev.Runner != runner || ev.Model != wrong || ev.JobModel != right || ev.Slashed.Sign() <= 0 {
		t.Fatalf("wrong-model event %+v", ev)
	}
	after, _ := c.Balance(reporter)
	if new(big.Int).Sub(after, before).Cmp(ev.Reward) != 0 || ev.Reward.Sign() <= 0 {
		t.Fatalf("reporter gained %s, reward %s", new(big.Int).Sub(after, before), ev.Reward)
	}
	if rn, _ := runners.ReadRunner(c.State, runner); rn.Stake.Cmp(cby(100)) >= 0 {
		t.Fatalf("stake %s not slashed", rn.Stake)
	}
	if r := run(m, reporter, rv, nil, &types.ReportWrongModel{JobID: cheat, Runner: runner}); r.Code() != system.CodeAlreadySlashed {
		t.Fatalf("second report: %v", r.Err)
	}
}

// A Deterministic job naming a registry model counts a result only with
// per-job TEE evidence of that model: the aggregator's submission is
// refused while a member's evidence binds another model, and verifies
// once both bind the job's model.
func TestDeterministicNeedsModelEvidence(t *testing.T) {
	reg := runners.New(runners.Params{MinRunnerStake: cby(10)})
	m := jobs.New(reg, attest.DevPolicy())
	mr := models.New(models.Params{})
	tv := tee.New(tee.Params{}, tee.DevChainID, liveRegistry{})
	c := systemtest.New()
	owner := types.Address{0x10}
	run := func(mod system.Module, from, to types.Address, value *big.Int, in types.Instruction) *systemtest.Result {
		t.Helper()
		r, err := c.Run(mod, from, to, value, in)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if err := c.Fund(owner, cby(5000)); err != nil {
		t.Fatal(err)
	}
	if r := run(mr, owner, types.ModelRegistryAddress, cby(1000), &types.ModelPublish{Weights: types.Hash{1}, Name: "right"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	model := models.ID(types.Hash{1}, types.Hash{}, types.Hash{}, types.Hash{})
	type teeRunner struct {
		addr types.Address
		ed   ed25519.PrivateKey
		att  *attest.Simulation
	}
	var rs []teeRunner
	for i, name := range []string{"a", "b"} {
		r := teeRunner{addr: types.Address{byte(i + 1)}, ed: ed25519.NewKeyFromSeed(seed("result-" + name))}
		var err error
		if r.att, err = attest.NewSimulation(ed25519.NewKeyFromSeed(seed("platform-"+name)), attest.SimOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := c.Fund(r.addr, cby(1000)); err != nil {
			t.Fatal(err)
		}
		if x := run(reg, r.addr, types.RunnerRegistryAddress, cby(100), &types.RunnerRegister{ResultKey: types.Bytes(r.ed.Public().(ed25519.PublicKey)),
			JobTypes: []uint64{uint64(job.JobTypeLLM)}, Models: []string{model.String()}, TEE: true, MaxConcurrentJobs: 4, MaxJobValue: cby(20)}); x.Err != nil {
			t.Fatalf("register: %v", x.Err)
		}
		seal, err := ecdh.X25519().NewPrivateKey(seed("seal-" + name))
		if err != nil {
			t.Fatal(err)
		}
		e, err := r.att.Attest(context.Background(), attest.ReportDataForKey(r.addr, r.ed.Public().(ed25519.PublicKey), seal.PublicKey().Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		eb, _ := e.Encode()
		if x := run(tv, r.addr, types.TEEVerifierAddress, nil, &types.TEEAttest{Evidence: eb, SealKey: seal.PublicKey().Bytes()}); x.Err != nil {
			t.Fatalf("attest: %v", x.Err)
		}
		rs = append(rs, r)
	}
	spec := &job.JobSpec{JobType: job.JobTypeLLM, Bounds: job.ResourceBounds{MaxTokens: 10, MaxWallTimeMs: 1000, MaxMemoryBytes: 1 << 20},
		Verification: job.VerificationConfig{Mode: job.ModeDeterministic, Runners: 2}, MaxPrice: cby(1), Tip: new(big.Int), TEERequired: true,
		TimeoutBlocks: 50, Callback: job.CallbackInfo{Actor: owner, Handler: "on_result"},
		ResultSchema: job.ResultSchema{MaxReturnBytes: 100, ExpectedExecutionMs: 100, DataFormat: job.FormatText}, Input: []byte("x"), ModelID: model}
	sb, _ := spec.Encode()
	result := []byte("42")
	h := types.Keccak256(result)
	// newJob submits the job, commits both results and returns the job and
	// the aggregator's submission.
	newJob := func() (*job.Job, []byte) {
		t.Helper()
		x := run(m, owner, types.JobDispatcherAddress, nil, &types.SubmitJob{Spec: sb})
		var idb []byte
		if x.Err != nil || codec.Unmarshal(x.Return, &idb) != nil {
			t.Fatalf("submit: %v", x.Err)
		}
		c.Env.Height++
		id := types.Hash(idb)
		var reveals []verify.Reveal
		keys := map[types.Address]ed25519.PublicKey{}
		for _, r := range rs { // addresses 0x01, 0x02: already in runner order
			sig := verify.Sign(r.ed, id, r.addr, result, nil)
			reveals = append(reveals, verify.Reveal{Runner: r.addr, Result: result, Signature: sig})
			keys[r.addr] = r.ed.Public().(ed25519.PublicKey)
			if x := run(m, r.addr, types.JobDispatcherAddress, nil, &types.CommitResult{JobID: id, Commitment: verify.Commitment(result, sig)}); x.Err != nil {
				t.Fatalf("commit: %v", x.Err)
			}
		}
		j, err := jobs.ReadJob(c.State, id)
		if err != nil || j.State != job.StateCommitted {
			t.Fatalf("job %+v: %v", j, err)
		}
		out, err := verify.Verify(verify.Input{Spec: &j.Spec, Commitments: j.Commitments, Keys: keys, Reveals: reveals})
		if err != nil || !out.Accepted {
			t.Fatalf("local verify: %+v %v", out, err)
		}
		enc, err := (&verify.Submission{Claim: out.Claim(id), Reveals: reveals}).Encode()
		if err != nil {
			t.Fatal(err)
		}
		return j, enc
	}
	attestResult := func(id types.Hash, r teeRunner, bound types.Hash) system.Code {
		t.Helper()
		e, err := r.att.Attest(context.Background(), attest.ReportDataForResultModel(r.addr, id, h, bound))
		if err != nil {
			t.Fatal(err)
		}
		eb, _ := e.Encode()
		return run(tv, r.addr, types.TEEVerifierAddress, nil, &types.TEEAttestResult{JobID: id, ResultHash: h, Evidence: eb, ModelHash: bound}).Code()
	}
	submit := func(j *job.Job, enc []byte) *systemtest.Result {
		return run(m, j.Aggregator, types.ResultVerifierAddress, nil, &types.SubmitResult{JobID: j.Spec.JobID, Submission: enc})
	}

	good, enc := newJob()
	for _, r := range rs {
		if code := attestResult(good.Spec.JobID, r, model); code != system.CodeOK {
			t.Fatalf("evidence of the job's model: %s", code)
		}
	}
	if x := submit(good, enc); x.Err != nil {
		t.Fatalf("submission with evidence of the job's model: %v", x.Err)
	}

	bad, enc := newJob()
	if code := attestResult(bad.Spec.JobID, rs[0], model); code != system.CodeOK {
		t.Fatal(code)
	}
	if code := attestResult(bad.Spec.JobID, rs[1], types.Hash{0x99}); code != system.CodeOK {
		t.Fatal(code)
	}
	if x := submit(bad, enc); x.Code() != system.CodeInvalidSubmission || !strings.Contains(x.Err.Error(), "binds model") {
		t.Fatalf("submission with evidence of another model: %v", x.Err)
	}
	// The recorded wrong model stands: it cannot be replaced before it is reported.
	if code := attestResult(bad.Spec.JobID, rs[1], model); code != system.CodeWrongModel {
		t.Fatalf("replacing evidence of a wrong model: %s", code)
	}
	if x := run(m, owner, types.ResultVerifierAddress, nil, &types.ReportWrongModel{JobID: bad.Spec.JobID, Runner: rs[1].addr}); x.Err != nil {
		t.Fatalf("report: %v", x.Err)
	}
}
