package governance_test

import (
	"crypto/ed25519"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/governance"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The shipped Runner Registry v2 (runners.V2, registered by the executor)
// through a Tier 3 proposal: before activation a runner may send two
// heartbeats in one block; after it v2's rule refuses the second with
// HeartbeatTooSoon and its migration has written the schema marker; the
// Council's fast-track rolls back to v1 within the deadline; a migration
// that meets an undecodable runner record reverts its activation; a
// later upgrade clamps a heartbeat height ahead of the activation block.
func TestUpgradeRunnerRegistryV2(t *testing.T) {
	f, keys := newCouncilFixture(t)
	reg := runners.New(runners.Params{MinRunnerStake: cby(10)})
	mod, err := f.m.Versioned(types.RunnerRegistryAddress,
		governance.Version{Name: runners.VersionV1, Module: reg},
		governance.Version{Name: runners.VersionV2, Module: runners.NewV2(reg), Migrate: runners.MigrateV2})
	if err != nil {
		t.Fatal(err)
	}
	run := func(in types.Instruction) system.Code {
		t.Helper()
		r, err := f.c.Run(mod, bob, types.RunnerRegistryAddress, nil, in)
		if err != nil {
			t.Fatal(err)
		}
		return r.Code()
	}
	if err := f.c.Fund(bob, cby(100)); err != nil {
		t.Fatal(err)
	}
	key := ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey)
	if r, err := f.c.Run(mod, bob, types.RunnerRegistryAddress, cby(20), &types.RunnerRegister{ResultKey: types.Bytes(key), JobTypes: []uint64{2}, MaxConcurrentJobs: 1}); err != nil || r.Err != nil {
		t.Fatalf("register: %v %v", err, r.Err)
	}
	// twice is the codes of two heartbeats in the current block.
	twice := func() [2]system.Code {
		return [2]system.Code{run(&types.RunnerHeartbeat{}), run(&types.RunnerHeartbeat{})}
	}
	v1, v2 := [2]system.Code{system.CodeOK, system.CodeOK}, [2]system.Code{system.CodeOK, system.CodeHeartbeatTooSoon}
	active := func() string {
		t.Helper()
		v, err := f.m.ActiveVersion(f.c.State, types.RunnerRegistryAddress)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	schema := func() bool {
		_, ok, err := f.c.State.Get(runners.SchemaKey())
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	up := func(at, deadline uint64) *types.GovPropose {
		return &types.GovPropose{Tier: 3, Title: "runners v2", Upgrade: []types.GovUpgrade{{Actor: types.RunnerRegistryAddress, Version: runners.VersionV2, Activation: at, RollbackDeadline: deadline}}}
	}

	f.passToQueue(1, up(20, 25))
	f.advance(19)
	if got := twice(); active() != runners.VersionV1 || got != v1 || schema() {
		t.Fatalf("before activation: %s %v schema %v", active(), got, schema())
	}
	f.c.Env.Height = 20
	f.advance(20)
	f.c.Env.Height = 21
	if got := twice(); active() != runners.VersionV2 || got != v2 || !schema() {
		t.Fatalf("after activation: %s %v schema %v", active(), got, schema())
	}
	if us, err := governance.ReadUpgrades(f.c.State); err != nil || len(us) != 1 || us[0].Version != runners.VersionV2 ||
		us[0].Pending != nil || us[0].Rollback == nil || *us[0].Rollback != (governance.Rollback{Version: runners.VersionV1, Deadline: 25}) {
		t.Fatalf("upgrade records %+v: %v", us, err)
	}
	// Rollback within the deadline (25): v1's rule is back.
	act := newActor(f, keys).act
	f.c.Env.Height = 25
	act(&types.GovCouncil{Action: types.CouncilFastTrack, Actor: types.RunnerRegistryAddress}, system.CodeOK)
	if got := twice(); active() != runners.VersionV1 || got != v1 {
		t.Fatalf("after rollback: %s %v", active(), got)
	}

	// An undecodable runner record fails the migration: the activation is
	// reverted (pointer and rollback slot unchanged).
	bad := runners.RunnerKey(types.Address{0xff})
	f.c.State.Set(bad, []byte{0xff, 0x00})
	f.c.Env.Height = 26
	f.passToQueue(2, up(40, 50))
	f.advance(40)
	f.c.Env.Height = 41
	if got := twice(); active() != runners.VersionV1 || got != v1 {
		t.Fatalf("after a failed migration: %s %v", active(), got)
	}
	act(&types.GovCouncil{Action: types.CouncilFastTrack, Actor: types.RunnerRegistryAddress}, system.CodeNoRollback)

	// With the record repaired, an upgrade clamps a heartbeat height ahead
	// of its activation block; past the deadline there is no rollback.
	f.c.State.Delete(bad)
	rn, err := runners.ReadRunner(f.c.State, bob)
	if err != nil {
		t.Fatal(err)
	}
	rn.LastHeartbeat = 1000
	f.c.State.Set(runners.RunnerKey(bob), codec.MustMarshal(rn))
	f.passToQueue(3, up(60, 61))
	f.advance(60)
	if rn, err = runners.ReadRunner(f.c.State, bob); err != nil || rn.LastHeartbeat != 60 || active() != runners.VersionV2 {
		t.Fatalf("clamp: %v %v %s", rn, err, active())
	}
	f.c.Env.Height = 62
	act(&types.GovCouncil{Action: types.CouncilFastTrack, Actor: types.RunnerRegistryAddress}, system.CodeNoRollback)
}
