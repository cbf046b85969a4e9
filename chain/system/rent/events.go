package rent

import (
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Event topics. Every rent event is emitted by the module (0x…0F); an
// actor or runner that depends on another actor watches them by topic and
// the Actor field.
const (
	TopicRentCharged      = "RentCharged"
	TopicRentOverdue      = "RentOverdue"      // the actor entered the grace period
	TopicEvictionImminent = "EvictionImminent" // the actor entered the warning period
	TopicActorEvicted     = "ActorEvicted"
	TopicActorRestored    = "ActorRestored"
	TopicRentPaid         = "RentPaid"
	TopicStorageBonded    = "StorageBonded"
)

// ChargedEvent is the data of RentCharged: one assessment's settlement.
type ChargedEvent struct {
	Actor  types.Address `cbor:"actor" json:"actor"`
	Epoch  uint64        `cbor:"epoch" json:"epoch"`
	Epochs uint64        `cbor:"epochs" json:"epochs"`
	Paid   *big.Int      `cbor:"paid" json:"paid"`
	Debt   *big.Int      `cbor:"debt" json:"debt"`
}

// Topic implements system.EventData.
func (*ChargedEvent) Topic() string { return TopicRentCharged }

// Standing is the data of RentOverdue and EvictionImminent.
type Standing struct {
	Actor      types.Address `cbor:"actor" json:"actor"`
	Debt       *big.Int      `cbor:"debt" json:"debt"`
	Since      uint64        `cbor:"since" json:"since"`             // first unpaid epoch
	EvictEpoch uint64        `cbor:"evict_epoch" json:"evict_epoch"` // the epoch of eviction if unpaid
}

// OverdueEvent is the data of RentOverdue.
type OverdueEvent Standing

// Topic implements system.EventData.
func (*OverdueEvent) Topic() string { return TopicRentOverdue }

// ImminentEvent is the data of EvictionImminent.
type ImminentEvent Standing

// Topic implements system.EventData.
func (*ImminentEvent) Topic() string { return TopicEvictionImminent }

// EvictedEvent is the data of ActorEvicted.
type EvictedEvent struct {
	Actor   types.Address `cbor:"actor" json:"actor"`
	Root    types.Hash    `cbor:"root" json:"root"`
	Bytes   uint64        `cbor:"bytes" json:"bytes"`
	Chunks  uint64        `cbor:"chunks" json:"chunks"`
	Debt    *big.Int      `cbor:"debt" json:"debt"`
	Burned  *big.Int      `cbor:"bond_burned" json:"bond_burned"`
	Timers  uint64        `cbor:"timers" json:"timers"`
	Entries uint64        `cbor:"entries" json:"entries"`
}

// Topic implements system.EventData.
func (*EvictedEvent) Topic() string { return TopicActorEvicted }

// RestoredEvent is the data of ActorRestored.
type RestoredEvent struct {
	Actor types.Address `cbor:"actor" json:"actor"`
	Root  types.Hash    `cbor:"root" json:"root"`
	Bytes uint64        `cbor:"bytes" json:"bytes"`
}

// Topic implements system.EventData.
func (*RestoredEvent) Topic() string { return TopicActorRestored }

// PaidEvent is the data of RentPaid (rent_pay and rent_sponsor).
type PaidEvent struct {
	Actor   types.Address `cbor:"actor" json:"actor"`
	Payer   types.Address `cbor:"payer" json:"payer"`
	Amount  *big.Int      `cbor:"amount" json:"amount"`
	Debt    *big.Int      `cbor:"debt" json:"debt"`
	Prepaid *big.Int      `cbor:"prepaid" json:"prepaid"`
}

// Topic implements system.EventData.
func (*PaidEvent) Topic() string { return TopicRentPaid }

// BondedEvent is the data of StorageBonded.
type BondedEvent struct {
	Actor types.Address `cbor:"actor" json:"actor"`
	Quota uint64        `cbor:"quota" json:"quota"`
	Bond  *big.Int      `cbor:"bond" json:"bond"`
}

// Topic implements system.EventData.
func (*BondedEvent) Topic() string { return TopicStorageBonded }

// SweepReceiptHash is the TxHash of the receipt that carries the rent
// sweep's events (charges, standings, evictions) of the block at height:
//
//	keccak256("cowboy/rent-sweep" ‖ height_be8)
func SweepReceiptHash(height uint64) types.Hash {
	return types.Keccak256([]byte("cowboy/rent-sweep"), system.BE8(height))
}
