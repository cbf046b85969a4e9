package storage

import (
	"github.com/cowboy-foundation/cowboy/chain/types"
	"math/big"
)

// Event topics.
const (
	TopicRelayRegistered   = "RelayRegistered"
	TopicRelayDeregistered = "RelayDeregistered"
	TopicVolumeCreated     = "VolumeCreated"
	TopicStorageCommitment = "StorageCommitment"
	TopicTokenRevoked      = "TokenRevoked"
	TopicVolumeRevived     = "VolumeRevived"
	TopicVolumeFunded      = "VolumeFunded"
	TopicChallengeFailed   = "ChallengeFailed"
	TopicChallengeAnswered = "ChallengeAnswered"
	TopicRentPaid          = "RentPaid"
	TopicPlacementRefused  = "PlacementRefused"
	TopicRelaySlashed      = "RelaySlashed"
	TopicShardMoved        = "ShardMoved"
)

// RelayRegisteredEvent is the data of the RelayRegistered event.
type RelayRegisteredEvent struct {
	Relay types.Address `cbor:"relay" json:"relay"`
	Addr  string        `cbor:"addr" json:"addr"`
	Stake *big.Int      `cbor:"stake" json:"stake"`
}

// Topic implements system.EventData.
func (*RelayRegisteredEvent) Topic() string { return TopicRelayRegistered }

// RelayDeregisteredEvent is the data of the RelayDeregistered event.
type RelayDeregisteredEvent struct {
	Relay    types.Address `cbor:"relay" json:"relay"`
	Stake    *big.Int      `cbor:"stake" json:"stake"`
	UnbondAt uint64        `cbor:"unbond_at" json:"unbond_at"`
}

// Topic implements system.EventData.
func (*RelayDeregisteredEvent) Topic() string { return TopicRelayDeregistered }

// VolumeCreatedEvent is the data of the VolumeCreated event.
type VolumeCreatedEvent struct {
	Volume types.Hash    `cbor:"volume" json:"volume"`
	Owner  types.Address `cbor:"owner" json:"owner"`
	K      uint64        `cbor:"k" json:"k"`
	M      uint64        `cbor:"m" json:"m"`
}

// Topic implements system.EventData.
func (*VolumeCreatedEvent) Topic() string { return TopicVolumeCreated }

// StorageCommitmentEvent is the data of the StorageCommitment event.
type StorageCommitmentEvent struct {
	Volume  types.Hash `cbor:"volume" json:"volume"`
	Root    types.Hash `cbor:"root" json:"root"`
	Version uint64     `cbor:"version" json:"version"`
	Size    uint64     `cbor:"size" json:"size"`
	Relays  int        `cbor:"relays" json:"relays"`
}

// Topic implements system.EventData.
func (*StorageCommitmentEvent) Topic() string { return TopicStorageCommitment }

// TokenRevokedEvent is the data of the TokenRevoked event.
type TokenRevokedEvent struct {
	Volume types.Hash `cbor:"volume" json:"volume"`
	Token  types.Hash `cbor:"token" json:"token"`
}

// Topic implements system.EventData.
func (*TokenRevokedEvent) Topic() string { return TopicTokenRevoked }

// VolumeRevivedEvent is the data of the VolumeRevived event.
type VolumeRevivedEvent struct {
	Volume  types.Hash `cbor:"volume" json:"volume"`
	Evicted uint64     `cbor:"evicted" json:"evicted"`
}

// Topic implements system.EventData.
func (*VolumeRevivedEvent) Topic() string { return TopicVolumeRevived }

// VolumeFundedEvent is the data of the VolumeFunded event.
type VolumeFundedEvent struct {
	Volume types.Hash    `cbor:"volume" json:"volume"`
	From   types.Address `cbor:"from" json:"from"`
	Value  *big.Int      `cbor:"value" json:"value"`
	Escrow *big.Int      `cbor:"escrow" json:"escrow"`
}

// Topic implements system.EventData.
func (*VolumeFundedEvent) Topic() string { return TopicVolumeFunded }

// ChallengeFailedEvent is the data of the ChallengeFailed event.
type ChallengeFailedEvent struct {
	Volume types.Hash    `cbor:"volume" json:"volume"`
	Relay  types.Address `cbor:"relay" json:"relay"`
	Epoch  uint64        `cbor:"epoch" json:"epoch"`
	Error  string        `cbor:"error" json:"error"`
}

// Topic implements system.EventData.
func (*ChallengeFailedEvent) Topic() string { return TopicChallengeFailed }

// ChallengeAnsweredEvent is the data of the ChallengeAnswered event.
type ChallengeAnsweredEvent struct {
	Volume types.Hash    `cbor:"volume" json:"volume"`
	Relay  types.Address `cbor:"relay" json:"relay"`
	Epoch  uint64        `cbor:"epoch" json:"epoch"`
}

// Topic implements system.EventData.
func (*ChallengeAnsweredEvent) Topic() string { return TopicChallengeAnswered }

// RentPaidEvent is the data of the RentPaid event.
type RentPaidEvent struct {
	Relay   types.Address `cbor:"relay" json:"relay"`
	Epoch   uint64        `cbor:"epoch" json:"epoch"`
	Volumes int           `cbor:"volumes" json:"volumes"`
	Amount  *big.Int      `cbor:"amount" json:"amount"`
}

// Topic implements system.EventData.
func (*RentPaidEvent) Topic() string { return TopicRentPaid }

// PlacementRefusedEvent is the data of the PlacementRefused event.
type PlacementRefusedEvent struct {
	Volume  types.Hash    `cbor:"volume" json:"volume"`
	Version uint64        `cbor:"version" json:"version"`
	Relay   types.Address `cbor:"relay" json:"relay"`
}

// Topic implements system.EventData.
func (*PlacementRefusedEvent) Topic() string { return TopicPlacementRefused }

// RelaySlashedEvent is the data of the RelaySlashed event.
type RelaySlashedEvent struct {
	Relay       types.Address `cbor:"relay" json:"relay"`
	Amount      *big.Int      `cbor:"amount" json:"amount"`
	Consecutive uint64        `cbor:"consecutive" json:"consecutive"`
}

// Topic implements system.EventData.
func (*RelaySlashedEvent) Topic() string { return TopicRelaySlashed }

// ShardMovedEvent is the data of the ShardMoved event (repair_placement).
type ShardMovedEvent struct {
	Volume   types.Hash    `cbor:"volume" json:"volume"`
	Shard    types.Hash    `cbor:"shard" json:"shard"`
	From     types.Address `cbor:"from" json:"from"`
	To       types.Address `cbor:"to" json:"to"`
	Repairer types.Address `cbor:"repairer" json:"repairer"`
}

// Topic implements system.EventData.
func (*ShardMovedEvent) Topic() string { return TopicShardMoved }
