package apitypes

import "github.com/cowboy-foundation/cowboy/chain/types"

// BridgeSubscription is an actor's subscription to an Ethereum contract
// event (GET /v1/bridge/subscriptions/{actor}; chain/system/ethbridge).
type BridgeSubscription struct {
	Actor     types.Address `json:"actor"`
	ChainID   uint64        `json:"chain_id"`
	Contract  types.Address `json:"contract"`
	Topic     types.Hash    `json:"topic"`
	Handler   string        `json:"handler"`
	Balance   string        `json:"balance"` // prepaid CBY base units
	Delivered uint64        `json:"delivered"`
}
