package types

import "math/big"

// Ethereum bridge instruction kinds (spec 002 §16.2–§16.4;
// chain/system/ethbridge, docs/ETHEREUM.md). They go to
// EthBridgeAddress.
const (
	KindBridgeSubscribe InstructionKind = 140 // an actor's paid subscription to one Ethereum contract event
	KindBridgeEvent     InstructionKind = 141 // a bridge member attests a confirmed Ethereum log for a subscriber
	KindBridgeWrap      InstructionKind = 142 // a bridge member creates the wrapped CIP-20 token of an Ethereum asset
	KindBridgeMint      InstructionKind = 143 // a bridge member attests a deposit: mint wrapped tokens
	KindBridgeBurn      InstructionKind = 144 // a holder burns wrapped tokens to unlock them on Ethereum
)

// bridgeKinds registers the kinds declared in this file (kinds.go).
var bridgeKinds = []kindSpec{
	{KindBridgeSubscribe, "bridge_subscribe", LaneUser, newOf[BridgeSubscribe]},
	{KindBridgeEvent, "bridge_event", LaneUser, newOf[BridgeEvent]},
	{KindBridgeWrap, "bridge_wrap", LaneUser, newOf[BridgeWrap]},
	{KindBridgeMint, "bridge_mint", LaneUser, newOf[BridgeMint]},
	{KindBridgeBurn, "bridge_burn", LaneUser, newOf[BridgeBurn]},
}

// BridgeSubscribe subscribes Actor to the logs of Contract on Ethereum
// chain ChainID whose first topic (the event signature hash) is Topic;
// they are delivered to Actor's Handler. The transaction's value (CBY)
// is the subscription's prepaid balance; a second subscribe tops it up.
type BridgeSubscribe struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	Actor    Address
	ChainID  uint64
	Contract Address
	Topic    Hash
	Handler  string
}

// BridgeEvent is a bridge member's attestation of one confirmed Ethereum
// log for subscriber Actor.
type BridgeEvent struct {
	_           struct{} `cbor:",toarray"`
	Kind        InstructionKind
	Actor       Address
	ChainID     uint64
	Contract    Address
	BlockNumber uint64
	TxHash      Hash
	LogIndex    uint64
	Topics      []Hash
	Data        []byte
}

// BridgeWrap creates the wrapped CIP-20 token of Asset (an ERC-20
// address, or the zero address for native ETH) on chain ChainID.
type BridgeWrap struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	ChainID  uint64
	Asset    Address
	Name     string
	Symbol   string
	Decimals uint8
}

// BridgeMint is a bridge member's attestation of a deposit of Amount of
// Asset on chain ChainID (the lock log TxHash/LogIndex), to be minted as
// the wrapped token to To.
type BridgeMint struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	ChainID  uint64
	Asset    Address
	TxHash   Hash
	LogIndex uint64
	To       Address
	Amount   *big.Int
}

// BridgeBurn burns Amount of the sender's wrapped token ID so that the
// bridge unlocks it to Recipient on Ethereum.
type BridgeBurn struct {
	_         struct{} `cbor:",toarray"`
	Kind      InstructionKind
	ID        Hash
	Amount    *big.Int
	Recipient Address
}

func (BridgeSubscribe) InstructionKind() InstructionKind { return KindBridgeSubscribe }
func (BridgeEvent) InstructionKind() InstructionKind     { return KindBridgeEvent }
func (BridgeWrap) InstructionKind() InstructionKind      { return KindBridgeWrap }
func (BridgeMint) InstructionKind() InstructionKind      { return KindBridgeMint }
func (BridgeBurn) InstructionKind() InstructionKind      { return KindBridgeBurn }
