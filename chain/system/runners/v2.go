package runners

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Version names of the Runner Registry's registered implementations
// (spec 002 §11.4: an upgrade switches the actor's version pointer).
const (
	VersionV1 = "v1"
	VersionV2 = "v2"
)

// SchemaKey records the registry's state schema once v2's migration has
// run (absent before: v1).
func SchemaKey() []byte { return system.Key(types.RunnerRegistryAddress, []byte("schema")) }

// V2 is the second version of the Runner Registry. It shares v1's state
// and every instruction but one: its heartbeat rule refuses a second
// heartbeat by the same runner in one block (HeartbeatTooSoon) instead
// of rewriting the record with the same height.
type V2 struct{ *Module }

// NewV2 is v2 over m's parameters and state.
func NewV2(m *Module) V2 { return V2{m} }

// Kinds implements system.Module: v1's kinds with v2's heartbeat rule.
func (v V2) Kinds() []system.Kind {
	ks := v.Module.Kinds()
	for i := range ks {
		if ks[i].Kind == types.KindRunnerHeartbeat {
			ks[i].Handle = handler(v.Module, func(x *Tx, from types.Address, _ *types.RunnerHeartbeat) error { return x.runnerHeartbeatV2(from) })
		}
	}
	return ks
}

func (x *Tx) runnerHeartbeatV2(from types.Address) error {
	rn, err := x.ActiveRunner(from)
	if err != nil {
		return err
	}
	if rn.LastHeartbeat == x.Env().Height {
		return system.Failf(system.CodeHeartbeatTooSoon, "HeartbeatTooSoon: %s already sent a heartbeat in block %d", from, rn.LastHeartbeat)
	}
	return x.runnerHeartbeat(from)
}

// MigrateV2 is v2's migration, run atomically at its activation: every
// runner record must decode, a heartbeat height ahead of the activation
// block (impossible under v1's rule) is clamped to it, and the schema
// marker is written. An undecodable record fails the migration, which
// reverts the activation.
func MigrateV2(x system.Tx) error {
	h := x.Env().Height
	var fix []*Runner
	var keys [][]byte
	err := x.State().Scan(RunnerPrefix(), func(k, b []byte) error {
		rn := new(Runner)
		if err := codec.Unmarshal(b, rn); err != nil {
			return system.Failf(system.CodeFailed, "Failed: runners v2 migration: record %x: %v", k, err)
		}
		if rn.LastHeartbeat > h {
			rn.LastHeartbeat = h
			fix = append(fix, rn)
			keys = append(keys, append([]byte(nil), k...))
		}
		return nil
	})
	if err != nil {
		if system.IsFailure(err) {
			return err
		}
		return fmt.Errorf("runners v2 migration: %w", err)
	}
	for i, rn := range fix {
		x.State().Set(keys[i], codec.MustMarshal(rn))
	}
	x.State().Set(SchemaKey(), codec.MustMarshal(uint64(2)))
	return nil
}
