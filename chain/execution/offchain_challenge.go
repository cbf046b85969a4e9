package execution

import (
	"crypto/ed25519"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/jobs"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

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
func (x *txExec) challengeResult(from types.Address, in *types.ChallengeResult) error {
	p := &x.ex.cfg.Offchain
	bond := x.tx.Value()
	if bond.Cmp(p.ChallengeBond) != 0 {
		return failf(system.CodeChallengeBond, "ChallengeBond: the bond is exactly %s (got %s)", p.ChallengeBond, bond)
	}
	j, err := x.loadJob(in.JobID)
	if err != nil {
		return err
	}
	if j.State != job.StateVerified || x.env.Height > j.Deadline {
		return failf(system.CodeNotChallengeable, "NotChallengeable: job %s is %s; results are challengeable while verified, until block %d", in.JobID, j.State, j.Deadline)
	}
	if err := x.charge(ChallengeCycles, uint64(len(in.Evidence))); err != nil {
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
	if err := x.moveValue(from, types.ResultVerifierAddress, bond); err != nil {
		return err
	}
	if culprits == nil {
		// Not proven: the bond is forfeited.
		if err := x.burnFrom(types.ResultVerifierAddress, bond); err != nil {
			return err
		}
		x.emit(types.ResultVerifierAddress, &jobs.ChallengeRejectedEvent{JobID: in.JobID, Challenger: from, Forfeited: bond, Reason: reason})
		return nil
	}
	// A runner is slashed at most once per job: a dissenting culprit leaves
	// the job challengeable, and its evidence must not be replayed.
	for _, a := range culprits {
		if _, done, err := x.o.Get(slashedKey(in.JobID, a)); err != nil {
			return err
		} else if done {
			return failf(system.CodeAlreadySlashed, "AlreadySlashed: %s was already slashed for job %s", a, in.JobID)
		}
		x.o.Set(slashedKey(in.JobID, a), []byte{1})
	}
	if err := x.step(j, job.Challenged{At: x.env.Height, Upheld: true, Culprits: culprits}); err != nil {
		return err
	}
	slashed := new(big.Int)
	for _, a := range culprits {
		s, err := x.reg().SlashRunner(a)
		if err != nil {
			return err
		}
		slashed.Add(slashed, s)
		x.emit(types.RunnerRegistryAddress, &runners.RunnerSlashedEvent{Runner: a, JobID: in.JobID, Amount: s})
	}
	reward := new(big.Int).Mul(slashed, new(big.Int).SetUint64(p.ChallengerBps))
	reward.Quo(reward, big.NewInt(10_000))
	burn := new(big.Int).Sub(slashed, reward)
	if err := x.moveValue(types.RunnerRegistryAddress, from, reward); err != nil {
		return err
	}
	if err := x.burnFrom(types.RunnerRegistryAddress, burn); err != nil {
		return err
	}
	if err := x.moveValue(types.ResultVerifierAddress, from, bond); err != nil {
		return err
	}
	x.emit(types.ResultVerifierAddress, &jobs.ChallengeUpheldEvent{JobID: in.JobID, Challenger: from, Culprits: culprits, Reason: reason, Slashed: slashed, Reward: reward, Burned: burn})
	return nil
}

// slashedKey marks runner as slashed for job id.
func slashedKey(id types.Hash, runner types.Address) []byte {
	return offKey(types.ResultVerifierAddress, []byte("slashed/"), id[:], runner[:])
}

// burnFrom destroys amount held by a system account.
func (x *txExec) burnFrom(a types.Address, amount *big.Int) error {
	if amount.Sign() == 0 {
		return nil
	}
	if err := x.o.SubBalance(a, amount); err != nil {
		return err
	}
	return x.o.AddBigRecord(state.RecordBurned, amount)
}

// equivocation checks reveal evidence: nil culprits if it proves nothing.
func (x *txExec) equivocation(j *job.Job, evidence []byte) ([]types.Address, string, error) {
	r, err := verify.DecodeReveal(evidence)
	if err != nil {
		return nil, "", failf(system.CodeInvalidEvidence, "InvalidEvidence: %v", err)
	}
	i := slices.IndexFunc(j.Commitments, func(c job.Commitment) bool { return c.Runner == r.Runner })
	if i < 0 {
		return nil, "", failf(system.CodeInvalidEvidence, "InvalidEvidence: %s has no commitment for job %s", r.Runner, j.Spec.JobID)
	}
	key, err := runners.ResultKeyAt(x.o, r.Runner, j.Commitments[i].Block)
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
func (x *txExec) reverify(j *job.Job) ([]types.Address, string, error) {
	jr, err := ReadJobResult(x.o, j.Spec.JobID)
	if err != nil {
		return nil, "", err
	}
	if jr == nil || !jr.Accepted {
		return nil, "", failf(system.CodeInvalidEvidence, "InvalidEvidence: job %s has no stored accepted result", j.Spec.JobID)
	}
	reveals := jr.Reveals
	if len(reveals) == 0 { // individual reveals are stored one by one
		if reveals, err = x.storedReveals(j.Spec.JobID); err != nil {
			return nil, "", err
		}
	}
	if err := x.charge(uint64(len(reveals))*VerifyRevealCycles, 0); err != nil {
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
