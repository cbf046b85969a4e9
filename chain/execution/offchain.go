package execution

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/payment"
	"github.com/cowboy-foundation/cowboy/chain/offchain/selection"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/entitlements"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// OffchainParams returns the off-chain compute parameters.
func (e *Executor) OffchainParams() runners.Params { return e.cfg.Offchain }

// Execution costs of the off-chain instructions beyond their intrinsic
// cost (submit_job also charges SubmitJobCycles, see offchain_host.go).
const (
	VerifyCycles       = 50_000 // submit_verified_result: decoding, mode evaluation
	VerifyRevealCycles = 20_000 // per reveal: commitment hash, Ed25519 verification, content rules
)

func offKey(addr types.Address, parts ...[]byte) []byte {
	return state.Key(state.PrefixSystem, append([][]byte{addr[:]}, parts...)...)
}

// JobKey is the state key of a job record (job.Job, canonical CBOR).
func JobKey(id types.Hash) []byte { return offKey(types.JobDispatcherAddress, []byte("job/"), id[:]) }

func jobSnapKey(id types.Hash) []byte {
	return offKey(types.JobDispatcherAddress, []byte("snap/"), id[:])
}

// jobDueKey indexes a live job by its deadline: the end-of-block sweep at
// height h reads only the bucket h−1 (a phase ends when At > Deadline, and
// every deadline is at or after the height that sets it).
func jobDueKey(deadline uint64, id types.Hash) []byte {
	return offKey(types.JobDispatcherAddress, []byte("due/"), system.BE8(deadline), id[:])
}
func jobRevealKey(id types.Hash, runner types.Address) []byte {
	return offKey(types.ResultVerifierAddress, []byte("reveal/"), id[:], runner[:])
}
func jobRevealPrefix(id types.Hash) []byte {
	return offKey(types.ResultVerifierAddress, []byte("reveal/"), id[:])
}
func jobDuePrefix(deadline uint64) []byte {
	return offKey(types.JobDispatcherAddress, []byte("due/"), system.BE8(deadline))
}
func jobNonceKey(a types.Address) []byte {
	return offKey(types.JobDispatcherAddress, []byte("nonce/"), a[:])
}

// JobResultKey is the state key of a job's verification record.
func JobResultKey(id types.Hash) []byte {
	return offKey(types.ResultVerifierAddress, []byte("result/"), id[:])
}

// JobPaymentsKey is the state key of a job's settlement record.
func JobPaymentsKey(id types.Hash) []byte {
	return offKey(types.JobDispatcherAddress, []byte("pay/"), id[:])
}

// JobResult is what the Result Verifier keeps of an accepted (or rejected)
// submission.
type JobResult struct {
	_              struct{}        `cbor:",toarray"`
	Accepted       bool            `json:"accepted"`
	Result         types.Bytes     `json:"result"`
	ResultHash     types.Hash      `json:"result_hash"`
	Representative types.Address   `json:"representative"`
	Submitter      types.Address   `json:"submitter"`
	Reveals        []verify.Reveal `json:"reveals"`
	Height         uint64          `json:"height"`
}

// JobPayment is one settled transfer out of the escrow.
type JobPayment struct {
	_      struct{}      `cbor:",toarray"`
	Kind   string        `json:"kind"` // burn, treasury, runner, delegator, refund
	To     types.Address `json:"to"`
	Amount *big.Int      `json:"amount"`
}

// JobPayments is a job's settlement.
type JobPayments struct {
	_         struct{}     `cbor:",toarray"`
	Outcome   uint8        `json:"outcome"` // payment.Outcome
	Payment   *big.Int     `json:"payment"`
	Refund    *big.Int     `json:"refund"`
	Transfers []JobPayment `json:"transfers"`
	Height    uint64       `json:"height"`
}

type snapRecord struct {
	_       struct{} `cbor:",toarray"`
	Entries []snapEntry
}

type snapEntry struct {
	_          struct{} `cbor:",toarray"`
	Address    types.Address
	Stake      *big.Int
	Reputation uint64
}

// jobCandidates are the active, stake-eligible runners whose max job value
// covers escrow, as selection candidates in address order.
func jobCandidates(r state.Reader, p *runners.Params, escrow *big.Int) ([]selection.Candidate, error) {
	rs, err := runners.ListRunners(r)
	if err != nil {
		return nil, err
	}
	var out []selection.Candidate
	for _, rn := range rs {
		if rn.Status == runners.RunnerActive && p.StakeEligible(rn) && rn.MaxJobValueOrStake().Cmp(escrow) >= 0 {
			out = append(out, rn.Candidate())
		}
	}
	return out, nil
}

// ReadJob decodes a job record (nil if absent).
func ReadJob(r state.Reader, id types.Hash) (*job.Job, error) {
	b, ok, err := r.Get(JobKey(id))
	if err != nil || !ok {
		return nil, err
	}
	return job.DecodeJob(b)
}

// ReadJobResult decodes a job's verification record (nil if absent).
func ReadJobResult(r state.Reader, id types.Hash) (*JobResult, error) {
	return system.Get[JobResult](r, JobResultKey(id), "decode job result %s", id)
}

// ReadJobPayments decodes a job's settlement record (nil if absent).
func ReadJobPayments(r state.Reader, id types.Hash) (*JobPayments, error) {
	return system.Get[JobPayments](r, JobPaymentsKey(id), "decode job payments %s", id)
}

// submitJob is the Job Dispatcher's submit_job for submitter (a
// transaction's sender or an actor through runtime.submit_job).
func (x *txExec) submitJob(submitter types.Address, spec *job.JobSpec) (types.Hash, error) {
	// The job's callback is prepaid by the submission.
	if err := x.charge(x.ex.cfg.Offchain.CallbackCycles, x.ex.cfg.Offchain.CallbackCells); err != nil {
		return types.Hash{}, err
	}
	spec.Submitter, spec.SubmittedAt, spec.JobID = submitter, x.env.Height, types.Hash{}
	if err := spec.Validate(); err != nil {
		return types.Hash{}, failf(system.CodeInvalidJobSpec, "InvalidJobSpec: %v", err)
	}
	if err := verify.ValidateSchemas(spec); err != nil {
		return types.Hash{}, failf(system.CodeInvalidJobSpec, "InvalidJobSpec: %v", err)
	}
	var nonce uint64
	if b, ok, err := x.o.Get(jobNonceKey(submitter)); err != nil {
		return types.Hash{}, err
	} else if ok && len(b) == 8 {
		nonce = binary.BigEndian.Uint64(b)
	}
	id, err := spec.DeriveID(nonce)
	if err != nil {
		return types.Hash{}, failf(system.CodeInvalidJobSpec, "InvalidJobSpec: %v", err)
	}
	spec.JobID = id
	x.o.Set(jobNonceKey(submitter), system.BE8(nonce+1))
	if ex, err := ReadJob(x.o, id); err != nil {
		return types.Hash{}, err
	} else if ex != nil {
		return types.Hash{}, failf(system.CodeJobExists, "JobExists: job %s already exists", id)
	}
	escrow := spec.Escrow()
	if err := x.moveValue(submitter, types.JobDispatcherAddress, escrow); err != nil {
		return types.Hash{}, failf(system.CodeInsufficientBalance, "InsufficientBalance: escrow %s: %v", escrow, err)
	}
	all, err := jobCandidates(x.o, &x.ex.cfg.Offchain, escrow)
	if err != nil {
		return types.Hash{}, err
	}
	if spec.TEERequired { // declared TEE support counts only with an attestation in force (tee.go)
		if all, err = x.teeFilter(all); err != nil {
			return types.Hash{}, err
		}
	}
	cands, _, err := selection.FilterCandidates(all, selection.RequirementsFromSpec(spec, x.ex.cfg.Offchain.HeartbeatTimeout), poolChecker{x: x, reg: entitlements.Writable(x.o)})
	if err != nil {
		return types.Hash{}, fmt.Errorf("filter candidates: %w", err)
	}
	snap := selection.Snapshot(cands)
	root, err := selection.CandidateRoot(snap)
	if err != nil {
		return types.Hash{}, fmt.Errorf("candidate root: %w", err)
	}
	rec := snapRecord{Entries: make([]snapEntry, len(snap))}
	for i, e := range snap {
		rec.Entries[i] = snapEntry{Address: e.Address, Stake: e.Stake, Reputation: e.Reputation}
	}
	x.o.Set(jobSnapKey(id), codec.MustMarshal(&rec))
	seed := selection.Seed(x.env.Seed, id, spec.SubmittedAt)
	j := job.New(*spec, seed, root)
	x.emit(types.JobDispatcherAddress, &jobs.JobSubmittedEvent{JobID: id, Submitter: submitter, Escrow: escrow, Candidates: uint64(len(snap)), CandidateRoot: root})
	if err := x.selectRunners(&j); err != nil {
		return types.Hash{}, err
	}
	return id, nil
}

func (x *txExec) readSnapshot(id types.Hash) ([]selection.SnapshotEntry, error) {
	return ReadJobSnapshot(x.o, id)
}

// ReadJobSnapshot returns a job's candidate snapshot (address order): the
// runners that passed the filters at submission, with the effective stake
// and reputation selection used.
func ReadJobSnapshot(r state.Reader, id types.Hash) ([]selection.SnapshotEntry, error) {
	b, ok, err := r.Get(jobSnapKey(id))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("job %s: snapshot missing", id)
	}
	var rec snapRecord
	if err := codec.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("job %s: decode snapshot: %w", id, err)
	}
	out := make([]selection.SnapshotEntry, len(rec.Entries))
	for i, e := range rec.Entries {
		out[i] = selection.SnapshotEntry{Address: e.Address, Stake: e.Stake, Reputation: e.Reputation}
	}
	return out, nil
}

// selectRunners runs the selection attempt j.Retry and steps Assigned or
// NoCandidates, then saves the job.
func (x *txExec) selectRunners(j *job.Job) error {
	snap, err := x.readSnapshot(j.Spec.JobID)
	if err != nil {
		return err
	}
	a, err := selection.Assign(snap, j.Seed, j.Retry, j.Excluded, int(j.Spec.Verification.Runners))
	if errors.Is(err, selection.ErrNotEnoughCandidates) {
		return x.step(j, job.NoCandidates{At: x.env.Height})
	}
	if err != nil {
		return fmt.Errorf("job %s: select: %w", j.Spec.JobID, err)
	}
	if err := x.step(j, job.Assigned{At: x.env.Height, Runners: a.Runners, Aggregator: a.Aggregator}); err != nil {
		return err
	}
	if err := x.reg().AdjustRunners(a.Runners, 1, 0); err != nil {
		return err
	}
	x.emit(types.JobDispatcherAddress, &jobs.JobAssignedEvent{JobID: j.Spec.JobID, Runners: a.Runners, Aggregator: a.Aggregator, Retry: uint64(j.Retry), Deadline: j.Deadline})
	return nil
}

// step applies ev to *j, saves it and carries out the effects.
func (x *txExec) step(j *job.Job, ev job.Event) error {
	prev := *j
	n, fx, err := job.Step(*j, ev, x.ex.cfg.Offchain.Job)
	if err != nil {
		return failf(system.CodeJobTransition, "JobTransition: %v", err)
	}
	*j = n
	if err := x.saveJob(j); err != nil {
		return err
	}
	if n.State == job.StateFailed && prev.State != job.StateFailed {
		x.emit(types.JobDispatcherAddress, &jobs.JobFailedEvent{JobID: n.Spec.JobID, Reason: uint64(n.Fail), Retry: uint64(n.Retry)})
	}
	// Runners leave a job when it stops being theirs: a re-selection frees
	// the previous committee, verification or failure frees all of it, and
	// runners dropped at the commit deadline leave on their own.
	if working(prev.State) {
		var freed []types.Address
		for _, a := range prev.Runners {
			if !working(n.State) || !slices.Contains(n.Runners, a) {
				freed = append(freed, a)
			}
		}
		if err := x.reg().AdjustRunners(freed, -1, 0); err != nil {
			return err
		}
	}
	for _, f := range fx {
		if err := x.effect(j, f); err != nil {
			return err
		}
	}
	return nil
}

// working reports whether a job in state s occupies its committee.
func working(s job.State) bool {
	return s == job.StateAssigned || s == job.StateCommitted || s == job.StateRevealed
}

func (x *txExec) saveJob(j *job.Job) error {
	id := j.Spec.JobID
	old, err := ReadJob(x.o, id)
	if err != nil {
		return err
	}
	if old != nil && !old.State.Terminal() {
		x.o.Delete(jobDueKey(old.Deadline, id))
	}
	b, err := j.Encode()
	if err != nil {
		return err
	}
	x.o.Set(JobKey(id), b)
	if !j.State.Terminal() {
		x.o.Set(jobDueKey(j.Deadline, id), []byte{1})
	}
	return nil
}

func (x *txExec) effect(j *job.Job, f job.Effect) error {
	switch f.Kind {
	case job.EffectSelect:
		return x.selectRunners(j)
	case job.EffectPenalize:
		return x.reg().AdjustRunners(f.Runners, 0, f.Amount)
	case job.EffectCallback:
		x.queueCallback(j)
	case job.EffectSettle:
		return x.settle(j, payment.Success)
	case job.EffectRefund:
		return x.settle(j, payment.RunnerFault)
	case job.EffectVerify:
		return x.verifyReveals(j)
	case job.EffectSlash:
		// Carried out by challengeResult, which knows the challenger the
		// slashed stake is paid to.
	}
	return nil
}

// settle pays out a job's escrow from the dispatcher account.
func (x *txExec) settle(j *job.Job, outcome payment.Outcome) error {
	s := &j.Spec
	in := payment.Input{Outcome: outcome, MaxPrice: s.MaxPrice, Tip: s.Tip, Bounds: s.Bounds,
		Submitter: s.Submitter, Treasury: types.TreasuryAddress, Aggregator: j.Aggregator}
	if len(j.Revealed) > 0 {
		// The aggregator timed out and the committee revealed one by one:
		// no bonus for aggregation that did not happen.
		in.Aggregator = types.Address{}
	}
	reports, err := x.reports(j)
	if err != nil {
		return err
	}
	switch outcome {
	case payment.Success:
		for _, a := range j.Agreed {
			py, err := x.reg().Payee(a)
			if err != nil {
				return err
			}
			py.Usage = s.Bounds.AsUsage() // no report: the bounds are priced
			if r, ok := reports[a]; ok {
				py.Usage = r.Usage
				if payment.NeedsReview(r.Usage, &s.ResultSchema) {
					// Spec 002: reported usage above 2 × expected triggers
					// review; the event lets watchers (and challengers) find it.
					x.emit(types.JobDispatcherAddress, &jobs.UsageAnomalyEvent{JobID: s.JobID, Runner: a, WallTimeMs: r.Usage.WallTimeMs, ExpectedMs: s.ResultSchema.ExpectedExecutionMs})
				}
			}
			in.Payees = append(in.Payees, py)
		}
	case payment.RunnerFault:
		if j.Fail == job.FailVerification {
			if err := x.faultRow(j, reports, &in); err != nil {
				return err
			}
			outcome = in.Outcome
		}
	}
	st, err := payment.Settle(in, x.ex.cfg.Offchain.Payment)
	if err != nil && outcome != payment.RunnerFault {
		// Unpriceable payees (not expected: rates are range-checked at
		// registration) fall back to a full refund rather than halt the chain.
		in.Outcome, in.Payees = payment.RunnerFault, nil
		outcome = payment.RunnerFault
		st, err = payment.Settle(in, x.ex.cfg.Offchain.Payment)
	}
	if err != nil {
		return fmt.Errorf("job %s: settle: %w", s.JobID, err)
	}
	rec := JobPayments{Outcome: uint8(outcome), Payment: st.Payment, Refund: st.Refund, Height: x.env.Height}
	for _, t := range st.Transfers {
		if err := x.o.SubBalance(types.JobDispatcherAddress, t.Amount); err != nil {
			return fmt.Errorf("job %s: escrow: %w", s.JobID, err)
		}
		kind := "burn"
		switch t.Kind {
		case payment.KindBurn:
			if err := x.o.AddBigRecord(state.RecordBurned, t.Amount); err != nil {
				return err
			}
		default:
			if err := x.o.AddBalance(t.To, t.Amount); err != nil {
				return err
			}
			kind = map[payment.Kind]string{payment.KindTreasury: "treasury", payment.KindRunner: "runner",
				payment.KindDelegator: "delegator", payment.KindRefund: "refund"}[t.Kind]
		}
		rec.Transfers = append(rec.Transfers, JobPayment{Kind: kind, To: t.To, Amount: t.Amount})
	}
	if outcome == payment.Success {
		// A paid job ends a runner's run of consecutive slashes.
		for _, a := range j.Agreed {
			if rn, err := runners.ReadRunner(x.o, a); err != nil {
				return err
			} else if rn != nil && rn.ConsecutiveSlashes > 0 {
				rn.ConsecutiveSlashes = 0
				x.reg().SaveRunner(rn)
			}
		}
	}
	x.o.Set(JobPaymentsKey(s.JobID), codec.MustMarshal(&rec))
	x.emit(types.JobDispatcherAddress, &jobs.JobSettledEvent{JobID: s.JobID, Outcome: uint64(outcome), Payment: st.Payment, Refund: st.Refund})
	return nil
}

// reports are the usage reports signed into a job's stored reveals, by runner.
func (x *txExec) reports(j *job.Job) (map[types.Address]*verify.Report, error) {
	jr, err := ReadJobResult(x.o, j.Spec.JobID)
	if err != nil || jr == nil {
		return nil, err
	}
	out := map[types.Address]*verify.Report{}
	for i := range jr.Reveals {
		if r := jr.Reveals[i].Report; r != nil {
			out[jr.Reveals[i].Runner] = r
		}
	}
	return out, nil
}

// faultRow picks the payment row of a job that produced no accepted result
// from its committee's signed reports: if at least the job's quorum of
// runners reported the same fault (ImpossibleJob, ActorFault or
// ExternalFault; the most reported wins, ties to the lower code), they are
// paid that row — usage from their reports, progress the lowest they
// reported, and for ActorFault the minimum fee Σ of their base rates.
// Otherwise the row stays RunnerFault (full refund).
func (x *txExec) faultRow(j *job.Job, reports map[types.Address]*verify.Report, in *payment.Input) error {
	count := map[uint8]int{}
	for _, r := range reports {
		if r.Fault != verify.FaultNone {
			count[r.Fault]++
		}
	}
	best, n := uint8(0), 0
	for _, f := range []uint8{verify.FaultImpossibleJob, verify.FaultActorFault, verify.FaultExternalFault} {
		if count[f] > n {
			best, n = f, count[f]
		}
	}
	if best == 0 || n < j.Spec.Verification.Quorum() {
		return nil
	}
	var committee []types.Address
	for a, r := range reports {
		if r.Fault == best {
			committee = append(committee, a)
		}
	}
	slices.SortFunc(committee, func(a, b types.Address) int { return bytes.Compare(a[:], b[:]) })
	progress := uint16(10_000)
	minFee := new(big.Int)
	for _, a := range committee {
		py, err := x.reg().Payee(a)
		if err != nil {
			return err
		}
		py.Usage = reports[a].Usage
		progress = min(progress, reports[a].ProgressBps)
		minFee.Add(minFee, runners.OrZero(py.Rates.Base))
		in.Payees = append(in.Payees, py)
	}
	in.Outcome = map[uint8]payment.Outcome{verify.FaultImpossibleJob: payment.ImpossibleJob,
		verify.FaultActorFault: payment.ActorFault, verify.FaultExternalFault: payment.ExternalFault}[best]
	in.ProgressBps, in.MinFee = progress, minFee
	return nil
}

func (x *txExec) loadJob(id types.Hash) (*job.Job, error) {
	j, err := ReadJob(x.o, id)
	if err != nil {
		return nil, err
	}
	if j == nil {
		return nil, failf(system.CodeNoSuchJob, "NoSuchJob: job %s does not exist", id)
	}
	return j, nil
}

func (x *txExec) commitResult(from types.Address, in *types.CommitResult) error {
	j, err := x.loadJob(in.JobID)
	if err != nil {
		return err
	}
	if err := x.step(j, job.Committed{At: x.env.Height, Runner: from, Hash: in.Commitment}); err != nil {
		return err
	}
	x.emit(types.JobDispatcherAddress, &jobs.JobCommittedEvent{JobID: in.JobID, Runner: from, Commitment: in.Commitment})
	return nil
}

func (x *txExec) submitResult(from types.Address, in *types.SubmitResult) error {
	j, err := x.loadJob(in.JobID)
	if err != nil {
		return err
	}
	if j.State != job.StateCommitted && j.State != job.StateRevealed {
		return failf(system.CodeJobTransition, "JobTransition: job %s is %s, not awaiting a result", in.JobID, j.State)
	}
	if j.State == job.StateCommitted && from != j.Aggregator {
		return failf(system.CodeNotAggregator, "NotAggregator: only %s may submit the result of job %s", j.Aggregator, in.JobID)
	}
	sub, err := verify.DecodeSubmission(in.Submission)
	if err != nil {
		return failf(system.CodeInvalidSubmission, "InvalidSubmission: %v", err)
	}
	if err := x.charge(VerifyCycles+uint64(len(sub.Reveals))*VerifyRevealCycles, 0); err != nil {
		return err
	}
	keys, err := x.resultKeys(j)
	if err != nil {
		return err
	}
	out, err := verify.CheckSubmission(&j.Spec, j.Commitments, keys, sub)
	switch {
	case errors.Is(err, verify.ErrNoResult):
		x.o.Set(JobResultKey(in.JobID), codec.MustMarshal(&JobResult{Submitter: from, Reveals: sub.Reveals, Height: x.env.Height}))
		if err := x.step(j, job.Rejected{At: x.env.Height, Dissented: out.Dissented}); err != nil {
			return err
		}
		x.emit(types.ResultVerifierAddress, &jobs.JobRejectedEvent{JobID: in.JobID, Dissented: out.Dissented})
		return nil
	case err != nil:
		return failf(system.CodeInvalidSubmission, "InvalidSubmission: %v", err)
	}
	if missing, err := x.missingResultEvidence(j, sub.Reveals, out.Agreed); err != nil || missing != "" {
		if err != nil {
			return err
		}
		return failf(system.CodeInvalidSubmission, "InvalidSubmission: %s", missing)
	}
	x.o.Set(JobResultKey(in.JobID), codec.MustMarshal(&JobResult{Accepted: true, Result: out.Result, ResultHash: out.ResultHash,
		Representative: out.Representative, Submitter: from, Reveals: sub.Reveals, Height: x.env.Height}))
	if err := x.step(j, job.Verified{At: x.env.Height, Submitter: from, ResultHash: out.ResultHash, Agreed: out.Agreed, Dissented: out.Dissented}); err != nil {
		return err
	}
	x.emit(types.ResultVerifierAddress, &jobs.JobVerifiedEvent{JobID: in.JobID, ResultHash: out.ResultHash, Agreed: out.Agreed, Dissented: out.Dissented, Aggregator: &from})
	return nil
}

// checkOffchainTx is CheckTx for the off-chain compute instructions: each
// goes to its system actor, and only runner_register carries value.
func checkOffchainTx(tx *types.Tx, in types.Instruction) error { return runners.Check(tx, in) }

func (x *txExec) dispatchOffchain(from types.Address, in types.Instruction) ([]byte, error) {
	switch v := in.(type) {
	case *types.SubmitJob:
		spec, err := job.DecodeJobSpec(v.Spec)
		if err != nil {
			return nil, failf(system.CodeInvalidJobSpec, "InvalidJobSpec: %v", err)
		}
		if err := x.charge(SubmitJobCycles, uint64(len(v.Spec))); err != nil {
			return nil, err
		}
		id, err := x.submitJob(from, spec)
		if err != nil {
			return nil, err
		}
		return codec.MustMarshal(id[:]), nil
	case *types.CommitResult:
		return nil, x.commitResult(from, v)
	case *types.SubmitResult:
		return nil, x.submitResult(from, v)
	case *types.RevealResult:
		return nil, x.revealResult(from, v)
	case *types.ChallengeResult:
		return nil, x.challengeResult(from, v)
	}
	return nil, fmt.Errorf("%w: %s", types.ErrUnsupported, in.InstructionKind())
}

// resultKeys are the registered Ed25519 result keys of a job's committers.
// Each is the key registered when the runner committed (the key history,
// resultKeyAt), so a later key rotation changes nothing for the job.
func (x *txExec) resultKeys(j *job.Job) (map[types.Address]ed25519.PublicKey, error) {
	keys := map[types.Address]ed25519.PublicKey{}
	for _, c := range j.Commitments {
		k, err := runners.ResultKeyAt(x.o, c.Runner, c.Block)
		if err != nil {
			return nil, err
		}
		if len(k) == ed25519.PublicKeySize {
			keys[c.Runner] = k
		}
	}
	return keys, nil
}

// revealResult is an individual reveal (§8 fallback after the aggregator
// timeout): checked against the runner's commitment and result key, stored,
// and once every committer revealed (or at the reveal deadline) the stored
// reveals are verified.
func (x *txExec) revealResult(from types.Address, in *types.RevealResult) error {
	j, err := x.loadJob(in.JobID)
	if err != nil {
		return err
	}
	r, err := verify.DecodeReveal(in.Reveal)
	if err != nil {
		return failf(system.CodeInvalidReveal, "InvalidReveal: %v", err)
	}
	if r.Runner != from {
		return failf(system.CodeInvalidReveal, "InvalidReveal: a runner reveals its own result (reveal names %s)", r.Runner)
	}
	if err := x.charge(VerifyRevealCycles, uint64(len(in.Reveal))); err != nil {
		return err
	}
	i := slices.IndexFunc(j.Commitments, func(c job.Commitment) bool { return c.Runner == from })
	if i < 0 {
		return failf(system.CodeInvalidReveal, "InvalidReveal: %s has no commitment for job %s", from, in.JobID)
	}
	keys, err := x.resultKeys(j)
	if err != nil {
		return err
	}
	if err := verify.CheckReveal(in.JobID, r, j.Commitments[i].Hash, keys[from]); err != nil {
		return failf(system.CodeInvalidReveal, "InvalidReveal: %v", err)
	}
	if missing, err := x.missingResultEvidence(j, []verify.Reveal{*r}, []types.Address{from}); err != nil || missing != "" {
		if err != nil {
			return err
		}
		return failf(system.CodeInvalidReveal, "InvalidReveal: %s", missing)
	}
	x.o.Set(jobRevealKey(in.JobID, from), bytes.Clone(in.Reveal))
	x.emit(types.ResultVerifierAddress, &jobs.JobRevealedEvent{JobID: in.JobID, Runner: from})
	if err := x.step(j, job.Revealed{At: x.env.Height, Runner: from}); err != nil {
		return err
	}
	return nil
}

// missingResultEvidence is what the Result Verifier demands of a
// Deterministic job: each runner in counted has per-job TEE evidence
// recorded (tee_attest_result, in this or an earlier transaction) binding
// the job, that runner and the Keccak256 of the result it revealed in
// reveals. It returns why the first runner without falls short ("" when
// none does, and always for other modes); err is a state read failure.
// Deterministic jobs are tee_required (spec validation), so every
// committer was attested at selection and can produce the evidence before
// its result leaves it.
func (x *txExec) missingResultEvidence(j *job.Job, reveals []verify.Reveal, counted []types.Address) (string, error) {
	if j.Spec.Verification.Mode != job.ModeDeterministic {
		return "", nil
	}
	for _, a := range counted {
		i := slices.IndexFunc(reveals, func(r verify.Reveal) bool { return r.Runner == a })
		if i < 0 {
			return fmt.Sprintf("no reveal from %s", a), nil
		}
		h := types.Keccak256(reveals[i].Result)
		ok, err := tee.ResultAttested(x.o, j.Spec.JobID, a, h)
		if err != nil {
			return "", fmt.Errorf("job %s: result evidence of %s: %w", j.Spec.JobID, a, err)
		}
		if !ok {
			return fmt.Sprintf("%s has no TEE evidence (tee_attest_result) for result %s of Deterministic job %s", a, h, j.Spec.JobID), nil
		}
	}
	return "", nil
}

// storedReveals are a job's individual reveals in runner order.
func (x *txExec) storedReveals(id types.Hash) ([]verify.Reveal, error) {
	var reveals []verify.Reveal
	if err := x.o.Scan(jobRevealPrefix(id), func(_, v []byte) error {
		r, err := verify.DecodeReveal(v)
		if err != nil {
			return err
		}
		reveals = append(reveals, *r)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("job %s: reveals: %w", id, err)
	}
	return reveals, nil
}

// verifyReveals runs verification over a job's stored individual reveals
// and steps Verified or Rejected.
func (x *txExec) verifyReveals(j *job.Job) error {
	id := j.Spec.JobID
	reveals, err := x.storedReveals(id)
	if err != nil {
		return err
	}
	keys, err := x.resultKeys(j)
	if err != nil {
		return err
	}
	// The stored reveals were each checked on arrival; an error here (which
	// would mean a key changed since) rejects the job rather than halt the chain.
	out, err := verify.Verify(verify.Input{Spec: &j.Spec, Commitments: j.Commitments, Keys: keys, Reveals: reveals})
	if err != nil || !out.Accepted || len(out.Agreed) < j.Spec.Verification.Quorum() {
		x.o.Set(JobResultKey(id), codec.MustMarshal(&JobResult{Reveals: reveals, Height: x.env.Height}))
		x.emit(types.ResultVerifierAddress, &jobs.JobRejectedEvent{JobID: id, Dissented: out.Dissented})
		return x.step(j, job.Rejected{At: x.env.Height, Dissented: out.Dissented})
	}
	x.o.Set(JobResultKey(id), codec.MustMarshal(&JobResult{Accepted: true, Result: out.Result, ResultHash: out.ResultHash,
		Representative: out.Representative, Submitter: out.Representative, Reveals: reveals, Height: x.env.Height}))
	x.emit(types.ResultVerifierAddress, &jobs.JobVerifiedEvent{JobID: id, ResultHash: out.ResultHash, Agreed: out.Agreed, Dissented: out.Dissented})
	return x.step(j, job.Verified{At: x.env.Height, Submitter: out.Representative, ResultHash: out.ResultHash, Agreed: out.Agreed, Dissented: out.Dissented})
}

// reg is x working on the Runner Registry.
func (x *txExec) reg() *runners.Tx { return x.ex.runners.With(x) }
