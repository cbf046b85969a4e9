package sdk

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Propose opens a governance proposal (gov_propose to 0x…09) with deposit.
// The receipt's return value is the proposal id (8 bytes, big-endian).
func (c *Client) Propose(ctx context.Context, key *ecdsa.PrivateKey, in *types.GovPropose, deposit *big.Int, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.GovernanceAddress, deposit, in, o)
}

// Vote casts key's vote (types.VoteYes, VoteNo, VoteAbstain) on a proposal;
// a later vote replaces an earlier one.
func (c *Client) Vote(ctx context.Context, key *ecdsa.PrivateKey, proposal uint64, choice uint8, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.GovernanceAddress, nil, &types.GovVote{Proposal: proposal, Choice: choice}, o)
}

// ExecuteProposal executes a queued proposal whose ETA has come.
func (c *Client) ExecuteProposal(ctx context.Context, key *ecdsa.PrivateKey, proposal uint64, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.GovernanceAddress, nil, &types.GovExecute{Proposal: proposal}, o)
}

// Proposals lists every proposal (GET /v1/gov/proposals).
func (c *Client) Proposals(ctx context.Context) (*apitypes.GovProposals, error) {
	var r apitypes.GovProposals
	return &r, c.do(ctx, http.MethodGet, "/v1/gov/proposals", nil, &r)
}

// Proposal returns one proposal with both chambers' tallies (GET
// /v1/gov/proposals/{id}).
func (c *Client) Proposal(ctx context.Context, id uint64) (*apitypes.GovProposal, error) {
	var r apitypes.GovProposal
	return &r, c.do(ctx, http.MethodGet, "/v1/gov/proposals/"+strconv.FormatUint(id, 10), nil, &r)
}

// Params returns the governed parameters, or only key if it is not empty
// (GET /v1/params).
func (c *Client) Params(ctx context.Context, key string) (*apitypes.Params, error) {
	path := "/v1/params"
	if key != "" {
		path += "?key=" + url.QueryEscape(key)
	}
	var r apitypes.Params
	return &r, c.do(ctx, http.MethodGet, path, nil, &r)
}

// Treasury returns the Treasury's balance and outflows (GET /v1/treasury).
func (c *Client) Treasury(ctx context.Context) (*apitypes.Treasury, error) {
	var r apitypes.Treasury
	return &r, c.do(ctx, http.MethodGet, "/v1/treasury", nil, &r)
}

// Council returns the Security Council, its next nonce and the
// circuit-breaks in force (GET /v1/gov/council).
func (c *Client) Council(ctx context.Context) (*apitypes.GovCouncil, error) {
	var r apitypes.GovCouncil
	return &r, c.do(ctx, http.MethodGet, "/v1/gov/council", nil, &r)
}

// CouncilAction submits a Security Council action carrying its members'
// signatures over types.CouncilDigest (collected offline).
func (c *Client) CouncilAction(ctx context.Context, key *ecdsa.PrivateKey, in *types.GovCouncil, o TxOptions) (*types.Tx, error) {
	return c.sendSystem(ctx, key, types.GovernanceAddress, nil, in, o)
}
