package types

import "math/big"

// CIP-20 platform token instructions (spec 002 §17.3), sent to the token
// module (0x…0E) without value. Amounts are in the token's base units.
const (
	KindTokenCreate       InstructionKind = 130 // create a token; the sender is its admin and gets Initial
	KindTokenTransfer     InstructionKind = 131 // move Amount of the sender's balance to To
	KindTokenTransferFrom InstructionKind = 132 // move Amount from From to To against the sender's allowance
	KindTokenApprove      InstructionKind = 133 // set Spender's allowance over the sender's balance
	KindTokenMint         InstructionKind = 134 // mint Amount to To (the admin or a TokenMint entitlement holder), up to the cap
	KindTokenBurn         InstructionKind = 135 // burn Amount of the sender's balance (the admin or a TokenBurn holder)
)

// tokenKinds registers the kinds declared in this file (kinds.go).
var tokenKinds = []kindSpec{
	{KindTokenCreate, "token_create", LaneUser, newOf[TokenCreate]},
	{KindTokenTransfer, "token_transfer", LaneUser, newOf[TokenTransfer]},
	{KindTokenTransferFrom, "token_transfer_from", LaneUser, newOf[TokenTransferFrom]},
	{KindTokenApprove, "token_approve", LaneUser, newOf[TokenApprove]},
	{KindTokenMint, "token_mint", LaneUser, newOf[TokenMint]},
	{KindTokenBurn, "token_burn", LaneUser, newOf[TokenBurn]},
}

// TokenCreate creates a CIP-20 token. Cap is the supply cap (nil or zero:
// uncapped); Initial (at most Cap) is minted to the sender, who becomes
// the token's admin (its mint and burn authority, and the owner of its
// entitlement scope).
type TokenCreate struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	Name     string
	Symbol   string
	Decimals uint8
	Cap      *big.Int
	Initial  *big.Int
}

// TokenTransfer moves Amount of token ID from the sender to To.
type TokenTransfer struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	ID     Hash
	To     Address
	Amount *big.Int
}

// TokenTransferFrom moves Amount of token ID from From to To, spending the
// sender's allowance from From.
type TokenTransferFrom struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	ID     Hash
	From   Address
	To     Address
	Amount *big.Int
}

// TokenApprove sets Spender's allowance over the sender's balance of token
// ID to Amount (zero revokes it).
type TokenApprove struct {
	_       struct{} `cbor:",toarray"`
	Kind    InstructionKind
	ID      Hash
	Spender Address
	Amount  *big.Int
}

// TokenMint mints Amount of token ID to To.
type TokenMint struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	ID     Hash
	To     Address
	Amount *big.Int
}

// TokenBurn burns Amount of the sender's balance of token ID.
type TokenBurn struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	ID     Hash
	Amount *big.Int
}

func (TokenCreate) InstructionKind() InstructionKind       { return KindTokenCreate }
func (TokenTransfer) InstructionKind() InstructionKind     { return KindTokenTransfer }
func (TokenTransferFrom) InstructionKind() InstructionKind { return KindTokenTransferFrom }
func (TokenApprove) InstructionKind() InstructionKind      { return KindTokenApprove }
func (TokenMint) InstructionKind() InstructionKind         { return KindTokenMint }
func (TokenBurn) InstructionKind() InstructionKind         { return KindTokenBurn }
