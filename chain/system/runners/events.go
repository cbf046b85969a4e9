// Package runners is the Runner Registry system actor (0x…01; CIP-2 §3,
// CIP-13): runner records and capabilities, self-bond and delegated stake,
// unbonding tranches, the result-key history, the off-chain parameters,
// and the operations the Job Dispatcher and Result Verifier perform on
// runners (runners.Tx).
package runners

import (
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Event topics.
const (
	TopicRunnerRegistered   = "RunnerRegistered"
	TopicRunnerDeregistered = "RunnerDeregistered"
	TopicRunnerSlashed      = "RunnerSlashed"
	TopicStakeDelegated     = "StakeDelegated"
	TopicStakeUndelegated   = "StakeUndelegated"
	TopicRunnerStaked       = "RunnerStaked"
	TopicRunnerUnstaked     = "RunnerUnstaked"
	TopicCommissionSet      = "CommissionSet"
	TopicStakeWithdrawn     = "StakeWithdrawn"
	TopicRunnerEjected      = "RunnerEjected"
)

// RunnerRegisteredEvent is the data of the RunnerRegistered event.
type RunnerRegisteredEvent struct {
	Runner types.Address `cbor:"runner" json:"runner"`
	Stake  *big.Int      `cbor:"stake" json:"stake"`
}

// Topic implements system.EventData.
func (*RunnerRegisteredEvent) Topic() string { return TopicRunnerRegistered }

// RunnerDeregisteredEvent is the data of the RunnerDeregistered event.
type RunnerDeregisteredEvent struct {
	Runner    types.Address `cbor:"runner" json:"runner"`
	Unbonding *big.Int      `cbor:"unbonding" json:"unbonding"`
	Release   uint64        `cbor:"release" json:"release"`
}

// Topic implements system.EventData.
func (*RunnerDeregisteredEvent) Topic() string { return TopicRunnerDeregistered }

// RunnerSlashedEvent is the data of the RunnerSlashed event.
type RunnerSlashedEvent struct {
	Runner types.Address `cbor:"runner" json:"runner"`
	JobID  types.Hash    `cbor:"job_id" json:"job_id"`
	Amount *big.Int      `cbor:"amount" json:"amount"`
}

// Topic implements system.EventData.
func (*RunnerSlashedEvent) Topic() string { return TopicRunnerSlashed }

// StakeDelegatedEvent is the data of the StakeDelegated event.
type StakeDelegatedEvent struct {
	Runner    types.Address `cbor:"runner" json:"runner"`
	Delegator types.Address `cbor:"delegator" json:"delegator"`
	Amount    *big.Int      `cbor:"amount" json:"amount"`
	Total     *big.Int      `cbor:"total" json:"total"`
}

// Topic implements system.EventData.
func (*StakeDelegatedEvent) Topic() string { return TopicStakeDelegated }

// StakeUndelegatedEvent is the data of the StakeUndelegated event.
type StakeUndelegatedEvent struct {
	Runner    types.Address `cbor:"runner" json:"runner"`
	Delegator types.Address `cbor:"delegator" json:"delegator"`
	Amount    *big.Int      `cbor:"amount" json:"amount"`
	Release   uint64        `cbor:"release" json:"release"`
}

// Topic implements system.EventData.
func (*StakeUndelegatedEvent) Topic() string { return TopicStakeUndelegated }

// RunnerStakedEvent is the data of the RunnerStaked event.
type RunnerStakedEvent struct {
	Runner types.Address `cbor:"runner" json:"runner"`
	Amount *big.Int      `cbor:"amount" json:"amount"`
	Stake  *big.Int      `cbor:"stake" json:"stake"`
}

// Topic implements system.EventData.
func (*RunnerStakedEvent) Topic() string { return TopicRunnerStaked }

// RunnerUnstakedEvent is the data of the RunnerUnstaked event.
type RunnerUnstakedEvent struct {
	Runner  types.Address `cbor:"runner" json:"runner"`
	Amount  *big.Int      `cbor:"amount" json:"amount"`
	Release uint64        `cbor:"release" json:"release"`
}

// Topic implements system.EventData.
func (*RunnerUnstakedEvent) Topic() string { return TopicRunnerUnstaked }

// CommissionSetEvent is the data of the CommissionSet event.
type CommissionSetEvent struct {
	Runner        types.Address `cbor:"runner" json:"runner"`
	CommissionBps uint64        `cbor:"commission_bps" json:"commission_bps"`
}

// Topic implements system.EventData.
func (*CommissionSetEvent) Topic() string { return TopicCommissionSet }

// StakeWithdrawnEvent is the data of the StakeWithdrawn event.
type StakeWithdrawnEvent struct {
	Owner  types.Address `cbor:"owner" json:"owner"`
	Amount *big.Int      `cbor:"amount" json:"amount"`
}

// Topic implements system.EventData.
func (*StakeWithdrawnEvent) Topic() string { return TopicStakeWithdrawn }

// RunnerEjectedEvent is the data of the RunnerEjected event.
type RunnerEjectedEvent struct {
	Runner    types.Address `cbor:"runner" json:"runner"`
	Unbonding *big.Int      `cbor:"unbonding" json:"unbonding"`
	Slashes   uint64        `cbor:"slashes" json:"slashes"`
}

// Topic implements system.EventData.
func (*RunnerEjectedEvent) Topic() string { return TopicRunnerEjected }
