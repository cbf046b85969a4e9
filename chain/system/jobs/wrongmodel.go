package jobs

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TopicWrongModel is the topic of the WrongModel event.
const TopicWrongModel = "WrongModel"

// WrongModelEvent is the data of the WrongModel event: Runner's enclave
// attested running Model for JobID, which names JobModel.
type WrongModelEvent struct {
	JobID    types.Hash    `cbor:"job_id" json:"job_id"`
	Runner   types.Address `cbor:"runner" json:"runner"`
	Model    types.Hash    `cbor:"model" json:"model"`
	JobModel types.Hash    `cbor:"job_model" json:"job_model"`
	Reporter types.Address `cbor:"reporter" json:"reporter"`
	Slashed  *big.Int      `cbor:"slashed" json:"slashed"`
	Reward   *big.Int      `cbor:"reward" json:"reward"`
}

// Topic implements system.EventData.
func (*WrongModelEvent) Topic() string { return TopicWrongModel }

// checkResultVerifier is the stateless check of report_wrong_model: it
// goes to the Result Verifier without value.
func checkResultVerifier(tx *types.Tx, in types.Instruction) error {
	if to, ok := tx.To(); !ok || to != types.ResultVerifierAddress {
		return fmt.Errorf("%w: %s transactions go to %s", types.ErrMalformedTx, in.InstructionKind(), types.ResultVerifierAddress)
	}
	if tx.Value().Sign() != 0 {
		return fmt.Errorf("%w: %s carries no value", types.ErrMalformedTx, in.InstructionKind())
	}
	return nil
}

// modelEvidenceShortfall is why runner's per-job evidence does not show
// the job's registry model ("" when it does, or the job names none).
func (x *Tx) modelEvidenceShortfall(j *job.Job, runner types.Address) (string, error) {
	want := j.Spec.ModelID
	if want == (types.Hash{}) {
		return "", nil
	}
	got, ok, err := tee.ResultModel(x.State(), j.Spec.JobID, runner)
	if err != nil {
		return "", fmt.Errorf("job %s: model evidence of %s: %w", j.Spec.JobID, runner, err)
	}
	switch {
	case !ok:
		return fmt.Sprintf("%s's TEE evidence binds no model; job %s names model %s", runner, j.Spec.JobID, want), nil
	case got != want:
		return fmt.Sprintf("%s's TEE evidence binds model %s; job %s names model %s", runner, got, j.Spec.JobID, want), nil
	}
	return "", nil
}

// reportWrongModel slashes a runner whose recorded per-job TEE evidence
// (tee_attest_result with a model hash, verified against the chain policy
// and the runner's attested enclave) binds another model than the job's
// model_id: the record is the proof, so no bond is needed. The reporter
// gets ChallengerBps of the slashed stake; the rest is burned. A runner is
// slashed at most once per job, by this or by a challenge.
func (x *Tx) reportWrongModel(from types.Address, in *types.ReportWrongModel) error {
	if err := x.Charge(ChallengeCycles, 0); err != nil {
		return err
	}
	j, err := x.loadJob(in.JobID)
	if err != nil {
		return err
	}
	if j.Spec.ModelID == (types.Hash{}) {
		return system.Failf(system.CodeInvalidEvidence, "InvalidEvidence: job %s names no model", in.JobID)
	}
	got, ok, err := tee.ResultModel(x.State(), in.JobID, in.Runner)
	if err != nil {
		return err
	}
	if !ok || got == j.Spec.ModelID {
		return system.Failf(system.CodeInvalidEvidence, "InvalidEvidence: %s has no recorded TEE evidence of another model for job %s", in.Runner, in.JobID)
	}
	if _, done, err := x.State().Get(slashedKey(in.JobID, in.Runner)); err != nil {
		return err
	} else if done {
		return system.Failf(system.CodeAlreadySlashed, "AlreadySlashed: %s was already slashed for job %s", in.Runner, in.JobID)
	}
	x.State().Set(slashedKey(in.JobID, in.Runner), []byte{1})
	slashed, err := x.m.runners.With(x).SlashRunner(in.Runner)
	if err != nil {
		return err
	}
	x.Emit(types.RunnerRegistryAddress, &runners.RunnerSlashedEvent{Runner: in.Runner, JobID: in.JobID, Amount: slashed})
	reward := new(big.Int).Mul(slashed, new(big.Int).SetUint64(x.m.p.ChallengerBps))
	reward.Quo(reward, big.NewInt(10_000))
	if err := x.MoveValue(types.RunnerRegistryAddress, from, reward); err != nil {
		return err
	}
	if err := x.burnFrom(types.RunnerRegistryAddress, new(big.Int).Sub(slashed, reward)); err != nil {
		return err
	}
	x.Emit(types.ResultVerifierAddress, &WrongModelEvent{JobID: in.JobID, Runner: in.Runner, Model: got, JobModel: j.Spec.ModelID,
		Reporter: from, Slashed: slashed, Reward: reward})
	return nil
}
