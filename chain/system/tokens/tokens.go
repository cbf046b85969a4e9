package tokens

import (
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Op is one CIP-20 operation.
type Op uint8

// The CIP-20 operations.
const (
	OpCreate Op = iota + 1
	OpTransfer
	OpTransferFrom
	OpApprove
	OpBalanceOf
	OpMint
	OpBurn
)

// Cost is an operation's cycles and cells.
type Cost struct{ Cycles, Cells uint64 }

// CreateBaseCells is token_create's cells before its name and symbol.
const CreateBaseCells = 256

// costs is the Platform Token Costs table of spec 002 §17.3.
var costs = [...]Cost{
	OpTransfer:     {1_000, 64},
	OpTransferFrom: {1_500, 96},
	OpApprove:      {500, 32},
	OpBalanceOf:    {100, 0},
	OpMint:         {1_000, 64},
	OpBurn:         {500, 64},
	OpCreate:       {10_000, CreateBaseCells},
}

// CostOf is the cost of op (spec 002 §17.3). token_create's cells are
// CreateCost's.
func CostOf(op Op) Cost { return costs[op] }

// CreateCost is token_create's cost: 10,000 cycles and 256 cells plus one
// per byte of name and symbol.
func CreateCost(name, symbol string) Cost {
	c := costs[OpCreate]
	c.Cells += uint64(len(name) + len(symbol))
	return c
}

// InstructionCost is the cost of a token instruction (zero for any other).
func InstructionCost(in types.Instruction) Cost {
	switch v := in.(type) {
	case *types.TokenCreate:
		return CreateCost(v.Name, v.Symbol)
	case *types.TokenTransfer:
		return costs[OpTransfer]
	case *types.TokenTransferFrom:
		return costs[OpTransferFrom]
	case *types.TokenApprove:
		return costs[OpApprove]
	case *types.TokenMint:
		return costs[OpMint]
	case *types.TokenBurn:
		return costs[OpBurn]
	}
	return Cost{}
}

// Limits of a token's metadata.
const (
	MaxNameBytes   = 64
	MaxSymbolBytes = 16
	MaxDecimals    = 36
)

// MaxAmount is the largest amount, supply or cap: 2^256 − 1.
var MaxAmount = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// Token is a token's record.
type Token struct {
	_         struct{}      `cbor:",toarray"`
	ID        types.Hash    `json:"id"`
	Name      string        `json:"name"`
	Symbol    string        `json:"symbol"`
	Decimals  uint8         `json:"decimals"`
	Cap       *big.Int      `json:"cap"` // zero: uncapped (MaxAmount bounds the supply)
	Supply    *big.Int      `json:"supply"`
	Admin     types.Address `json:"admin"`
	CreatedAt uint64        `json:"created_at"`
}

// Capped reports whether the token has a supply cap.
func (t *Token) Capped() bool { return t.Cap != nil && t.Cap.Sign() > 0 }

func key(parts ...[]byte) []byte { return system.Key(types.TokenModuleAddress, parts...) }

// Key is the state key of token id's record.
func Key(id types.Hash) []byte { return key([]byte("t/"), id[:]) }

// Prefix prefixes every token record.
func Prefix() []byte { return key([]byte("t/")) }

// BalanceKey is the state key of holder's balance of token id.
func BalanceKey(id types.Hash, holder types.Address) []byte {
	return key([]byte("b/"), id[:], holder[:])
}

// AllowanceKey is the state key of spender's allowance over owner's balance of token id.
func AllowanceKey(id types.Hash, owner, spender types.Address) []byte {
	return key([]byte("a/"), id[:], owner[:], spender[:])
}

// seqKey holds the number of tokens created, which derives the next id.
func seqKey() []byte { return key([]byte("n")) }

// ID derives the id of the seq-th token (from 0), created by creator:
//
//	keccak256("cowboy/cip20" ‖ creator ‖ seq_be8)
func ID(creator types.Address, seq uint64) types.Hash {
	return types.Keccak256([]byte("cowboy/cip20"), creator[:], system.BE8(seq))
}

// Scope is token id's entitlement scope: TokenMint and TokenBurn
// entitlements on it carry mint and burn authority.
func Scope(id types.Hash) entitlement.Scope { return entitlement.TokenScope(id) }

// Read decodes token id's record (nil if absent).
func Read(r state.Reader, id types.Hash) (*Token, error) {
	return system.Get[Token](r, Key(id), "decode token %s", id)
}

// List returns every token in id order.
func List(r state.Reader) ([]Token, error) {
	var out []Token
	err := r.Scan(Prefix(), func(_, v []byte) error {
		var t Token
		if err := codec.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("decode token: %w", err)
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

func readAmount(r state.Reader, k []byte) (*big.Int, error) {
	v, err := system.Get[big.Int](r, k, "decode token amount %x", k)
	if err != nil || v == nil {
		return new(big.Int), err
	}
	return v, nil
}

// BalanceOf is holder's balance of token id (zero if none).
func BalanceOf(r state.Reader, id types.Hash, holder types.Address) (*big.Int, error) {
	return readAmount(r, BalanceKey(id, holder))
}

// Allowance is spender's allowance over owner's balance of token id.
func Allowance(r state.Reader, id types.Hash, owner, spender types.Address) (*big.Int, error) {
	return readAmount(r, AllowanceKey(id, owner, spender))
}

func validLabel(s string, maxLen int) bool {
	return len(s) >= 1 && len(s) <= maxLen && utf8.ValidString(s) && strings.TrimSpace(s) == s
}

// validAmount fails unless v is in 1..MaxAmount.
func validAmount(what string, v *big.Int) error {
	if v == nil || v.Sign() <= 0 || v.Cmp(MaxAmount) > 0 {
		return system.Failf(system.CodeInvalidToken, "InvalidToken: %s must be in 1..2^256-1, not %v", what, v)
	}
	return nil
}
