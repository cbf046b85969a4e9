package governance

import (
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
)

// FastTrackKey is the key of a fast-track rule: "quorum_bps",
// "approval_bps", "validator_bps" or "timelock_blocks".
func FastTrackKey(rule string) string { return "gov.fast_track." + rule }

// fastTrackDefs are the fast-track thresholds of spec 002 §11.2/§11.3: a
// queued Tier 3 upgrade whose vote reached a 40% quorum, > 75% stake
// approval and > 66% of the validators may have its timelock lowered to
// 6 hours by the Security Council. Changing them is meta-governance.
func fastTrackDefs() []params.Def {
	return []params.Def{
		{Key: FastTrackKey("quorum_bps"), Tier: MaxTier, Min: 1, Max: 10000, Default: 4000, Doc: "fast-track stake quorum of a Tier 3 upgrade's vote"},
		{Key: FastTrackKey("approval_bps"), Tier: MaxTier, Min: 0, Max: 9999, Default: 7500, Doc: "fast-track stake approval: yes / (yes + no) must exceed it"},
		{Key: FastTrackKey("validator_bps"), Tier: MaxTier, Min: 0, Max: 9999, Default: 6600, Doc: "fast-track validator majority: yes validators / all must exceed it"},
		{Key: FastTrackKey("timelock_blocks"), Tier: MaxTier, Min: 0, Max: 10_000_000, Default: 6 * 3600, Doc: "timelock of a fast-tracked upgrade, from its tally"},
	}
}

// fastTrackRules are the fast-track thresholds in force.
func (m *Module) fastTrackRules(x system.Tx) (Rules, error) {
	var r Rules
	for _, f := range []struct {
		rule string
		dst  *uint64
	}{{"quorum_bps", &r.QuorumBps}, {"approval_bps", &r.ApprovalBps}, {"validator_bps", &r.ValidatorBps}, {"timelock_blocks", &r.TimelockBlocks}} {
		v, err := m.store.Get(x.State(), FastTrackKey(f.rule))
		if err != nil {
			return Rules{}, err
		}
		*f.dst = v
	}
	return r, nil
}

// fastTrack is the Council's fast-track of a queued Tier 3 upgrade
// proposal: its vote, re-counted under the fast-track thresholds, must
// pass them (FastTrackThresholds otherwise); its ETA then becomes the
// tally block plus the fast-track timelock (never later than it was, and
// not before the current block).
func (m *Module) fastTrack(x system.Tx, id uint64) error {
	o := x.State()
	p, err := ReadProposal(o, id)
	if err != nil {
		return err
	}
	if p == nil {
		return system.Failf(system.CodeNoSuchProposal, "NoSuchProposal: %d", id)
	}
	if p.Tier != 3 || len(p.Upgrade) == 0 {
		return system.Failf(system.CodeCouncilPower, "CouncilPower: only a Tier 3 system-actor upgrade can be fast-tracked (proposal %d is Tier %d)", id, p.Tier)
	}
	if p.Status != StatusQueued {
		return system.Failf(system.CodeNotQueued, "NotQueued: proposal %d is %s", id, StatusName(p.Status))
	}
	rules, err := m.fastTrackRules(x)
	if err != nil {
		return err
	}
	q := *p
	q.Rules = rules
	if t := Count(&q); !t.Passed() {
		return system.Failf(system.CodeFastTrackThresholds, "FastTrackThresholds: proposal %d's vote is below the fast-track thresholds (quorum %d bps, approval > %d bps, validators > %d bps)",
			id, rules.QuorumBps, rules.ApprovalBps, rules.ValidatorBps)
	}
	eta := max(p.ClosedAt+rules.TimelockBlocks, x.Env().Height)
	if eta < p.ETA {
		p.ETA = eta
		save(o, p)
	}
	return nil
}
