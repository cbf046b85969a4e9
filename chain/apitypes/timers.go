package apitypes

import (
	"encoding/json"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Receipt kinds (Receipt.Kind, TxResult.Kind).
const (
	// ReceiptKindTx is the receipt of a transaction of the block.
	ReceiptKindTx = "tx"
	// ReceiptKindTimer is a receipt past the block's transactions: a timer
	// execution (tx_hash = keccak256("cowboy/timer" ‖ timer id ‖
	// height_be8)) or the block's timer deferral record (tx_hash =
	// keccak256("cowboy/timer-deferrals" ‖ height_be8)). It has no tx.
	ReceiptKindTimer = "timer"
)

// Timer is one pending timer: GET /v1/timers/{id}, and the items of
// GET /v1/timers?owner=.
type Timer struct {
	ID      types.Hash    `json:"id"`
	Owner   types.Address `json:"owner"`
	Handler string        `json:"handler"`
	// Data is the handler argument (canonical CBOR); Decoded as JSON.
	Data    types.Bytes     `json:"data"`
	Decoded json.RawMessage `json:"decoded,omitempty"`
	// Target is the height at which the timer is next due; a target at or
	// below the queue height means due, waiting for lane space.
	Target    uint64         `json:"target"`
	Interval  uint64         `json:"interval"` // 0: one-shot
	Deposit   string         `json:"deposit"`  // base units, held in escrow
	GBA       *types.Address `json:"gba,omitempty"`
	Deferrals uint64         `json:"deferrals"`
	CreatedAt uint64         `json:"created_at"`
	Due       bool           `json:"due"`
}

// TimerList is GET /v1/timers?owner=.
type TimerList struct {
	Owner  types.Address `json:"owner"`
	Height uint64        `json:"height"`
	Timers []Timer       `json:"timers"`
}

// TimerStats is GET /v1/timers/stats: the queue's counters and economics.
type TimerStats struct {
	// Height is the last height the queue advanced to (0: never used).
	Height uint64 `json:"height"`
	// Basefee is the timer basefee: the burned scheduling surcharge of the
	// first 16 timers targeting a height.
	Basefee uint64 `json:"basefee"`
	Tier1   uint64 `json:"tier1"`
	Tier2   uint64 `json:"tier2"`
	Tier3   uint64 `json:"tier3"`
	Due     uint64 `json:"due"`
	Depth   uint64 `json:"depth"`
	// BaseDeposit is the deposit of an owner's first 100 timers.
	BaseDeposit string `json:"base_deposit"`
	// LaneBudget is the cycles the timer lane may use per block.
	LaneBudget  uint64 `json:"lane_budget"`
	MaxPerOwner uint64 `json:"max_per_owner"`
}
