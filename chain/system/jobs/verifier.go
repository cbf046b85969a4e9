// The Result Verifier (0x…03): commitments, the aggregator's verified
// result, individual reveals, verification and challenges.

package jobs

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func (x *Tx) commitResult(from types.Address, in *types.CommitResult) error {
	j, err := x.loadJob(in.JobID)
	if err != nil {
		return err
	}
	if err := x.step(j, job.Committed{At: x.Env().Height, Runner: from, Hash: in.Commitment}); err != nil {
		return err
	}
	x.Emit(types.JobDispatcherAddress, &JobCommittedEvent{JobID: in.JobID, Runner: from, Commitment: in.Commitment})
	return nil
}

func (x *Tx) submitResult(from types.Address, in *types.SubmitResult) error {
	j, err := x.loadJob(in.JobID)
	if err != nil {
		return err
	}
	if j.State != job.StateCommitted && j.State != job.StateRevealed {
		return system.Failf(system.CodeJobTransition, "JobTransition: job %s is %s, not awaiting a result", in.JobID, j.State)
	}
	if j.State == job.StateCommitted && from != j.Aggregator {
		return system.Failf(system.CodeNotAggregator, "NotAggregator: only %s may submit the result of job %s", j.Aggregator, in.JobID)
	}
	sub, err := verify.DecodeSubmission(in.Submission)
	if err != nil {
		return system.Failf(system.CodeInvalidSubmission, "InvalidSubmission: %v", err)
	}
	if err := x.Charge(VerifyCycles+uint64(len(sub.Reveals))*VerifyRevealCycles, 0); err != nil {
		return err
	}
	keys, err := x.resultKeys(j)
	if err != nil {
		return err
	}
	out, err := verify.CheckSubmission(&j.Spec, j.Commitments, keys, sub)
	switch {
	case errors.Is(err, verify.ErrNoResult):
		x.State().Set(JobResultKey(in.JobID), codec.MustMarshal(&JobResult{Submitter: from, Reveals: sub.Reveals, Height: x.Env().Height}))
		if err := x.step(j, job.Rejected{At: x.Env().Height, Dissented: out.Dissented}); err != nil {
			return err
		}
		x.Emit(types.ResultVerifierAddress, &JobRejectedEvent{JobID: in.JobID, Dissented: out.Dissented})
		return nil
	case err != nil:
		return system.Failf(system.CodeInvalidSubmission, "InvalidSubmission: %v", err)
	}
	if missing, err := x.missingResultEvidence(j, sub.Reveals, out.Agreed); err != nil || missing != "" {
		if err != nil {
			return err
		}
		return system.Failf(system.CodeInvalidSubmission, "InvalidSubmission: %s", missing)
	}
	x.State().Set(JobResultKey(in.JobID), codec.MustMarshal(&JobResult{Accepted: true, Result: out.Result, ResultHash: out.ResultHash,
		Representative: out.Representative, Submitter: from, Reveals: sub.Reveals, Height: x.Env().Height}))
	if err := x.step(j, job.Verified{At: x.Env().Height, Submitter: from, ResultHash: out.ResultHash, Agreed: out.Agreed, Dissented: out.Dissented}); err != nil {
		return err
	}
	x.Emit(types.ResultVerifierAddress, &JobVerifiedEvent{JobID: in.JobID, ResultHash: out.ResultHash, Agreed: out.Agreed, Dissented: out.Dissented, Aggregator: &from})
	return nil
}

// resultKeys are the registered Ed25519 result keys of a job's committers.
// Each is the key registered when the runner committed (the key history,
// resultKeyAt), so a later key rotation changes nothing for the job.
func (x *Tx) resultKeys(j *job.Job) (map[types.Address]ed25519.PublicKey, error) {
	keys := map[types.Address]ed25519.PublicKey{}
	for _, c := range j.Commitments {
		k, err := runners.ResultKeyAt(x.State(), c.Runner, c.Block)
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
func (x *Tx) revealResult(from types.Address, in *types.RevealResult) error {
	j, err := x.loadJob(in.JobID)
	if err != nil {
		return err
	}
	r, err := verify.DecodeReveal(in.Reveal)
	if err != nil {
		return system.Failf(system.CodeInvalidReveal, "InvalidReveal: %v", err)
	}
	if r.Runner != from {
		return system.Failf(system.CodeInvalidReveal, "InvalidReveal: a runner reveals its own result (reveal names %s)", r.Runner)
	}
	if err := x.Charge(VerifyRevealCycles, uint64(len(in.Reveal))); err != nil {
		return err
	}
	i := slices.IndexFunc(j.Commitments, func(c job.Commitment) bool { return c.Runner == from })
	if i < 0 {
		return system.Failf(system.CodeInvalidReveal, "InvalidReveal: %s has no commitment for job %s", from, in.JobID)
	}
	keys, err := x.resultKeys(j)
	if err != nil {
		return err
	}
	if err := verify.CheckReveal(in.JobID, r, j.Commitments[i].Hash, keys[from]); err != nil {
		return system.Failf(system.CodeInvalidReveal, "InvalidReveal: %v", err)
	}
	if missing, err := x.missingResultEvidence(j, []verify.Reveal{*r}, []types.Address{from}); err != nil || missing != "" {
		if err != nil {
			return err
		}
		return system.Failf(system.CodeInvalidReveal, "InvalidReveal: %s", missing)
	}
	x.State().Set(jobRevealKey(in.JobID, from), bytes.Clone(in.Reveal))
	x.Emit(types.ResultVerifierAddress, &JobRevealedEvent{JobID: in.JobID, Runner: from})
	if err := x.step(j, job.Revealed{At: x.Env().Height, Runner: from}); err != nil {
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
func (x *Tx) missingResultEvidence(j *job.Job, reveals []verify.Reveal, counted []types.Address) (string, error) {
	if j.Spec.Verification.Mode != job.ModeDeterministic {
		return "", nil
	}
	for _, a := range counted {
		i := slices.IndexFunc(reveals, func(r verify.Reveal) bool { return r.Runner == a })
		if i < 0 {
			return fmt.Sprintf("no reveal from %s", a), nil
		}
		h := types.Keccak256(reveals[i].Result)
		ok, err := tee.ResultAttested(x.State(), j.Spec.JobID, a, h)
		if err != nil {
			return "", fmt.Errorf("job %s: result evidence of %s: %w", j.Spec.JobID, a, err)
		}
		if !ok {
			return fmt.Sprintf("%s has no TEE evidence (tee_attest_result) for result %s of Deterministic job %s", a, h, j.Spec.JobID), nil
		}
		if why, err := x.modelEvidenceShortfall(j, a); err != nil || why != "" {
			return why, err
		}
	}
	return "", nil
}

// storedReveals are a job's individual reveals in runner order.
func (x *Tx) storedReveals(id types.Hash) ([]verify.Reveal, error) {
	var reveals []verify.Reveal
	if err := x.State().Scan(jobRevealPrefix(id), func(_, v []byte) error {
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
func (x *Tx) verifyReveals(j *job.Job) error {
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
		x.State().Set(JobResultKey(id), codec.MustMarshal(&JobResult{Reveals: reveals, Height: x.Env().Height}))
		x.Emit(types.ResultVerifierAddress, &JobRejectedEvent{JobID: id, Dissented: out.Dissented})
		return x.step(j, job.Rejected{At: x.Env().Height, Dissented: out.Dissented})
	}
	x.State().Set(JobResultKey(id), codec.MustMarshal(&JobResult{Accepted: true, Result: out.Result, ResultHash: out.ResultHash,
		Representative: out.Representative, Submitter: out.Representative, Reveals: reveals, Height: x.Env().Height}))
	x.Emit(types.ResultVerifierAddress, &JobVerifiedEvent{JobID: id, ResultHash: out.ResultHash, Agreed: out.Agreed, Dissented: out.Dissented})
	return x.step(j, job.Verified{At: x.Env().Height, Submitter: out.Representative, ResultHash: out.ResultHash, Agreed: out.Agreed, Dissented: out.Dissented})
}

// ChallengeCycles is the execution cost of challenge_result beyond its
// intrinsic cost: one signature check, or a re-verification of the stored
// reveals (charged per reveal like submit_verified_result).
const ChallengeCycles = 50_000

// challengeResult is challenge_result (kind 50) to the Result Verifier,
// within a verified job's challenge window, bonded with exactly
// ChallengeBond. Faults the chain can prove from its own records:
//
//   - Equivocation (Evidence = a reveal): a result signed by committee
//     member R for this job whose Commitment(result, sig) differs from R's
//     stored commitment. Ed25519 signatures are deterministic, so a second
//     valid signature that does not reproduce the commitment proves R
//     signed two different results (or signed something it never
//     committed). Culprit: R.
//   - Re-verification (empty Evidence): the stored reveals, run through
//     verify.Verify again, do not yield the accepted result (e.g. a result
//     that violates the job's schema was accepted). Culprits: the runners
//     that agreed with it.
//
// Upheld: each culprit loses SlashBps of its stake (self-bond, delegations
// and tranches still unbonding from it); ChallengerBps of the slashed total
// goes to the challenger, the rest is burned; the bond is returned. If a
// culprit agreed with the accepted result the job fails (FailChallenged)
// and the escrow is refunded, so the aggregator's bonus is forfeited too.
// Well-formed evidence that proves nothing forfeits the bond (burned).
// Malformed challenges (wrong bond, undecodable evidence, a runner outside
// the committee, a job outside its window) fail the transaction.
func (x *Tx) challengeResult(from types.Address, in *types.ChallengeResult) error {
	p := &x.m.p
	bond := x.Transaction().Value()
	if bond.Cmp(p.ChallengeBond) != 0 {
		return system.Failf(system.CodeChallengeBond, "ChallengeBond: the bond is exactly %s (got %s)", p.ChallengeBond, bond)
	}
	j, err := x.loadJob(in.JobID)
	if err != nil {
		return err
	}
	if j.State != job.StateVerified || x.Env().Height > j.Deadline {
		return system.Failf(system.CodeNotChallengeable, "NotChallengeable: job %s is %s; results are challengeable while verified, until block %d", in.JobID, j.State, j.Deadline)
	}
	if err := x.Charge(ChallengeCycles, uint64(len(in.Evidence))); err != nil {
		return err
	}
	var culprits []types.Address
	var reason string
	if len(in.Evidence) == 0 {
		culprits, reason, err = x.reverify(j)
	} else {
		culprits, reason, err = x.equivocation(j, in.Evidence)
	}
	if err != nil {
		return err
	}
	if err := x.MoveValue(from, types.ResultVerifierAddress, bond); err != nil {
		return err
	}
	if culprits == nil {
		// Not proven: the bond is forfeited.
		if err := x.burnFrom(types.ResultVerifierAddress, bond); err != nil {
			return err
		}
		x.Emit(types.ResultVerifierAddress, &ChallengeRejectedEvent{JobID: in.JobID, Challenger: from, Forfeited: bond, Reason: reason})
		return nil
	}
	// A runner is slashed at most once per job: a dissenting culprit leaves
	// the job challengeable, and its evidence must not be replayed.
	for _, a := range culprits {
		if _, done, err := x.State().Get(slashedKey(in.JobID, a)); err != nil {
			return err
		} else if done {
			return system.Failf(system.CodeAlreadySlashed, "AlreadySlashed: %s was already slashed for job %s", a, in.JobID)
		}
		x.State().Set(slashedKey(in.JobID, a), []byte{1})
	}
	if err := x.step(j, job.Challenged{At: x.Env().Height, Upheld: true, Culprits: culprits}); err != nil {
		return err
	}
	slashed := new(big.Int)
	for _, a := range culprits {
		s, err := x.m.runners.With(x).SlashRunner(a)
		if err != nil {
			return err
		}
		slashed.Add(slashed, s)
		x.Emit(types.RunnerRegistryAddress, &runners.RunnerSlashedEvent{Runner: a, JobID: in.JobID, Amount: s})
	}
	reward := new(big.Int).Mul(slashed, new(big.Int).SetUint64(p.ChallengerBps))
	reward.Quo(reward, big.NewInt(10_000))
	burn := new(big.Int).Sub(slashed, reward)
	if err := x.MoveValue(types.RunnerRegistryAddress, from, reward); err != nil {
		return err
	}
	if err := x.burnFrom(types.RunnerRegistryAddress, burn); err != nil {
		return err
	}
	if err := x.MoveValue(types.ResultVerifierAddress, from, bond); err != nil {
		return err
	}
	x.Emit(types.ResultVerifierAddress, &ChallengeUpheldEvent{JobID: in.JobID, Challenger: from, Culprits: culprits, Reason: reason, Slashed: slashed, Reward: reward, Burned: burn})
	return nil
}

// slashedKey marks runner as slashed for job id.
func slashedKey(id types.Hash, runner types.Address) []byte {
	return system.Key(types.ResultVerifierAddress, []byte("slashed/"), id[:], runner[:])
}

// burnFrom destroys amount held by a system account.
func (x *Tx) burnFrom(a types.Address, amount *big.Int) error {
	if amount.Sign() == 0 {
		return nil
	}
	if err := x.State().SubBalance(a, amount); err != nil {
		return err
	}
	return x.State().AddBigRecord(state.RecordBurned, amount)
}

// equivocation checks reveal evidence: nil culprits if it proves nothing.
func (x *Tx) equivocation(j *job.Job, evidence []byte) ([]types.Address, string, error) {
	r, err := verify.DecodeReveal(evidence)
	if err != nil {
		return nil, "", system.Failf(system.CodeInvalidEvidence, "InvalidEvidence: %v", err)
	}
	i := slices.IndexFunc(j.Commitments, func(c job.Commitment) bool { return c.Runner == r.Runner })
	if i < 0 {
		return nil, "", system.Failf(system.CodeInvalidEvidence, "InvalidEvidence: %s has no commitment for job %s", r.Runner, j.Spec.JobID)
	}
	key, err := runners.ResultKeyAt(x.State(), r.Runner, j.Commitments[i].Block)
	if err != nil {
		return nil, "", err
	}
	if len(r.Signature) != ed25519.SignatureSize || len(key) != ed25519.PublicKeySize ||
		!ed25519.Verify(key, verify.SigningMessageFor(j.Spec.JobID, r), r.Signature) {
		return nil, "signature does not verify under the runner's result key", nil
	}
	if verify.Commitment(r.Result, r.Signature) == j.Commitments[i].Hash {
		return nil, "the signed result matches the runner's commitment", nil
	}
	return []types.Address{r.Runner}, "equivocation: signed result contradicts the commitment", nil
}

// reverify re-runs verification over the stored reveals of an accepted
// result: nil culprits if it reproduces the accepted result.
func (x *Tx) reverify(j *job.Job) ([]types.Address, string, error) {
	jr, err := ReadJobResult(x.State(), j.Spec.JobID)
	if err != nil {
		return nil, "", err
	}
	if jr == nil || !jr.Accepted {
		return nil, "", system.Failf(system.CodeInvalidEvidence, "InvalidEvidence: job %s has no stored accepted result", j.Spec.JobID)
	}
	reveals := jr.Reveals
	if len(reveals) == 0 { // individual reveals are stored one by one
		if reveals, err = x.storedReveals(j.Spec.JobID); err != nil {
			return nil, "", err
		}
	}
	if err := x.Charge(uint64(len(reveals))*VerifyRevealCycles, 0); err != nil {
		return nil, "", err
	}
	keys, err := x.resultKeys(j)
	if err != nil {
		return nil, "", err
	}
	out, err := verify.Verify(verify.Input{Spec: &j.Spec, Commitments: j.Commitments, Keys: keys, Reveals: reveals})
	if err == nil && out.Accepted && out.ResultHash == j.ResultHash && slices.Equal(out.Agreed, j.Agreed) {
		return nil, "re-verification reproduces the accepted result", nil
	}
	return slices.Clone(j.Agreed), "re-verification does not reproduce the accepted result", nil
}
