package sdk

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"net/http"
	"net/url"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/system/tokens"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// CIP-20 platform tokens (spec 002 §17.3): reads from the token module's
// API and its instructions, sent to types.TokenModuleAddress. A failure's
// receipt carries the module's code (ErrTokenBalance, ErrTokenAllowance,
// ErrSupplyCapExceeded, ErrNotMinter, … through ReceiptErr).

// SendToken builds, signs and submits a token instruction (types.Token*),
// its limits set from the §17.3 cost table (tokens.InstructionCost).
func (c *Client) SendToken(ctx context.Context, key *ecdsa.PrivateKey, in types.Instruction, o TxOptions) (*types.Tx, error) {
	to, cost := types.TokenModuleAddress, tokens.InstructionCost(in)
	tx, err := c.BuildTx(ctx, key, TxRequest{To: &to, Instruction: in, ExpectCycles: cost.Cycles, ExpectCells: cost.Cells, Options: o})
	if err != nil {
		return nil, err
	}
	if _, err := c.Submit(ctx, tx); err != nil {
		return nil, err
	}
	return tx, nil
}

// Tokens lists the platform tokens in id order (GET /v1/tokens).
func (c *Client) Tokens(ctx context.Context) ([]apitypes.Token, error) {
	var out []apitypes.Token
	return out, c.do(ctx, http.MethodGet, "/v1/tokens", nil, &out)
}

// Token returns a token's metadata and supply (GET /v1/tokens/{id}).
func (c *Client) Token(ctx context.Context, id types.Hash) (*apitypes.Token, error) {
	var out apitypes.Token
	return &out, c.do(ctx, http.MethodGet, "/v1/tokens/"+id.String(), nil, &out)
}

// TokenBalance returns holder's balance of token id and, with a non-nil
// spender, spender's allowance over it (GET /v1/tokens/{id}/balances/{holder}).
func (c *Client) TokenBalance(ctx context.Context, id types.Hash, holder types.Address, spender *types.Address) (*apitypes.TokenBalance, error) {
	p := "/v1/tokens/" + id.String() + "/balances/" + holder.String()
	if spender != nil {
		p += "?spender=" + url.QueryEscape(spender.String())
	}
	var out apitypes.TokenBalance
	return &out, c.do(ctx, http.MethodGet, p, nil, &out)
}

// CreateToken creates a token; the sender is its admin and receives
// in.Initial. The new id is the receipt's return value (tokens.ID).
func (c *Client) CreateToken(ctx context.Context, key *ecdsa.PrivateKey, in *types.TokenCreate, o TxOptions) (*types.Tx, error) {
	return c.SendToken(ctx, key, in, o)
}

// TransferToken moves amount of token id from the sender to to.
func (c *Client) TransferToken(ctx context.Context, key *ecdsa.PrivateKey, id types.Hash, to types.Address, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return c.SendToken(ctx, key, &types.TokenTransfer{ID: id, To: to, Amount: amount}, o)
}

// TransferTokenFrom moves amount of token id from owner to to against the
// sender's allowance.
func (c *Client) TransferTokenFrom(ctx context.Context, key *ecdsa.PrivateKey, id types.Hash, owner, to types.Address, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return c.SendToken(ctx, key, &types.TokenTransferFrom{ID: id, From: owner, To: to, Amount: amount}, o)
}

// ApproveToken sets spender's allowance over the sender's balance of token id.
func (c *Client) ApproveToken(ctx context.Context, key *ecdsa.PrivateKey, id types.Hash, spender types.Address, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return c.SendToken(ctx, key, &types.TokenApprove{ID: id, Spender: spender, Amount: amount}, o)
}

// MintToken mints amount of token id to to (the admin or a TokenMint
// entitlement holder; within the cap).
func (c *Client) MintToken(ctx context.Context, key *ecdsa.PrivateKey, id types.Hash, to types.Address, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return c.SendToken(ctx, key, &types.TokenMint{ID: id, To: to, Amount: amount}, o)
}

// BurnToken burns amount of the sender's balance of token id (the admin or
// a TokenBurn entitlement holder).
func (c *Client) BurnToken(ctx context.Context, key *ecdsa.PrivateKey, id types.Hash, amount *big.Int, o TxOptions) (*types.Tx, error) {
	return c.SendToken(ctx, key, &types.TokenBurn{ID: id, Amount: amount}, o)
}
