package apitypes

import "github.com/cowboy-foundation/cowboy/chain/types"

// Validators is GET /v1/validators: the current epoch's consensus set and
// every registered validator.
type Validators struct {
	Epoch       uint64      `json:"epoch"`
	StartHeight uint64      `json:"start_height"`
	Members     []SetMember `json:"members"` // the consensus set, in index order
	Validators  []Validator `json:"validators"`
	Height      uint64      `json:"height"`
}

// SetMember is one member of the epoch's consensus set.
type SetMember struct {
	Index   int           `json:"index"`
	Address types.Address `json:"address"`
	Weight  uint64        `json:"weight"` // voting weight: stake in whole CBY
}

// Validator is one Validator Registry record.
type Validator struct {
	Address      types.Address `json:"address"`
	Stake        string        `json:"stake"`
	Status       string        `json:"status"` // pending, active, exiting, exited
	Jailed       bool          `json:"jailed"`
	JailedUntil  uint64        `json:"jailed_until_ms,omitempty"`
	Missed       uint64        `json:"missed"`
	RegisteredAt uint64        `json:"registered_at"`
}
