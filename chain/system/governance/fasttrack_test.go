package governance_test

import (
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/governance"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The Council's fast-track of a queued Tier 3 upgrade lowers its timelock
// only when the vote met the fast-track thresholds (40% quorum, > 75%
// approval, > 66% of the validators). With four equal voters, 3 yes and 1
// no passes Tier 3 (75% > 66%) but sits exactly on the fast-track
// approval (75%, not above): refused, ETA unchanged. 3 yes and 1 abstain
// (approval 100%, validators 75%) is fast-tracked: it executes at its
// tally block plus the fast-track timelock. Other proposals are refused.
func TestCouncilFastTrackThresholds(t *testing.T) {
	keys, addrs := councilKeys(t)
	v := []types.Address{{0xe1}, {0xe2}, {0xe3}, {0xe4}}
	g := map[string]uint64{governance.KeyVotingPeriod: 10, governance.KeyMinDeposit: 0,
		governance.TierKey(0, "timelock_blocks"): 100, governance.TierKey(3, "timelock_blocks"): 100, governance.FastTrackKey("timelock_blocks"): 2}
	m, err := governance.New(governance.Params{Genesis: g, Voters: v, Council: addrs[:9]}, runners.ParamDefs(runners.Params{})...)
	if err != nil {
		t.Fatal(err)
	}
	reg := runners.New(runners.Params{})
	if _, err := m.Versioned(types.RunnerRegistryAddress, governance.Version{Name: runners.VersionV1, Module: reg},
		governance.Version{Name: runners.VersionV2, Module: runners.NewV2(reg), Migrate: runners.MigrateV2}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, m: m, c: systemtest.New()}
	act := newActor(f, keys).act
	fastTrack := func(id uint64, code system.Code) {
		t.Helper()
		act(&types.GovCouncil{Action: types.CouncilFastTrack, Proposal: id}, code)
	}
	// open proposes in and has the four voters cast choices; it returns the
	// queued (or rejected) proposal after the tally.
	open := func(id uint64, in *types.GovPropose, choices ...uint8) *governance.Proposal {
		t.Helper()
		f.want(f.run(v[0], nil, in), system.CodeOK)
		for i, c := range choices {
			f.want(f.run(v[i], nil, &types.GovVote{Proposal: id, Choice: c}), system.CodeOK)
		}
		f.advance(f.c.Env.Height)
		f.c.Env.Height++
		return f.proposal(id)
	}
	up := &types.GovPropose{Tier: 3, Title: "v2", Upgrade: []types.GovUpgrade{{Actor: types.RunnerRegistryAddress, Version: runners.VersionV2, Activation: 5, RollbackDeadline: 500}}}
	y, n, a := types.VoteYes, types.VoteNo, types.VoteAbstain

	p1 := open(1, up, y, y, y, n)
	if p1.Status != governance.StatusQueued || p1.ETA != p1.ClosedAt+100 {
		t.Fatalf("3 yes 1 no: %s ETA %d", governance.StatusName(p1.Status), p1.ETA)
	}
	fastTrack(1, system.CodeFastTrackThresholds)
	if f.proposal(1).ETA != p1.ETA {
		t.Fatal("a refused fast-track changed the ETA")
	}
	// A cancel leaves only proposal 2 to activate the upgrade.
	act(&types.GovCouncil{Action: types.CouncilCancel, Proposal: 1}, system.CodeOK)

	p2 := open(2, up, y, y, y, a)
	if p2.Status != governance.StatusQueued || p2.ETA != p2.ClosedAt+100 {
		t.Fatalf("3 yes 1 abstain: %s ETA %d", governance.StatusName(p2.Status), p2.ETA)
	}
	fastTrack(2, system.CodeOK)
	if got := f.proposal(2).ETA; got != p2.ClosedAt+2 {
		t.Fatalf("fast-tracked ETA %d, want %d", got, p2.ClosedAt+2)
	}
	f.advance(p2.ClosedAt + 2)
	if p := f.proposal(2); p.Status != governance.StatusExecuted {
		t.Fatalf("fast-tracked proposal %s at its new ETA", governance.StatusName(p.Status))
	}
	f.advance(5) // the upgrade's activation block
	if ver, err := m.ActiveVersion(f.c.State, types.RunnerRegistryAddress); err != nil || ver != runners.VersionV2 {
		t.Fatalf("active %q: %v", ver, err)
	}
	f.c.Env.Height++
	fastTrack(2, system.CodeNotQueued)
	fastTrack(99, system.CodeNoSuchProposal)
	// A unanimous Tier 0 proposal is not an upgrade: outside the Council's powers.
	p3 := open(3, paramChange(0, runners.KeyHeartbeatTimeout, 90), y, y, y, y)
	if p3.Status != governance.StatusQueued {
		t.Fatalf("tier 0: %s", governance.StatusName(p3.Status))
	}
	fastTrack(3, system.CodeCouncilPower)
}
