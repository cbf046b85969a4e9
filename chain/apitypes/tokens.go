package apitypes

import "github.com/cowboy-foundation/cowboy/chain/types"

// Token is a CIP-20 platform token (GET /v1/tokens[/{id}], spec 002 §17.3).
// Amounts are decimal strings in the token's base units.
type Token struct {
	ID        types.Hash    `json:"id"`
	Name      string        `json:"name"`
	Symbol    string        `json:"symbol"`
	Decimals  uint8         `json:"decimals"`
	Cap       string        `json:"cap"` // "0": uncapped
	Supply    string        `json:"supply"`
	Admin     types.Address `json:"admin"`
	CreatedAt uint64        `json:"created_at"`
}

// TokenBalance is a holder's balance of a token and, with ?spender=, the
// spender's allowance over it (GET /v1/tokens/{id}/balances/{address}).
type TokenBalance struct {
	Token     types.Hash     `json:"token"`
	Holder    types.Address  `json:"holder"`
	Balance   string         `json:"balance"`
	Spender   *types.Address `json:"spender,omitempty"`
	Allowance string         `json:"allowance,omitempty"`
}
