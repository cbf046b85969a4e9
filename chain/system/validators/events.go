package validators

import (
	"github.com/cowboy-foundation/cowboy/chain/types"
	"math/big"
)

// Event topics.
const (
	TopicValidatorRegistered = "ValidatorRegistered"
	TopicValidatorExiting    = "ValidatorExiting"
	TopicValidatorWithdrawn  = "ValidatorWithdrawn"
	TopicValidatorUnjailed   = "ValidatorUnjailed"
	TopicValidatorSlashed    = "ValidatorSlashed"
	TopicValidatorJailed     = "ValidatorJailed"
)

// ValidatorRegisteredEvent is the data of the ValidatorRegistered event.
type ValidatorRegisteredEvent struct {
	Validator types.Address `cbor:"validator" json:"validator"`
	Stake     *big.Int      `cbor:"stake" json:"stake"`
}

// Topic implements system.EventData.
func (*ValidatorRegisteredEvent) Topic() string { return TopicValidatorRegistered }

// ValidatorExitingEvent is the data of the ValidatorExiting event.
type ValidatorExitingEvent struct {
	Validator  types.Address `cbor:"validator" json:"validator"`
	UnbondAtMs uint64        `cbor:"unbond_at_ms" json:"unbond_at_ms"`
}

// Topic implements system.EventData.
func (*ValidatorExitingEvent) Topic() string { return TopicValidatorExiting }

// ValidatorWithdrawnEvent is the data of the ValidatorWithdrawn event.
type ValidatorWithdrawnEvent struct {
	Validator types.Address `cbor:"validator" json:"validator"`
	Stake     *big.Int      `cbor:"stake" json:"stake"`
}

// Topic implements system.EventData.
func (*ValidatorWithdrawnEvent) Topic() string { return TopicValidatorWithdrawn }

// ValidatorUnjailedEvent is the data of the ValidatorUnjailed event.
type ValidatorUnjailedEvent struct {
	Validator types.Address `cbor:"validator" json:"validator"`
}

// Topic implements system.EventData.
func (*ValidatorUnjailedEvent) Topic() string { return TopicValidatorUnjailed }

// ValidatorSlashedEvent is the data of the ValidatorSlashed event.
type ValidatorSlashedEvent struct {
	Validator types.Address `cbor:"validator" json:"validator"`
	Kind      uint8         `cbor:"kind" json:"kind"`
	Round     uint64        `cbor:"round" json:"round"`
	Slashed   *big.Int      `cbor:"slashed" json:"slashed"`
}

// Topic implements system.EventData.
func (*ValidatorSlashedEvent) Topic() string { return TopicValidatorSlashed }

// ValidatorJailedEvent is the data of the ValidatorJailed event.
type ValidatorJailedEvent struct {
	Validator types.Address `cbor:"validator" json:"validator"`
	Missed    uint64        `cbor:"missed" json:"missed"`
}

// Topic implements system.EventData.
func (*ValidatorJailedEvent) Topic() string { return TopicValidatorJailed }
