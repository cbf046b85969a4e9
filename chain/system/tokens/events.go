// Package tokens is the CIP-20 platform token module (0x…0E, spec 002
// §17.3): native fungible tokens with metadata (name, symbol, decimals),
// an optional supply cap enforced on mint, balances, allowances and
// events, at the cost table's exact cycles and cells.
//
// Transactions reach it as the token_* instructions (kinds 130–135);
// actors reach the same operations as host ops (token_create,
// token_transfer, …; cowboy_sdk.tokens), registered on the actor runtime
// by RegisterOps. Mint and burn authority belongs to the token's admin
// (its creator) and to holders of a TokenMint / TokenBurn entitlement on
// the token's scope (chain/system/entitlements), which the admin grants.
package tokens

import (
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Event topics. Every token event is emitted by the module (0x…0E).
const (
	TopicTokenCreated  = "TokenCreated"
	TopicTokenTransfer = "TokenTransfer" // mint: From is the zero address; burn: To is
	TopicTokenApproval = "TokenApproval"
)

// TokenCreatedEvent is the data of the TokenCreated event.
type TokenCreatedEvent struct {
	ID       types.Hash    `cbor:"id" json:"id"`
	Admin    types.Address `cbor:"admin" json:"admin"`
	Name     string        `cbor:"name" json:"name"`
	Symbol   string        `cbor:"symbol" json:"symbol"`
	Decimals uint8         `cbor:"decimals" json:"decimals"`
	Cap      *big.Int      `cbor:"cap" json:"cap"` // zero: uncapped
}

// Topic implements system.EventData.
func (*TokenCreatedEvent) Topic() string { return TopicTokenCreated }

// TransferEvent is the data of the TokenTransfer event (transfers, mints
// and burns, as ERC-20's Transfer).
type TransferEvent struct {
	ID     types.Hash    `cbor:"id" json:"id"`
	From   types.Address `cbor:"from" json:"from"`
	To     types.Address `cbor:"to" json:"to"`
	Amount *big.Int      `cbor:"amount" json:"amount"`
}

// Topic implements system.EventData.
func (*TransferEvent) Topic() string { return TopicTokenTransfer }

// ApprovalEvent is the data of the TokenApproval event.
type ApprovalEvent struct {
	ID      types.Hash    `cbor:"id" json:"id"`
	Owner   types.Address `cbor:"owner" json:"owner"`
	Spender types.Address `cbor:"spender" json:"spender"`
	Amount  *big.Int      `cbor:"amount" json:"amount"`
}

// Topic implements system.EventData.
func (*ApprovalEvent) Topic() string { return TopicTokenApproval }
