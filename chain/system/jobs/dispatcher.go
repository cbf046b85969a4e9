package jobs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/payment"
	"github.com/cowboy-foundation/cowboy/chain/offchain/selection"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/entitlements"
	"github.com/cowboy-foundation/cowboy/chain/system/models"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Execution costs of the off-chain instructions beyond their intrinsic
// cost (submit_job also charges SubmitJobCycles, see offchain_host.go).
const (
	// SubmitJobCycles is the cost of submit_job (the instruction or the
	// actor host call); it also charges one cell per spec byte and the
	// prepaid callback.
	SubmitJobCycles    = 20_000
	VerifyCycles       = 50_000 // submit_verified_result: decoding, mode evaluation
	VerifyRevealCycles = 20_000 // per reveal: commitment hash, Ed25519 verification, content rules
)

// JobKey is the state key of a job record (job.Job, canonical CBOR).
func JobKey(id types.Hash) []byte {
	return system.Key(types.JobDispatcherAddress, []byte("job/"), id[:])
}

func jobSnapKey(id types.Hash) []byte {
	return system.Key(types.JobDispatcherAddress, []byte("snap/"), id[:])
}

// jobDueKey indexes a live job by its deadline: the end-of-block sweep at
// height h reads only the bucket h−1 (a phase ends when At > Deadline, and
// every deadline is at or after the height that sets it).
func jobDueKey(deadline uint64, id types.Hash) []byte {
	return system.Key(types.JobDispatcherAddress, []byte("due/"), system.BE8(deadline), id[:])
}
func jobRevealKey(id types.Hash, runner types.Address) []byte {
	return system.Key(types.ResultVerifierAddress, []byte("reveal/"), id[:], runner[:])
}
func jobRevealPrefix(id types.Hash) []byte {
	return system.Key(types.ResultVerifierAddress, []byte("reveal/"), id[:])
}
func DuePrefix(deadline uint64) []byte {
	return system.Key(types.JobDispatcherAddress, []byte("due/"), system.BE8(deadline))
}
func jobNonceKey(a types.Address) []byte {
	return system.Key(types.JobDispatcherAddress, []byte("nonce/"), a[:])
}

// JobResultKey is the state key of a job's verification record.
func JobResultKey(id types.Hash) []byte {
	return system.Key(types.ResultVerifierAddress, []byte("result/"), id[:])
}

// JobPaymentsKey is the state key of a job's settlement record.
func JobPaymentsKey(id types.Hash) []byte {
	return system.Key(types.JobDispatcherAddress, []byte("pay/"), id[:])
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
// covers escrow and, for a job naming a registry model, that declare it,
// as selection candidates in address order.
func jobCandidates(r state.Reader, p *runners.Params, escrow *big.Int, model types.Hash) ([]selection.Candidate, error) {
	rs, err := runners.ListRunners(r)
	if err != nil {
		return nil, err
	}
	var out []selection.Candidate
	for _, rn := range rs {
		if model != (types.Hash{}) && !slices.Contains(rn.Models, model.String()) {
			continue
		}
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
func (x *Tx) SubmitJob(submitter types.Address, spec *job.JobSpec) (types.Hash, error) {
	// The job's callback is prepaid by the submission.
	if err := x.Charge(x.m.p.CallbackCycles, x.m.p.CallbackCells); err != nil {
		return types.Hash{}, err
	}
	spec.Submitter, spec.SubmittedAt, spec.JobID = submitter, x.Env().Height, types.Hash{}
	if err := spec.Validate(); err != nil {
		return types.Hash{}, system.Failf(system.CodeInvalidJobSpec, "InvalidJobSpec: %v", err)
	}
	if err := verify.ValidateSchemas(spec); err != nil {
		return types.Hash{}, system.Failf(system.CodeInvalidJobSpec, "InvalidJobSpec: %v", err)
	}
	if spec.ModelID != (types.Hash{}) { // the model must be registered, active and not banned (spec 002 §5.1)
		if err := models.Usable(x.State(), spec.ModelID); err != nil {
			return types.Hash{}, err
		}
	}
	var nonce uint64
	if b, ok, err := x.State().Get(jobNonceKey(submitter)); err != nil {
		return types.Hash{}, err
	} else if ok && len(b) == 8 {
		nonce = binary.BigEndian.Uint64(b)
	}
	id, err := spec.DeriveID(nonce)
	if err != nil {
		return types.Hash{}, system.Failf(system.CodeInvalidJobSpec, "InvalidJobSpec: %v", err)
	}
	spec.JobID = id
	x.State().Set(jobNonceKey(submitter), system.BE8(nonce+1))
	if ex, err := ReadJob(x.State(), id); err != nil {
		return types.Hash{}, err
	} else if ex != nil {
		return types.Hash{}, system.Failf(system.CodeJobExists, "JobExists: job %s already exists", id)
	}
	escrow := spec.Escrow()
	if err := x.MoveValue(submitter, types.JobDispatcherAddress, escrow); err != nil {
		return types.Hash{}, system.Failf(system.CodeInsufficientBalance, "InsufficientBalance: escrow %s: %v", escrow, err)
	}
	rp, err := x.m.runners.Governed(x.State())
	if err != nil {
		return types.Hash{}, err
	}
	all, err := jobCandidates(x.State(), rp, escrow, spec.ModelID)
	if err != nil {
		return types.Hash{}, err
	}
	if spec.TEERequired { // declared TEE support counts only with an attestation in force (tee.go)
		if all, err = x.teeFilter(all); err != nil {
			return types.Hash{}, err
		}
	}
	hb, err := x.m.heartbeatTimeout(x.State())
	if err != nil {
		return types.Hash{}, err
	}
	cands, _, err := selection.FilterCandidates(all, selection.RequirementsFromSpec(spec, hb), poolChecker{x: x, reg: entitlements.Writable(x.State())})
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
	x.State().Set(jobSnapKey(id), codec.MustMarshal(&rec))
	seed := selection.Seed(x.Env().Seed, id, spec.SubmittedAt)
	j := job.New(*spec, seed, root)
	x.Emit(types.JobDispatcherAddress, &JobSubmittedEvent{JobID: id, Submitter: submitter, Escrow: escrow, Candidates: uint64(len(snap)), CandidateRoot: root})
	if err := x.selectRunners(&j); err != nil {
		return types.Hash{}, err
	}
	return id, nil
}

func (x *Tx) readSnapshot(id types.Hash) ([]selection.SnapshotEntry, error) {
	return ReadJobSnapshot(x.State(), id)
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
func (x *Tx) selectRunners(j *job.Job) error {
	snap, err := x.readSnapshot(j.Spec.JobID)
	if err != nil {
		return err
	}
	a, err := selection.Assign(snap, j.Seed, j.Retry, j.Excluded, int(j.Spec.Verification.Runners))
	if errors.Is(err, selection.ErrNotEnoughCandidates) {
		return x.step(j, job.NoCandidates{At: x.Env().Height})
	}
	if err != nil {
		return fmt.Errorf("job %s: select: %w", j.Spec.JobID, err)
	}
	if err := x.step(j, job.Assigned{At: x.Env().Height, Runners: a.Runners, Aggregator: a.Aggregator}); err != nil {
		return err
	}
	if err := x.m.runners.With(x).AdjustRunners(a.Runners, 1, 0); err != nil {
		return err
	}
	x.Emit(types.JobDispatcherAddress, &JobAssignedEvent{JobID: j.Spec.JobID, Runners: a.Runners, Aggregator: a.Aggregator, Retry: uint64(j.Retry), Deadline: j.Deadline})
	return nil
}

// step applies ev to *j, saves it and carries out the effects.
func (x *Tx) step(j *job.Job, ev job.Event) error {
	prev := *j
	n, fx, err := job.Step(*j, ev, x.m.p.Job)
	if err != nil {
		return system.Failf(system.CodeJobTransition, "JobTransition: %v", err)
	}
	*j = n
	if err := x.saveJob(j); err != nil {
		return err
	}
	if n.State == job.StateFailed && prev.State != job.StateFailed {
		x.Emit(types.JobDispatcherAddress, &JobFailedEvent{JobID: n.Spec.JobID, Reason: uint64(n.Fail), Retry: uint64(n.Retry)})
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
		if err := x.m.runners.With(x).AdjustRunners(freed, -1, 0); err != nil {
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

func (x *Tx) saveJob(j *job.Job) error {
	id := j.Spec.JobID
	old, err := ReadJob(x.State(), id)
	if err != nil {
		return err
	}
	if old != nil && !old.State.Terminal() {
		x.State().Delete(jobDueKey(old.Deadline, id))
	}
	b, err := j.Encode()
	if err != nil {
		return err
	}
	x.State().Set(JobKey(id), b)
	if !j.State.Terminal() {
		x.State().Set(jobDueKey(j.Deadline, id), []byte{1})
	}
	return nil
}

func (x *Tx) effect(j *job.Job, f job.Effect) error {
	switch f.Kind {
	case job.EffectSelect:
		return x.selectRunners(j)
	case job.EffectPenalize:
		return x.m.runners.With(x).AdjustRunners(f.Runners, 0, f.Amount)
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
func (x *Tx) settle(j *job.Job, outcome payment.Outcome) error {
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
			py, err := x.m.runners.With(x).Payee(a)
			if err != nil {
				return err
			}
			py.Usage = s.Bounds.AsUsage() // no report: the bounds are priced
			if r, ok := reports[a]; ok {
				py.Usage = r.Usage
				if payment.NeedsReview(r.Usage, &s.ResultSchema) {
					// Spec 002: reported usage above 2 × expected triggers
					// review; the event lets watchers (and challengers) find it.
					x.Emit(types.JobDispatcherAddress, &UsageAnomalyEvent{JobID: s.JobID, Runner: a, WallTimeMs: r.Usage.WallTimeMs, ExpectedMs: s.ResultSchema.ExpectedExecutionMs})
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
	st, err := payment.Settle(in, x.m.p.Payment)
	if err != nil && outcome != payment.RunnerFault {
		// Unpriceable payees (not expected: rates are range-checked at
		// registration) fall back to a full refund rather than halt the chain.
		in.Outcome, in.Payees = payment.RunnerFault, nil
		outcome = payment.RunnerFault
		st, err = payment.Settle(in, x.m.p.Payment)
	}
	if err != nil {
		return fmt.Errorf("job %s: settle: %w", s.JobID, err)
	}
	rec := JobPayments{Outcome: uint8(outcome), Payment: st.Payment, Refund: st.Refund, Height: x.Env().Height}
	for _, t := range st.Transfers {
		if err := x.State().SubBalance(types.JobDispatcherAddress, t.Amount); err != nil {
			return fmt.Errorf("job %s: escrow: %w", s.JobID, err)
		}
		kind := "burn"
		switch t.Kind {
		case payment.KindBurn:
			if err := x.State().AddBigRecord(state.RecordBurned, t.Amount); err != nil {
				return err
			}
		default:
			if err := x.State().AddBalance(t.To, t.Amount); err != nil {
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
			if rn, err := runners.ReadRunner(x.State(), a); err != nil {
				return err
			} else if rn != nil && rn.ConsecutiveSlashes > 0 {
				rn.ConsecutiveSlashes = 0
				x.m.runners.With(x).SaveRunner(rn)
			}
		}
	}
	x.State().Set(JobPaymentsKey(s.JobID), codec.MustMarshal(&rec))
	x.Emit(types.JobDispatcherAddress, &JobSettledEvent{JobID: s.JobID, Outcome: uint64(outcome), Payment: st.Payment, Refund: st.Refund})
	return nil
}

// reports are the usage reports signed into a job's stored reveals, by runner.
func (x *Tx) reports(j *job.Job) (map[types.Address]*verify.Report, error) {
	jr, err := ReadJobResult(x.State(), j.Spec.JobID)
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
func (x *Tx) faultRow(j *job.Job, reports map[types.Address]*verify.Report, in *payment.Input) error {
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
		py, err := x.m.runners.With(x).Payee(a)
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

func (x *Tx) loadJob(id types.Hash) (*job.Job, error) {
	j, err := ReadJob(x.State(), id)
	if err != nil {
		return nil, err
	}
	if j == nil {
		return nil, system.Failf(system.CodeNoSuchJob, "NoSuchJob: job %s does not exist", id)
	}
	return j, nil
}

// teeFilter narrows the candidates' declared TEE support to runners with an
// attestation in force (the tee_required filter of CIP-2 §4: "attestation
// verified by TEE Verifier 0x05").
func (x *Tx) teeFilter(cands []selection.Candidate) ([]selection.Candidate, error) {
	p := &x.m.policy
	for i := range cands {
		if !cands[i].TEE {
			continue
		}
		rn, err := runners.ReadRunner(x.State(), cands[i].Address)
		if err != nil {
			return nil, err
		}
		ok := false
		if rn != nil {
			if ok, err = tee.Attested(x.State(), rn.Address, rn.ResultKey, x.Env().Height, p); err != nil {
				return nil, err
			}
		}
		cands[i].TEE = ok
	}
	return cands, nil
}

// poolChecker is the §4 filter 7 over the live registry; each check is
// charged entitlement.CheckCycles.
type poolChecker struct {
	x   *Tx
	reg *entitlement.Registry
}

func (p poolChecker) InPool(runner types.Address, pool []byte, at uint64) (bool, error) {
	if err := p.x.Charge(entitlement.CheckCycles, entitlement.CheckCells); err != nil {
		return false, err
	}
	return p.reg.InPool(runner, pool, at)
}

// PendingCallback is a queued job callback.
type PendingCallback struct {
	_        struct{}      `cbor:",toarray"`
	JobID    types.Hash    `json:"job_id"`
	Status   string        `json:"status"` // verified | failed
	Actor    types.Address `json:"actor"`
	Handler  string        `json:"handler"`
	Payload  types.Bytes   `json:"payload"` // CBOR [CallbackHandlerArg]
	QueuedAt uint64        `json:"queued_at"`
}

// callbackKey orders the queue by the height it was queued at, then job id
// and status: "cbq/" ‖ system.BE8(queued_at) ‖ id ‖ status.
func CallbackKey(queuedAt uint64, id types.Hash, status string) []byte {
	return system.Key(types.ResultVerifierAddress, []byte("cbq/"), system.BE8(queuedAt), id[:], []byte(status))
}

func CallbackPrefix() []byte { return system.Key(types.ResultVerifierAddress, []byte("cbq/")) }

// CallbackHandlerArg is the single argument a job's callback handler
// receives: a map with job_id (32 bytes), status ("verified" or "failed"),
// result (bytes or None), result_hash (32 bytes) and fail_reason (int).
type CallbackHandlerArg struct {
	JobID      []byte `cbor:"job_id"`
	Status     string `cbor:"status"`
	Result     []byte `cbor:"result"`
	ResultHash []byte `cbor:"result_hash"`
	FailReason uint64 `cbor:"fail_reason"`
}

// queueCallback queues the callback of job j (its current outcome) for
// delivery in a later block.
func (x *Tx) queueCallback(j *job.Job) {
	arg := CallbackHandlerArg{JobID: j.Spec.JobID[:], Status: "failed", FailReason: uint64(j.Fail), ResultHash: j.ResultHash[:]}
	if j.State == job.StateVerified {
		arg.Status = "verified"
		if jr, err := ReadJobResult(x.State(), j.Spec.JobID); err == nil && jr != nil {
			arg.Result = jr.Result
		}
	}
	pc := PendingCallback{JobID: j.Spec.JobID, Status: arg.Status, Actor: j.Spec.Callback.Actor, Handler: j.Spec.Callback.Handler,
		Payload: codec.MustMarshal([]any{arg}), QueuedAt: x.Env().Height}
	x.State().Set(CallbackKey(x.Env().Height, pc.JobID, pc.Status), codec.MustMarshal(&pc))
	x.Emit(types.ResultVerifierAddress, &JobCallbackQueuedEvent{JobID: pc.JobID, Status: pc.Status, Actor: pc.Actor})
}

// PendingCallbacks lists the queued callbacks in delivery order.
func PendingCallbacks(r interface {
	Scan(prefix []byte, fn func(k, v []byte) error) error
}) ([]PendingCallback, error) {
	var out []PendingCallback
	err := r.Scan(CallbackPrefix(), func(_, v []byte) error {
		var pc PendingCallback
		if err := codec.Unmarshal(v, &pc); err != nil {
			return fmt.Errorf("decode callback: %w", err)
		}
		out = append(out, pc)
		return nil
	})
	return out, err
}

// Tick advances job j to the lane's height: the end-of-block sweep's step
// for a job whose phase deadline has passed.
func (x *Tx) Tick(j *job.Job) error { return x.step(j, job.Tick{At: x.Env().Height}) }
