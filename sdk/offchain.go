package sdk

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/offchain/verify"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Runners lists the registered runners (GET /v1/runners); all includes
// runners that have deregistered.
func (c *Client) Runners(ctx context.Context, all bool) ([]apitypes.Runner, error) {
	var r []apitypes.Runner
	path := "/v1/runners"
	if all {
		path += "?all=true"
	}
	return r, c.do(ctx, http.MethodGet, path, nil, &r)
}

// Runner returns one runner record (GET /v1/runners/{addr}).
func (c *Client) Runner(ctx context.Context, addr types.Address) (*apitypes.Runner, error) {
	var r apitypes.Runner
	return &r, c.do(ctx, http.MethodGet, "/v1/runners/"+addr.String(), nil, &r)
}

// OffchainParams returns the off-chain compute parameters (GET
// /v1/offchain/params).
func (c *Client) OffchainParams(ctx context.Context) (*apitypes.OffchainParams, error) {
	var p apitypes.OffchainParams
	return &p, c.do(ctx, http.MethodGet, "/v1/offchain/params", nil, &p)
}

// Job returns a job with its committee, commitments, reveals, result and
// payments (GET /v1/jobs/{id}).
func (c *Client) Job(ctx context.Context, id types.Hash) (*apitypes.Job, error) {
	var r apitypes.Job
	return &r, c.do(ctx, http.MethodGet, "/v1/jobs/"+id.String(), nil, &r)
}

// OffchainExpectCycles is the execution estimate used for off-chain compute
// instructions (selection, verification and the callback run inside them).
const OffchainExpectCycles = 2_000_000

// OffchainExpectCells is the matching cell estimate (a callback writes the
// result into its actor's storage).
const OffchainExpectCells = 100_000

// sendSystem builds, signs and submits a system-actor instruction to
// `to` with value (nil for none).
func (c *Client) sendSystem(ctx context.Context, key *ecdsa.PrivateKey, to types.Address, value *big.Int, in types.Instruction, o TxOptions) (*types.Tx, error) {
	tx, err := c.BuildTx(ctx, key, TxRequest{To: &to, Value: value, Instruction: in, ExpectCycles: OffchainExpectCycles, ExpectCells: OffchainExpectCells, Options: o})
	if err != nil {
		return nil, err
	}
	if _, err := c.Submit(ctx, tx); err != nil {
		return nil, err
	}
	return tx, nil
}

// RegisterRunner registers (or updates) key as a runner; stake adds to its
// self-bond.
func (c *Client) RegisterRunner(ctx context.Context, key *ecdsa.PrivateKey, in *types.RunnerRegister, stake *big.Int, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.RunnerRegistryAddress, stake, in, o)
}

// RunnerHeartbeat reports key's runner alive.
func (c *Client) RunnerHeartbeat(ctx context.Context, key *ecdsa.PrivateKey, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.RunnerRegistryAddress, nil, &types.RunnerHeartbeat{}, o)
}

// DeregisterRunner removes key's runner and returns its self-bond.
func (c *Client) DeregisterRunner(ctx context.Context, key *ecdsa.PrivateKey, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.RunnerRegistryAddress, nil, &types.RunnerDeregister{}, o)
}

// SubmitJob submits spec to the Job Dispatcher; the escrow max_price + tip
// comes from key's balance. The job id is the receipt's return value.
func (c *Client) SubmitJob(ctx context.Context, key *ecdsa.PrivateKey, spec *job.JobSpec, o TxOptions) (*types.Tx, error) {
	b, err := spec.Encode()
	if err != nil {
		return nil, err
	}
	return c.sendSystem(ctx, key, types.JobDispatcherAddress, nil, &types.SubmitJob{Spec: b}, o)
}

// CommitResult sends a committee member's commitment for a job.
func (c *Client) CommitResult(ctx context.Context, key *ecdsa.PrivateKey, id, commitment types.Hash, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.JobDispatcherAddress, nil, &types.CommitResult{JobID: id, Commitment: commitment}, o)
}

// SubmitVerifiedResult sends the aggregator's submission for a job.
func (c *Client) SubmitVerifiedResult(ctx context.Context, key *ecdsa.PrivateKey, sub *verify.Submission, o TxOptions) (*types.Tx, error) {
	b, err := sub.Encode()
	if err != nil {
		return nil, err
	}
	return c.sendSystem(ctx, key, types.ResultVerifierAddress, nil, &types.SubmitResult{JobID: sub.Claim.JobID, Submission: b}, o)
}

// RevealResult sends a committee member's individual reveal, accepted once
// the aggregator has timed out.
func (c *Client) RevealResult(ctx context.Context, key *ecdsa.PrivateKey, id types.Hash, r *verify.Reveal, o TxOptions) (*types.Tx, error) {
	b, err := r.Encode()
	if err != nil {
		return nil, err
	}
	return c.sendSystem(ctx, key, types.ResultVerifierAddress, nil, &types.RevealResult{JobID: id, Reveal: b}, o)
}
