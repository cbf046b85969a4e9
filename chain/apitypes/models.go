package apitypes

import "github.com/cowboy-foundation/cowboy/chain/types"

// Model is a Model Registry record (GET /v1/models[/{id}], spec 002 §5.1).
type Model struct {
	ID          types.Hash    `json:"id"` // keccak256(weights ‖ arch ‖ tokenizer ‖ license)
	Weights     types.Hash    `json:"weights"`
	Arch        types.Hash    `json:"arch"`
	Tokenizer   types.Hash    `json:"tokenizer"`
	License     types.Hash    `json:"license"`
	Name        string        `json:"name"`
	URI         string        `json:"uri"`
	Publisher   types.Address `json:"publisher"`
	Deposit     string        `json:"deposit"` // base units
	PublishedAt uint64        `json:"published_at"`
	Status      string        `json:"status"`               // "active" or "retired"
	ReleaseAt   uint64        `json:"release_at,omitempty"` // retired: when the deposit can be withdrawn
	Banned      bool          `json:"banned"`
	BanReason   string        `json:"ban_reason,omitempty"`
}
