package sdk

import (
	"context"
	"math/big"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// JobsService is the client's service for off-chain compute jobs (Job
// Dispatcher and Result Verifier): jobs, committee selection and the off-
// chain parameters; signed submit, commit, reveal, verified-result and
// challenge (/v1/jobs, /v1/offchain).
type JobsService struct{ c *Client }

// Jobs returns the service for off-chain compute jobs.
func (c *Client) Jobs() *JobsService { return &JobsService{c: c} }

// AccountJobs is the Jobs service bound to an account: its transaction
// methods sign with the account's key and submit as Account describes
// (nonces, fees, waiting); its reads are those of JobsService.
type AccountJobs struct {
	*JobsService
	a *Account
}

// Jobs returns the Jobs service bound to a.
func (a *Account) Jobs() *AccountJobs { return &AccountJobs{JobsService: a.c.Jobs(), a: a} }

// Params returns the off-chain compute parameters (GET
// /v1/offchain/params).
func (s *JobsService) Params(ctx context.Context) (*apitypes.OffchainParams, error) {
	var p apitypes.OffchainParams
	return &p, s.c.do(ctx, http.MethodGet, "/v1/offchain/params", nil, &p)
}

// Get returns a job with its committee, commitments, reveals, result and
// payments (GET /v1/jobs/{id}).
func (s *JobsService) Get(ctx context.Context, id types.Hash) (*apitypes.Job, error) {
	var r apitypes.Job
	return &r, s.c.do(ctx, http.MethodGet, "/v1/jobs/"+id.String(), nil, &r)
}

// Submit submits spec to the Job Dispatcher; the escrow max_price + tip
// comes from the account's balance. The job id is the receipt's return value.
func (s *AccountJobs) Submit(ctx context.Context, spec *job.JobSpec, o TxOptions) (*types.Tx, error) {
	b, err := spec.Encode()
	if err != nil {
		return nil, err
	}
	return s.a.sendSystem(ctx, types.JobDispatcherAddress, nil, &types.SubmitJob{Spec: b}, o)
}

// Commit sends a committee member's commitment for a job.
func (s *AccountJobs) Commit(ctx context.Context, id, commitment types.Hash, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.JobDispatcherAddress, nil, &types.CommitResult{JobID: id, Commitment: commitment}, o)
}

// SubmitVerified sends the aggregator's submission for a job.
func (s *AccountJobs) SubmitVerified(ctx context.Context, sub *verify.Submission, o TxOptions) (*types.Tx, error) {
	b, err := sub.Encode()
	if err != nil {
		return nil, err
	}
	return s.a.sendSystem(ctx, types.ResultVerifierAddress, nil, &types.SubmitResult{JobID: sub.Claim.JobID, Submission: b}, o)
}

// Reveal sends a committee member's individual reveal, accepted once
// the aggregator has timed out.
func (s *AccountJobs) Reveal(ctx context.Context, id types.Hash, r *verify.Reveal, o TxOptions) (*types.Tx, error) {
	b, err := r.Encode()
	if err != nil {
		return nil, err
	}
	return s.a.sendSystem(ctx, types.ResultVerifierAddress, nil, &types.RevealResult{JobID: id, Reveal: b}, o)
}

// Challenge challenges a verified job with the bond; evidence is a
// committee member's signed reveal contradicting its commitment, or nil to
// have the chain re-verify the stored reveals.
func (s *AccountJobs) Challenge(ctx context.Context, id types.Hash, evidence *verify.Reveal, bond *big.Int, o TxOptions) (*types.Tx, error) {
	in := &types.ChallengeResult{JobID: id}
	if evidence != nil {
		b, err := evidence.Encode()
		if err != nil {
			return nil, err
		}
		in.Evidence = b
	}
	return s.a.sendSystem(ctx, types.ResultVerifierAddress, bond, in, o)
}

// Selection returns what is needed to recompute a job's committee
// (GET /v1/jobs/{id}/selection).
func (s *JobsService) Selection(ctx context.Context, id types.Hash) (*apitypes.JobSelection, error) {
	var r apitypes.JobSelection
	return &r, s.c.do(ctx, http.MethodGet, "/v1/jobs/"+id.String()+"/selection", nil, &r)
}
