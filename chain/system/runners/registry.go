package runners

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/payment"
	"github.com/cowboy-foundation/cowboy/chain/offchain/selection"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/models"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Params are the parameters of the off-chain compute system actors
// (Runner Registry 0x…01, Job Dispatcher 0x…02, Result Verifier 0x…03).
// Zero fields take the defaults.
type Params struct {
	// MinRunnerStake is the minimum self-bond: 10,000 CBY (CIP-2). A
	// runner's stake must also be ≥ 1.5 × its declared max job value.
	MinRunnerStake *big.Int
	// HeartbeatTimeout is heartbeat_timeout_blocks of the health filter: 60.
	HeartbeatTimeout uint64
	// InitialReputation of a new runner: 100.
	InitialReputation uint64
	// Job are the lifecycle constants (job.DefaultParams).
	Job job.Params
	// Payment are the settlement constants (payment.DefaultParams).
	Payment payment.Params
	// CallbackCycles and CallbackCells bound each job callback (delivered
	// in a later block than the one that decided the job,
	// offchain_lane.go): 100,000 and 10,000. submit_job charges both to the
	// submitting transaction: the callback is prepaid, so it cannot be used
	// to run work for free in the runner lane.
	CallbackCycles, CallbackCells uint64
	// CallbackBlockCycles is the job lane's callback budget per block;
	// zero takes half the runner lane's reserved cycles of the lane
	// schedule (Config.Lanes: 25% of the 10,000,000-cycle target, spec 002
	// §6.3), so runner transactions always keep the other half.
	CallbackBlockCycles uint64
	// UnbondingBlocks is how long undelegated or unstaked stake (and the
	// self-bond of a deregistered runner) stays slashable before it can be
	// withdrawn: 7,200 (~24 h).
	UnbondingBlocks uint64
	// MinSelfBondBps is the minimum self-bond as a share of the effective
	// stake: 1,000 (10%).
	MinSelfBondBps uint64
	// MaxDelegators per runner: 200.
	MaxDelegators uint32
	// MaxTranches is the number of unbonding tranches an address may have
	// at once: 8.
	MaxTranches int
	// ChallengeBond is the bond a challenger posts: 100 CBY.
	ChallengeBond *big.Int
	// SlashBps is the share of a culprit's stake slashed for a proven
	// fault: 3,000 (30%); ChallengerBps of it goes to the challenger:
	// 7,000 (70%), the rest is burned.
	SlashBps, ChallengerBps uint64
	// MaxConsecutiveSlashes ejects a runner slashed this many times without
	// a paid job in between: 3.
	MaxConsecutiveSlashes uint32
}

func (p *Params) fill() {
	if p.MinRunnerStake == nil {
		p.MinRunnerStake = new(big.Int).Set(selection.MinStake())
	}
	if p.HeartbeatTimeout == 0 {
		p.HeartbeatTimeout = 60
	}
	if p.InitialReputation == 0 {
		p.InitialReputation = 100
	}
	if p.Job == (job.Params{}) {
		p.Job = job.DefaultParams()
	}
	if p.Payment == (payment.Params{}) {
		p.Payment = payment.DefaultParams()
	}
	if p.CallbackCycles == 0 {
		p.CallbackCycles = 100_000
	}
	if p.CallbackCells == 0 {
		p.CallbackCells = 10_000
	}
	if p.UnbondingBlocks == 0 {
		p.UnbondingBlocks = 7_200
	}
	if p.MinSelfBondBps == 0 {
		p.MinSelfBondBps = 1_000
	}
	if p.MaxDelegators == 0 {
		p.MaxDelegators = 200
	}
	if p.MaxTranches == 0 {
		p.MaxTranches = 8
	}
	if p.ChallengeBond == nil {
		p.ChallengeBond = new(big.Int).Mul(big.NewInt(100), big.NewInt(1e18))
	}
	if p.SlashBps == 0 {
		p.SlashBps = 3_000
	}
	if p.ChallengerBps == 0 {
		p.ChallengerBps = 7_000
	}
	if p.MaxConsecutiveSlashes == 0 {
		p.MaxConsecutiveSlashes = 3
	}
}

// Runner statuses.
const (
	RunnerActive uint8 = 1
	RunnerExited uint8 = 2
)

// Runner is a Runner Registry (0x…01) record.
type Runner struct {
	_                 struct{}      `cbor:",toarray"`
	Address           types.Address `json:"address"`
	ResultKey         types.Bytes   `json:"result_key"` // Ed25519 public key
	JobTypes          []job.JobType `json:"job_types"`
	Models            []string      `json:"models"`
	Domains           []string      `json:"domains"`
	TEE               bool          `json:"tee"`
	Rates             job.RateCard  `json:"rates"`
	MaxConcurrentJobs uint32        `json:"max_concurrent_jobs"`
	ActiveJobs        uint32        `json:"active_jobs"`
	MaxJobValue       *big.Int      `json:"max_job_value"`
	Stake             *big.Int      `json:"stake"` // self-bond, held by the registry account
	Reputation        uint64        `json:"reputation"`
	RegisteredAt      uint64        `json:"registered_at"`
	LastHeartbeat     uint64        `json:"last_heartbeat"`
	Status            uint8         `json:"status"`
	// Delegated is the sum of the active delegations (CIP-13), held by the
	// registry account; Delegators counts them.
	Delegated     *big.Int `json:"delegated"`
	Delegators    uint32   `json:"delegators"`
	CommissionBps uint16   `json:"commission_bps"`
	// ConsecutiveSlashes counts upheld challenges since the runner was last
	// paid for a job; MaxConsecutiveSlashes of them eject it.
	ConsecutiveSlashes uint32 `json:"consecutive_slashes"`
}

// EffectiveStake is self-bond + delegated stake: what selection weighs and
// what the stake floor and max job value are judged against.
func (r *Runner) EffectiveStake() *big.Int {
	return new(big.Int).Add(OrZero(r.Stake), OrZero(r.Delegated))
}

// OrZero is v, or zero for nil (records decoded from before a field existed).
func OrZero(v *big.Int) *big.Int {
	if v == nil {
		return new(big.Int)
	}
	return v
}

// Healthy reports whether the runner is active and heard from recently.
func (r *Runner) Healthy(height, timeout uint64) bool {
	return r.Status == RunnerActive && r.LastHeartbeat <= height && height-r.LastHeartbeat <= timeout
}

// Candidate is the runner as the Job Dispatcher's selection sees it.
func (r *Runner) Candidate() selection.Candidate {
	return selection.Candidate{
		Address: r.Address, Stake: r.EffectiveStake(), Capabilities: slices.Clone(r.JobTypes),
		LastHeartbeat: r.LastHeartbeat, Reputation: r.Reputation, TEE: r.TEE, Domains: slices.Clone(r.Domains),
		Rates: r.Rates, ActiveJobs: r.ActiveJobs, MaxConcurrentJobs: r.MaxConcurrentJobs,
	}
}

// RunnerKey is the state key of a runner record.
func RunnerKey(a types.Address) []byte {
	return system.Key(types.RunnerRegistryAddress, []byte("runner/"), a[:])
}

// RunnerEndpointKey holds a runner's optional aggregator URL (kept apart
// from the record so the record's encoding is unchanged).
func RunnerEndpointKey(a types.Address) []byte {
	return system.Key(types.RunnerRegistryAddress, []byte("endpoint/"), a[:])
}

// ReadRunnerEndpoint returns a runner's registered aggregator URL ("" if none).
func ReadRunnerEndpoint(r state.Reader, a types.Address) (string, error) {
	b, ok, err := r.Get(RunnerEndpointKey(a))
	if err != nil || !ok {
		return "", err
	}
	return string(b), nil
}

// RunnerPrefix prefixes every runner record.
func RunnerPrefix() []byte { return system.Key(types.RunnerRegistryAddress, []byte("runner/")) }

// ReadRunner decodes a runner record (nil if absent).
func ReadRunner(r state.Reader, a types.Address) (*Runner, error) {
	return system.Get[Runner](r, RunnerKey(a), "decode runner %s", a)
}

// ListRunners returns every runner record in address order.
func ListRunners(r state.Reader) ([]*Runner, error) {
	var out []*Runner
	err := r.Scan(RunnerPrefix(), func(_, v []byte) error {
		var rn Runner
		if err := codec.Unmarshal(v, &rn); err != nil {
			return fmt.Errorf("decode runner: %w", err)
		}
		out = append(out, &rn)
		return nil
	})
	return out, err
}

// Candidates returns the active runners as selection candidates, sorted
// ascending by address (health is judged by the selection filter from the
// heartbeat age).
func Candidates(r state.Reader) ([]selection.Candidate, error) {
	rs, err := ListRunners(r)
	if err != nil {
		return nil, err
	}
	out := make([]selection.Candidate, 0, len(rs))
	for _, rn := range rs {
		if rn.Status == RunnerActive {
			out = append(out, rn.Candidate())
		}
	}
	return out, nil
}

// MaxJobValueOrStake is the largest escrow (max_price + tip) a runner takes: its
// declared max job value, or, if it declared none, floor(2 × stake / 3) (the
// value its stake covers at the 1.5× bond ratio).
func (r *Runner) MaxJobValueOrStake() *big.Int {
	if r.MaxJobValue != nil && r.MaxJobValue.Sign() > 0 {
		return r.MaxJobValue
	}
	v := new(big.Int).Mul(r.EffectiveStake(), big.NewInt(2))
	return v.Div(v, big.NewInt(3))
}

// StakeEligible reports whether a runner's stake still meets the
// registration rules — effective stake ≥ max(MinRunnerStake, 1.5 × max job
// value) and self-bond ≥ MinSelfBondBps of the effective stake — which
// undelegation and slashing can break after registration.
func (p *Params) StakeEligible(r *Runner) bool {
	eff := r.EffectiveStake()
	if eff.Cmp(p.MinRunnerStakeFor(r.MaxJobValue)) < 0 {
		return false
	}
	return selfBondOK(OrZero(r.Stake), eff, p.MinSelfBondBps)
}

// selfBondOK is self·10^4 ≥ minBps·effective.
func selfBondOK(self, effective *big.Int, minBps uint64) bool {
	l := new(big.Int).Mul(self, big.NewInt(10_000))
	return l.Cmp(new(big.Int).Mul(effective, new(big.Int).SetUint64(minBps))) >= 0
}

// MinRunnerStakeFor is max(MinRunnerStake, 1.5 × maxJobValue), rounded up.
func (p *Params) MinRunnerStakeFor(maxJobValue *big.Int) *big.Int {
	need := new(big.Int).Set(p.MinRunnerStake)
	if maxJobValue != nil {
		v := new(big.Int).Mul(maxJobValue, big.NewInt(3))
		v.Add(v, big.NewInt(1))
		v.Rsh(v, 1) // ceil(3v/2)
		if v.Cmp(need) > 0 {
			need = v
		}
	}
	return need
}

func (x *Tx) runnerRegister(from types.Address, in *types.RunnerRegister) error {
	p, err := x.m.Governed(x.State())
	if err != nil {
		return err
	}
	if len(in.ResultKey) != ed25519.PublicKeySize {
		return system.Failf(system.CodeInvalidResultKey, "InvalidResultKey: an Ed25519 public key is %d bytes", ed25519.PublicKeySize)
	}
	if len(in.JobTypes) == 0 || len(in.JobTypes) > 4 {
		return system.Failf(system.CodeInvalidCapabilities, "InvalidCapabilities: declare 1..4 job types")
	}
	jobTypes := make([]job.JobType, 0, len(in.JobTypes))
	for _, t := range in.JobTypes {
		jt := job.JobType(t)
		if t > 255 || !jt.Valid() {
			return system.Failf(system.CodeInvalidCapabilities, "InvalidCapabilities: job type %d", t)
		}
		if !slices.Contains(jobTypes, jt) {
			jobTypes = append(jobTypes, jt)
		}
	}
	slices.Sort(jobTypes)
	if len(in.Models) > 64 || len(in.Domains) > 64 {
		return system.Failf(system.CodeInvalidCapabilities, "InvalidCapabilities: at most 64 models and 64 domains")
	}
	for _, s := range append(slices.Clone(in.Models), in.Domains...) {
		if s == "" || len(s) > 256 {
			return system.Failf(system.CodeInvalidCapabilities, "InvalidCapabilities: model and domain names are 1..256 bytes")
		}
	}
	for _, s := range in.Models { // a declared registry model id must be usable (spec 002 §5.1); other names are free
		if id, ok := models.ParseRef(s); ok {
			if err := models.Usable(x.State(), id); err != nil {
				return err
			}
		}
	}
	rates := job.RateCard{Base: in.RateBase, PerToken: in.RatePerToken, PerWallMs: in.RatePerWallMs, PerMemoryMiB: in.RatePerMemoryMiB}
	for _, r := range []struct {
		name string
		v    *big.Int
	}{{"base", in.RateBase}, {"per_token", in.RatePerToken}, {"per_wall_ms", in.RatePerWallMs}, {"per_memory_mib", in.RatePerMemoryMiB}} {
		if r.v != nil && (r.v.Sign() < 0 || r.v.BitLen() > 256) {
			return system.Failf(system.CodeInvalidRateCard, "InvalidRateCard: %s out of range", r.name) // checked in order: RateCard.Validate ranges over a map
		}
	}
	if in.MaxConcurrentJobs == 0 || in.MaxConcurrentJobs > 1<<16 {
		return system.Failf(system.CodeInvalidCapabilities, "InvalidCapabilities: max concurrent jobs must be 1..65536")
	}
	if in.MaxJobValue != nil && in.MaxJobValue.Sign() < 0 {
		return system.Failf(system.CodeInvalidCapabilities, "InvalidCapabilities: negative max job value")
	}
	if ep := in.Endpoint; ep != "" && (len(ep) > 256 || !(strings.HasPrefix(ep, "http://") || strings.HasPrefix(ep, "https://"))) {
		return system.Failf(system.CodeInvalidEndpoint, "InvalidEndpoint: an http:// or https:// URL of at most 256 bytes")
	}
	rn, err := ReadRunner(x.State(), from)
	if err != nil {
		return err
	}
	stake := x.Transaction().Value()
	if rn == nil || rn.Status != RunnerActive {
		rep := p.InitialReputation
		if rn != nil {
			rep = rn.Reputation // reputation survives re-registration
		}
		nr := &Runner{Address: from, Stake: new(big.Int), Reputation: rep, RegisteredAt: x.Env().Height, Delegated: new(big.Int)}
		if rn != nil {
			// Delegations left on an exited runner count again once it
			// re-registers (they stayed bonded unless undelegated); its
			// self-bond went to unbonding when it left.
			nr.Delegated, nr.Delegators, nr.CommissionBps = OrZero(rn.Delegated), rn.Delegators, rn.CommissionBps
			nr.ConsecutiveSlashes = rn.ConsecutiveSlashes
		}
		rn = nr
	}
	rn.Stake = new(big.Int).Add(OrZero(rn.Stake), stake)
	maxVal := new(big.Int)
	if in.MaxJobValue != nil {
		maxVal.Set(in.MaxJobValue)
	}
	if need := p.MinRunnerStakeFor(maxVal); rn.EffectiveStake().Cmp(need) < 0 {
		return system.Failf(system.CodeInsufficientStake, "InsufficientStake: effective stake %s (self %s + delegated %s) below the minimum %s (max(min stake, 1.5 × max job value))",
			rn.EffectiveStake(), rn.Stake, OrZero(rn.Delegated), need)
	}
	if !selfBondOK(rn.Stake, rn.EffectiveStake(), p.MinSelfBondBps) {
		return system.Failf(system.CodeInsufficientSelfBond, "InsufficientSelfBond: self-bond %s below %d bps of the effective stake %s", rn.Stake, p.MinSelfBondBps, rn.EffectiveStake())
	}
	if stake.Sign() > 0 {
		if err := x.MoveValue(from, types.RunnerRegistryAddress, stake); err != nil {
			return err
		}
	}
	if !bytes.Equal(rn.ResultKey, in.ResultKey) {
		// Keep the key history: challenges check signatures with the key
		// in force when the runner committed, so rotating the key cannot
		// disown an equivocation.
		x.State().Set(resultKeyHistKey(from, x.Env().Height), bytes.Clone(in.ResultKey))
	}
	rn.ResultKey = append(types.Bytes(nil), in.ResultKey...)
	rn.JobTypes, rn.Models, rn.Domains, rn.TEE = jobTypes, sortedUnique(in.Models), sortedUnique(in.Domains), in.TEE
	rn.Rates, rn.MaxConcurrentJobs, rn.MaxJobValue = rates, uint32(in.MaxConcurrentJobs), maxVal
	rn.LastHeartbeat, rn.Status = x.Env().Height, RunnerActive
	x.State().Set(RunnerKey(from), codec.MustMarshal(rn))
	if in.Endpoint != "" {
		x.State().Set(RunnerEndpointKey(from), []byte(in.Endpoint))
	} else {
		x.State().Delete(RunnerEndpointKey(from))
	}
	x.Emit(types.RunnerRegistryAddress, &RunnerRegisteredEvent{Runner: from, Stake: rn.Stake})
	return nil
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

func (x *Tx) ActiveRunner(from types.Address) (*Runner, error) {
	rn, err := ReadRunner(x.State(), from)
	if err != nil {
		return nil, err
	}
	if rn == nil || rn.Status != RunnerActive {
		return nil, system.Failf(system.CodeNotARunner, "NotARunner: %s is not an active runner", from)
	}
	return rn, nil
}

func (x *Tx) runnerHeartbeat(from types.Address) error {
	rn, err := x.ActiveRunner(from)
	if err != nil {
		return err
	}
	rn.LastHeartbeat = x.Env().Height
	x.State().Set(RunnerKey(from), codec.MustMarshal(rn))
	return nil
}

func (x *Tx) runnerDeregister(from types.Address) error {
	rn, err := x.ActiveRunner(from)
	if err != nil {
		return err
	}
	if rn.ActiveJobs > 0 {
		return system.Failf(system.CodeRunnerBusy, "RunnerBusy: %s still has %d active jobs", from, rn.ActiveJobs)
	}
	// The self-bond stays slashable through the unbonding period (a fault
	// may still be proven within a job's challenge window).
	release, err := x.AddTranche(from, from, rn.Stake, false)
	if err != nil {
		return err
	}
	unbonding := rn.Stake
	rn.Stake, rn.Status = new(big.Int), RunnerExited
	x.State().Set(RunnerKey(from), codec.MustMarshal(rn))
	x.Emit(types.RunnerRegistryAddress, &RunnerDeregisteredEvent{Runner: from, Unbonding: unbonding, Release: release})
	return nil
}

// adjustRunners adds delta to the active job count of each runner and, if
// penalty > 0, lowers its reputation (floored at 0).
func (x *Tx) AdjustRunners(rs []types.Address, delta int, penalty uint64) error {
	for _, a := range rs {
		rn, err := ReadRunner(x.State(), a)
		if err != nil {
			return err
		}
		if rn == nil {
			continue
		}
		switch {
		case delta > 0:
			rn.ActiveJobs += uint32(delta)
		case delta < 0 && rn.ActiveJobs > 0:
			rn.ActiveJobs--
		}
		rn.Reputation -= min(rn.Reputation, penalty)
		x.State().Set(RunnerKey(a), codec.MustMarshal(rn))
	}
	return nil
}

// payees builds the settlement payee of each runner (address order) with
// its registry economics: self-bond, delegations, commission.
func (x *Tx) Payee(a types.Address) (payment.Payee, error) {
	py := payment.Payee{Runner: a, SelfStake: new(big.Int)}
	rn, err := ReadRunner(x.State(), a)
	if err != nil || rn == nil {
		return py, err
	}
	py.SelfStake, py.Rates, py.CommissionBps = OrZero(rn.Stake), rn.Rates, rn.CommissionBps
	if rn.Status != RunnerActive {
		// A runner that left after doing the job: its self-bond is still
		// bonded in its own unbonding tranches, and counts as its stake.
		ts, err := ReadTranches(x.State(), a)
		if err != nil {
			return py, err
		}
		self := new(big.Int)
		for _, t := range ts {
			if t.Runner == a {
				self.Add(self, t.Amount)
			}
		}
		py.SelfStake = self
	}
	ds, err := ReadDelegations(x.State(), a)
	if err != nil {
		return py, err
	}
	for _, d := range ds {
		if d.Amount.Sign() > 0 {
			py.Delegations = append(py.Delegations, payment.Delegation{Delegator: d.Delegator, Amount: d.Amount})
		}
	}
	return py, nil
}
func resultKeyHistKey(runner types.Address, height uint64) []byte {
	return system.Key(types.RunnerRegistryAddress, []byte("rkey/"), runner[:], system.BE8(height))
}

// resultKeyAt is the result key runner had registered at height (the last
// key set at or before it).
func ResultKeyAt(r state.Reader, runner types.Address, height uint64) (ed25519.PublicKey, error) {
	var key ed25519.PublicKey
	pre := system.Key(types.RunnerRegistryAddress, []byte("rkey/"), runner[:])
	err := r.Scan(pre, func(k, v []byte) error {
		if system.FromBE8(k[len(pre):]) > height {
			return system.ErrStopScan
		}
		key = ed25519.PublicKey(bytes.Clone(v))
		return nil
	})
	if err != nil && !errors.Is(err, system.ErrStopScan) {
		return nil, err
	}
	if key == nil {
		// No history (a record written before the history existed): the
		// current key.
		rn, err := ReadRunner(r, runner)
		if err != nil || rn == nil {
			return nil, err
		}
		key = ed25519.PublicKey(bytes.Clone(rn.ResultKey))
	}
	return key, nil
}
