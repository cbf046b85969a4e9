package sdk

import (
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TxOptions overrides what BuildTx would otherwise fill in. Zero fields are
// filled from the node.
type TxOptions struct {
	Nonce          *uint64
	CyclesLimit    uint64
	CellsLimit     uint64
	MaxFeePerCycle uint64
	MaxFeePerCell  uint64
	TipPerCycle    uint64
	TipPerCell     uint64
	AccessList     []types.AccessTuple
	// Wait makes an Account method wait for the receipt and return a
	// failed one as a *ReceiptError (BuildTx ignores it).
	Wait bool
}

// TxRequest describes a transaction to build: To nil for an actor
// deployment, Instruction nil for a plain transfer.
type TxRequest struct {
	To          *types.Address
	Value       *big.Int
	Instruction types.Instruction
	// ExpectCycles and ExpectCells are the caller's estimate of execution
	// beyond the intrinsic cost (0 for a transfer).
	ExpectCycles, ExpectCells uint64
	Options                   TxOptions
}
