package sdk

import (
	"context"
	"math/big"
	"net/http"
	"net/url"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/system/tokens"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TokensService is the client's service for CIP-20 platform tokens: token
// records and balances; signed create, transfer, approve, mint and burn
// (/v1/tokens).
type TokensService struct{ c *Client }

// Tokens returns the service for CIP-20 platform tokens.
func (c *Client) Tokens() *TokensService { return &TokensService{c: c} }

// AccountTokens is the Tokens service bound to an account: its transaction
// methods sign with the account's key and submit as Account describes
// (nonces, fees, waiting); its reads are those of TokensService.
type AccountTokens struct {
	*TokensService
	a *Account
}

// Tokens returns the Tokens service bound to a.
func (a *Account) Tokens() *AccountTokens { return &AccountTokens{TokensService: a.c.Tokens(), a: a} }

// CIP-20 platform tokens (spec 002 §17.3): reads from the token module's
// API and its instructions, sent to types.TokenModuleAddress. A failure's
// receipt carries the module's code (ErrTokenBalance, ErrTokenAllowance,
// ErrSupplyCapExceeded, ErrNotMinter, … through ReceiptErr).

// Send builds, signs and submits a token instruction (types.Token*),
// its limits set from the §17.3 cost table (tokens.InstructionCost).
func (s *AccountTokens) Send(ctx context.Context, in types.Instruction, o TxOptions) (*types.Tx, error) {
	to, cost := types.TokenModuleAddress, tokens.InstructionCost(in)
	return s.a.send(ctx, TxRequest{To: &to, Instruction: in, ExpectCycles: cost.Cycles, ExpectCells: cost.Cells, Options: o})
}

// List lists the platform tokens in id order (GET /v1/tokens).
func (s *TokensService) List(ctx context.Context) ([]apitypes.Token, error) {
	var out []apitypes.Token
	return out, s.c.do(ctx, http.MethodGet, "/v1/tokens", nil, &out)
}

// Get returns a token's metadata and supply (GET /v1/tokens/{id}).
func (s *TokensService) Get(ctx context.Context, id types.Hash) (*apitypes.Token, error) {
	var out apitypes.Token
	return &out, s.c.do(ctx, http.MethodGet, "/v1/tokens/"+id.String(), nil, &out)
}

// Balance returns holder's balance of token id and, with a non-nil
// spender, spender's allowance over it (GET /v1/tokens/{id}/balances/{holder}).
func (s *TokensService) Balance(ctx context.Context, id types.Hash, holder types.Address, spender *types.Address) (*apitypes.TokenBalance, error) {
	p := "/v1/tokens/" + id.String() + "/balances/" + holder.String()
	if spender != nil {
		p += "?spender=" + url.QueryEscape(spender.String())
	}
	var out apitypes.TokenBalance
	return &out, s.c.do(ctx, http.MethodGet, p, nil, &out)
}

// Create creates a token; the sender is its admin and receives
// in.Initial. The new id is the receipt's return value (tokens.ID).
func (s *AccountTokens) Create(ctx context.Context, in *types.TokenCreate, o TxOptions) (*types.Tx, error) {
	return s.Send(ctx, in, o)
}

// Transfer moves amount of token id from the sender to to.
func (s *AccountTokens) Transfer(ctx context.Context, id types.Hash, to types.Address, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return s.Send(ctx, &types.TokenTransfer{ID: id, To: to, Amount: amount}, o)
}

// TransferFrom moves amount of token id from owner to to against the
// sender's allowance.
func (s *AccountTokens) TransferFrom(ctx context.Context, id types.Hash, owner, to types.Address, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return s.Send(ctx, &types.TokenTransferFrom{ID: id, From: owner, To: to, Amount: amount}, o)
}

// Approve sets spender's allowance over the sender's balance of token id.
func (s *AccountTokens) Approve(ctx context.Context, id types.Hash, spender types.Address, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return s.Send(ctx, &types.TokenApprove{ID: id, Spender: spender, Amount: amount}, o)
}

// Mint mints amount of token id to to (the admin or a TokenMint
// entitlement holder; within the cap).
func (s *AccountTokens) Mint(ctx context.Context, id types.Hash, to types.Address, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return s.Send(ctx, &types.TokenMint{ID: id, To: to, Amount: amount}, o)
}

// Burn burns amount of the sender's balance of token id (the admin or
// a TokenBurn entitlement holder).
func (s *AccountTokens) Burn(ctx context.Context, id types.Hash, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return s.Send(ctx, &types.TokenBurn{ID: id, Amount: amount}, o)
}
