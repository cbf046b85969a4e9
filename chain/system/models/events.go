// Package models is the Model Registry system actor (0x…0D, spec 002
// §5.1): permissionless publication of model revisions under
// model_id = keccak256(weights ‖ arch ‖ tokenizer ‖ license) against a
// refundable deposit (1,000 CBY), retirement with a delayed refund, and
// bans by governance. The Runner Registry checks the model ids runners
// declare, and the Job Dispatcher refuses jobs naming an unusable model.
//
// Governance (0x…09, CIP-12) bans and unbans through the model_ban and
// model_unban instructions sent as the governance address, or by calling
// Module.Ban and Module.Unban from its own handler: both paths share one
// implementation.
package models

import (
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Event topics.
const (
	TopicModelPublished = "ModelPublished"
	TopicModelRetired   = "ModelRetired"
	TopicModelWithdrawn = "ModelWithdrawn"
	TopicModelBanned    = "ModelBanned"
	TopicModelUnbanned  = "ModelUnbanned"
)

// ModelPublishedEvent is the data of the ModelPublished event.
type ModelPublishedEvent struct {
	ID        types.Hash    `cbor:"id" json:"id"`
	Publisher types.Address `cbor:"publisher" json:"publisher"`
	Name      string        `cbor:"name" json:"name"`
	Deposit   *big.Int      `cbor:"deposit" json:"deposit"`
}

// Topic implements system.EventData.
func (*ModelPublishedEvent) Topic() string { return TopicModelPublished }

// ModelRetiredEvent is the data of the ModelRetired event.
type ModelRetiredEvent struct {
	ID        types.Hash `cbor:"id" json:"id"`
	ReleaseAt uint64     `cbor:"release_at" json:"release_at"`
}

// Topic implements system.EventData.
func (*ModelRetiredEvent) Topic() string { return TopicModelRetired }

// ModelWithdrawnEvent is the data of the ModelWithdrawn event.
type ModelWithdrawnEvent struct {
	ID        types.Hash    `cbor:"id" json:"id"`
	Publisher types.Address `cbor:"publisher" json:"publisher"`
	Amount    *big.Int      `cbor:"amount" json:"amount"`
}

// Topic implements system.EventData.
func (*ModelWithdrawnEvent) Topic() string { return TopicModelWithdrawn }

// ModelBannedEvent is the data of the ModelBanned event.
type ModelBannedEvent struct {
	ID     types.Hash `cbor:"id" json:"id"`
	Reason string     `cbor:"reason" json:"reason"`
}

// Topic implements system.EventData.
func (*ModelBannedEvent) Topic() string { return TopicModelBanned }

// ModelUnbannedEvent is the data of the ModelUnbanned event.
type ModelUnbannedEvent struct {
	ID types.Hash `cbor:"id" json:"id"`
}

// Topic implements system.EventData.
func (*ModelUnbannedEvent) Topic() string { return TopicModelUnbanned }
