package ethbridge

import (
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Event topics; every bridge event is emitted by the module (0x…11).
const (
	TopicSubscribed     = "BridgeSubscribed"
	TopicAttested       = "BridgeAttested"
	TopicEventDelivered = "BridgeEventDelivered"
	TopicWrapped        = "BridgeWrapped"
	TopicMinted         = "BridgeMinted"
	TopicBurned         = "BridgeBurned"
)

// SubscribedEvent: a subscription was created or topped up.
type SubscribedEvent struct {
	Actor    types.Address `cbor:"actor" json:"actor"`
	ChainID  uint64        `cbor:"chain_id" json:"chain_id"`
	Contract types.Address `cbor:"contract" json:"contract"`
	Event    types.Hash    `cbor:"event" json:"event"` // topic 0, the event signature hash
	Handler  string        `cbor:"handler" json:"handler"`
	Paid     *big.Int      `cbor:"paid" json:"paid"`
	Balance  *big.Int      `cbor:"balance" json:"balance"`
}

// Topic implements system.EventData.
func (*SubscribedEvent) Topic() string { return TopicSubscribed }

// AttestedEvent: a member attested an event or deposit that still awaits
// the threshold.
type AttestedEvent struct {
	ID     types.Hash    `cbor:"id" json:"id"`
	Member types.Address `cbor:"member" json:"member"`
	Votes  uint64        `cbor:"votes" json:"votes"` // agreeing attestations so far
}

// Topic implements system.EventData.
func (*AttestedEvent) Topic() string { return TopicAttested }

// EventDeliveredEvent: an Ethereum log reached the actor's handler. OK is
// false (with Code) if the handler failed: its effects were reverted, the
// event still counts as delivered and paid.
type EventDeliveredEvent struct {
	ID          types.Hash    `cbor:"id" json:"id"`
	Actor       types.Address `cbor:"actor" json:"actor"`
	ChainID     uint64        `cbor:"chain_id" json:"chain_id"`
	Contract    types.Address `cbor:"contract" json:"contract"`
	BlockNumber uint64        `cbor:"block_number" json:"block_number"`
	TxHash      types.Hash    `cbor:"tx_hash" json:"tx_hash"`
	LogIndex    uint64        `cbor:"log_index" json:"log_index"`
	Fee         *big.Int      `cbor:"fee" json:"fee"`
	OK          bool          `cbor:"ok" json:"ok"`
	Code        uint32        `cbor:"code" json:"code"`
}

// Topic implements system.EventData.
func (*EventDeliveredEvent) Topic() string { return TopicEventDelivered }

// WrappedEvent: a wrapped token was created for an Ethereum asset.
type WrappedEvent struct {
	ChainID uint64        `cbor:"chain_id" json:"chain_id"`
	Asset   types.Address `cbor:"asset" json:"asset"`
	Token   types.Hash    `cbor:"token" json:"token"`
}

// Topic implements system.EventData.
func (*WrappedEvent) Topic() string { return TopicWrapped }

// MintedEvent: an attested deposit was minted.
type MintedEvent struct {
	ID     types.Hash    `cbor:"id" json:"id"`
	Token  types.Hash    `cbor:"token" json:"token"`
	To     types.Address `cbor:"to" json:"to"`
	Amount *big.Int      `cbor:"amount" json:"amount"`
}

// Topic implements system.EventData.
func (*MintedEvent) Topic() string { return TopicMinted }

// BurnedEvent: wrapped tokens were burned; the bridge unlocks Amount of
// Asset to Recipient on Ethereum.
type BurnedEvent struct {
	Token     types.Hash    `cbor:"token" json:"token"`
	ChainID   uint64        `cbor:"chain_id" json:"chain_id"`
	Asset     types.Address `cbor:"asset" json:"asset"`
	Holder    types.Address `cbor:"holder" json:"holder"`
	Recipient types.Address `cbor:"recipient" json:"recipient"`
	Amount    *big.Int      `cbor:"amount" json:"amount"`
}

// Topic implements system.EventData.
func (*BurnedEvent) Topic() string { return TopicBurned }
