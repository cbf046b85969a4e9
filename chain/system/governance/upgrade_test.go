package governance_test

import (
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/governance"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// registryV2 is a second Runner Registry version with a changed heartbeat
// rule: heartbeats are no longer accepted (a stand-in for any rule
// change the executor must route to).
type registryV2 struct{ *runners.Module }

func (r registryV2) Kinds() []system.Kind {
	ks := r.Module.Kinds()
	for i := range ks {
		if ks[i].Kind == types.KindRunnerHeartbeat {
			ks[i].Handle = func(system.Tx, types.Address, types.Instruction) ([]byte, error) {
				return nil, system.Failf(system.CodeUnsupported, "Unsupported: v2 takes no heartbeats")
			}
		}
	}
	return ks
}

var migratedKey = system.Key(types.RunnerRegistryAddress, []byte("migrated-v2"))

// A Tier 3 upgrade of the Runner Registry: proposed for an activation
// block, executed at its ETA, activated at that block with its migration;
// the executor's routing then reaches v2. The Council's fast-track rolls
// it back within the deadline; a failing migration reverts its activation;
// an unregistered version is refused.
func TestUpgradeRunnerRegistry(t *testing.T) {
	f, keys := newCouncilFixture(t)
	reg := runners.New(runners.Params{})
	mod, err := f.m.Versioned(types.RunnerRegistryAddress,
		governance.Version{Name: "v1", Module: reg},
		governance.Version{Name: "v2", Module: registryV2{reg}, Migrate: func(x system.Tx) error {
			x.State().Set(migratedKey, []byte{1})
			return nil
		}},
		governance.Version{Name: "v2-broken", Module: registryV2{reg}, Migrate: func(x system.Tx) error {
			x.State().Set(migratedKey, []byte{2})
			return system.Failf(system.CodeFailed, "Failed: migration refuses")
		}})
	if err != nil {
		t.Fatal(err)
	}
	heartbeat := func() system.Code {
		t.Helper()
		r, err := f.c.Run(mod, bob, types.RunnerRegistryAddress, nil, &types.RunnerHeartbeat{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Code()
	}
	active := func() string {
		t.Helper()
		v, err := f.m.ActiveVersion(f.c.State, types.RunnerRegistryAddress)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	up := func(version string, at, deadline uint64) *types.GovPropose {
		return &types.GovPropose{Tier: 3, Title: "upgrade", Upgrade: []types.GovUpgrade{{Actor: types.RunnerRegistryAddress, Version: version, Activation: at, RollbackDeadline: deadline}}}
	}
	f.want(f.run(alice, nil, up("v9", 50, 100)), system.CodeUnknownVersion)
	f.want(f.run(alice, nil, &types.GovPropose{Tier: 2, Upgrade: up("v2", 50, 100).Upgrade}), system.CodeTierTooLow)
	f.want(f.run(alice, nil, up("v2", 1, 100)), system.CodeInvalidProposal)
	f.want(f.run(alice, nil, up("v2", 50, 40)), system.CodeInvalidProposal)

	f.passToQueue(1, up("v2", 20, 60)) // queued at 1, executes at 6, activates at 20
	f.advance(19)
	if p := f.proposal(1); p.Status != governance.StatusExecuted || active() != "v1" || heartbeat() != system.CodeNotARunner {
		t.Fatalf("before activation: %s, %s", governance.StatusName(p.Status), active())
	}
	f.c.Env.Height = 20
	f.advance(20)
	if active() != "v2" || heartbeat() != system.CodeUnsupported {
		t.Fatalf("after activation: %s", active())
	}
	if b, ok, _ := f.c.State.Get(migratedKey); !ok || b[0] != 1 {
		t.Fatal("migration did not run")
	}
	// The Council's fast-track restores the rollback slot, once.
	act := newActor(f, keys).act
	f.c.Env.Height = 21
	act(&types.GovCouncil{Action: types.CouncilFastTrack, Actor: types.RunnerRegistryAddress}, system.CodeOK)
	if active() != "v1" || heartbeat() != system.CodeNotARunner {
		t.Fatalf("after rollback: %s", active())
	}
	act(&types.GovCouncil{Action: types.CouncilFastTrack, Actor: types.RunnerRegistryAddress}, system.CodeNoRollback)

	// A failing migration reverts its activation.
	f.c.Env.Height = 22
	f.passToQueue(2, up("v2-broken", 30, 40))
	f.advance(30)
	if active() != "v1" || heartbeat() != system.CodeNotARunner {
		t.Fatalf("after a failed migration: %s", active())
	}
	if b, _, _ := f.c.State.Get(migratedKey); b[0] != 1 {
		t.Fatal("the failed migration's write survived")
	}
	// Past the rollback deadline the slot is gone.
	f.c.Env.Height = 31
	f.passToQueue(3, up("v2", 40, 45))
	f.advance(40)
	if active() != "v2" {
		t.Fatalf("second upgrade: %s", active())
	}
	f.c.Env.Height = 46
	act(&types.GovCouncil{Action: types.CouncilFastTrack, Actor: types.RunnerRegistryAddress}, system.CodeNoRollback)
}
