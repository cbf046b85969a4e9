// Package storage is the Relay Registry (0x…0B) and the Storage Manager
// (0x…0A) system actors (docs/RELAY.md; spec 002 "Storage"): relay records
// and stakes, volumes and their commitments, placements, rent escrow and
// claims, and the per-epoch availability challenges with their slashing.
// The two actors share the challenge and relay-statistics records, so they
// are one module.
package storage

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Module is the Relay Registry and Storage Manager plugged into the executor.
type Module struct{ p Params }

// New returns the module with p (zero fields take the defaults).
func New(p Params) *Module {
	p.fill()
	return &Module{p: p}
}

// Params returns the module's parameters, defaults filled in.
func (m *Module) Params() Params { return m.p }

// Name implements system.Module.
func (m *Module) Name() string { return "storage" }

// txCtx is a transaction running a Relay Registry or Storage Manager
// instruction, or the module's end-of-block step.
type txCtx struct {
	system.Tx
	m *Module
}

// handler adapts a typed instruction handler to system.Handler.
func handler[T types.Instruction](m *Module, f func(x *txCtx, from types.Address, in T) error) system.Handler {
	return func(sx system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
		return nil, f(&txCtx{Tx: sx, m: m}, from, in.(T))
	}
}

// Kinds implements system.Module.
func (m *Module) Kinds() []system.Kind {
	relay := checkTarget(types.RelayRegistryAddress, "the Relay Registry", types.KindRelayRegister, "only relay_register carries value (the stake)")
	sm := checkTarget(types.StorageManagerAddress, "the Storage Manager", types.KindVolumeFund, "only volume_fund carries value (the escrow credit)")
	return []system.Kind{
		{Kind: types.KindRelayRegister, Check: relay, Handle: handler(m, (*txCtx).relayRegister)},
		{Kind: types.KindRelayHeartbeat, Check: relay, Handle: handler(m, (*txCtx).relayHeartbeat)},
		{Kind: types.KindRelayDeregister, Check: relay, Handle: handler(m, func(x *txCtx, from types.Address, _ *types.RelayDeregister) error {
			return x.relayDeregister(from)
		})},
		{Kind: types.KindVolumeCreate, Check: sm, Handle: handler(m, (*txCtx).volumeCreate)},
		{Kind: types.KindCommitManifest, Check: sm, Handle: handler(m, (*txCtx).commitManifest)},
		{Kind: types.KindRevokeToken, Check: sm, Handle: handler(m, (*txCtx).revokeToken)},
		{Kind: types.KindVolumeFund, Check: sm, Handle: handler(m, (*txCtx).volumeFund)},
		{Kind: types.KindStorageProof, Check: sm, Handle: handler(m, (*txCtx).storageProof)},
		{Kind: types.KindClaimRent, Check: sm, Handle: handler(m, (*txCtx).claimRent)},
		{Kind: types.KindRefusePlacement, Check: sm, Handle: handler(m, (*txCtx).refusePlacement)},
		{Kind: types.KindRepairPlacement, Check: sm, Handle: handler(m, (*txCtx).repairPlacement)},
	}
}

// checkTarget is the stateless check of the module's instructions: they go
// to the actor at addr, and only valueKind carries value.
func checkTarget(addr types.Address, name string, valueKind types.InstructionKind, valueRule string) func(*types.Tx, types.Instruction) error {
	return func(tx *types.Tx, in types.Instruction) error {
		if to, ok := tx.To(); !ok || to != addr {
			return fmt.Errorf("%w: %s transactions go to %s %s", types.ErrMalformedTx, in.InstructionKind(), name, addr)
		}
		if in.InstructionKind() != valueKind && tx.Value().Sign() != 0 {
			return fmt.Errorf("%w: %s", types.ErrMalformedTx, valueRule)
		}
		return nil
	}
}
