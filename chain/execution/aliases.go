package execution

import (
	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/storage"
	"github.com/cowboy-foundation/cowboy/chain/system/tee"
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The names below moved to the system modules (chain/system/...); they
// stay here, as aliases, so that callers outside this package (chain/node,
// chain/genesis, chain/api) keep compiling while they move over.

// StorageParams are the Relay Registry and Storage Manager parameters
// (chain/system/storage).
type StorageParams = storage.Params

// OffchainParams are the Runner Registry, Job Dispatcher and Result
// Verifier parameters (chain/system/runners).
type OffchainParams = runners.Params

// TEEParams are the TEE Verifier and Secrets Manager parameters
// (chain/system/tee).
type TEEParams = tee.Params

// Validator Registry (chain/system/validators).
type (
	ValidatorParams  = validators.Params
	ValidatorRecord  = validators.ValidatorRecord
	SetMember        = validators.SetMember
	Epoch            = validators.Epoch
	GenesisValidator = validators.GenesisValidator
)

// Validator statuses (chain/system/validators).
const (
	ValidatorPending = validators.ValidatorPending
	ValidatorActive  = validators.ValidatorActive
	ValidatorExiting = validators.ValidatorExiting
	ValidatorExited  = validators.ValidatorExited
)

// ReadEpoch is validators.ReadEpoch.
func ReadEpoch(r state.Reader) (*Epoch, error) { return validators.ReadEpoch(r) }

// ReadValidator is validators.ReadValidator.
func ReadValidator(r state.Reader, a types.Address) (*ValidatorRecord, error) {
	return validators.ReadValidator(r, a)
}

// SetGenesisValidators is validators.SetGenesisValidators.
func SetGenesisValidators(o *state.Overlay, vals []GenesisValidator, timestampMs uint64) {
	validators.SetGenesisValidators(o, vals, timestampMs)
}

// The actor host moved to chain/actors.
type (
	// VM is actors.VM.
	VM = actors.VM
	// ActorLimits are actors.Limits.
	ActorLimits = actors.Limits
)
