package sdk

import (
	"context"
	"math/big"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// GovService is the client's service for on-chain governance: proposals,
// votes and execution, parameters, the Treasury and the Security Council
// (/v1/gov, /v1/params, /v1/treasury).
type GovService struct{ c *Client }

// Gov returns the service for on-chain governance.
func (c *Client) Gov() *GovService { return &GovService{c: c} }

// AccountGov is the Gov service bound to an account: its transaction
// methods sign with the account's key and submit as Account describes
// (nonces, fees, waiting); its reads are those of GovService.
type AccountGov struct {
	*GovService
	a *Account
}

// Gov returns the Gov service bound to a.
func (a *Account) Gov() *AccountGov { return &AccountGov{GovService: a.c.Gov(), a: a} }

// Propose opens a governance proposal (gov_propose to 0x…09) with deposit.
// The receipt's return value is the proposal id (8 bytes, big-endian).
func (s *AccountGov) Propose(ctx context.Context, in *types.GovPropose, deposit *big.Int, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.GovernanceAddress, deposit, in, o)
}

// Vote casts the account's vote (types.VoteYes, VoteNo, VoteAbstain) on a proposal;
// a later vote replaces an earlier one.
func (s *AccountGov) Vote(ctx context.Context, proposal uint64, choice uint8, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.GovernanceAddress, nil, &types.GovVote{Proposal: proposal, Choice: choice}, o)
}

// Execute executes a queued proposal whose ETA has come.
func (s *AccountGov) Execute(ctx context.Context, proposal uint64, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.GovernanceAddress, nil, &types.GovExecute{Proposal: proposal}, o)
}

// Proposals lists every proposal (GET /v1/gov/proposals).
func (s *GovService) Proposals(ctx context.Context) (*apitypes.GovProposals, error) {
	var r apitypes.GovProposals
	return &r, s.c.do(ctx, http.MethodGet, "/v1/gov/proposals", nil, &r)
}

// Proposal returns one proposal with both chambers' tallies (GET
// /v1/gov/proposals/{id}).
func (s *GovService) Proposal(ctx context.Context, id uint64) (*apitypes.GovProposal, error) {
	var r apitypes.GovProposal
	return &r, s.c.do(ctx, http.MethodGet, "/v1/gov/proposals/"+strconv.FormatUint(id, 10), nil, &r)
}

// Params returns the governed parameters, or only key if it is not empty
// (GET /v1/params).
func (s *GovService) Params(ctx context.Context, key string) (*apitypes.Params, error) {
	path := "/v1/params"
	if key != "" {
		path += "?key=" + url.QueryEscape(key)
	}
	var r apitypes.Params
	return &r, s.c.do(ctx, http.MethodGet, path, nil, &r)
}

// Treasury returns the Treasury's balance and outflows (GET /v1/treasury).
func (s *GovService) Treasury(ctx context.Context) (*apitypes.Treasury, error) {
	var r apitypes.Treasury
	return &r, s.c.do(ctx, http.MethodGet, "/v1/treasury", nil, &r)
}

// Council returns the Security Council, its next nonce and the
// circuit-breaks in force (GET /v1/gov/council).
func (s *GovService) Council(ctx context.Context) (*apitypes.GovCouncil, error) {
	var r apitypes.GovCouncil
	return &r, s.c.do(ctx, http.MethodGet, "/v1/gov/council", nil, &r)
}

// CouncilAction submits a Security Council action carrying its members'
// signatures over types.CouncilDigest (collected offline).
func (s *AccountGov) CouncilAction(ctx context.Context, in *types.GovCouncil, o TxOptions) (*types.Tx, error) {
	return s.a.sendSystem(ctx, types.GovernanceAddress, nil, in, o)
}
