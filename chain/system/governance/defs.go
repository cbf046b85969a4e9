package governance

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/system/params"
)

// Keys of the governance parameters this actor consumes.
const (
	KeyVotingPeriod = "gov.voting_period_blocks"
	KeyMinDeposit   = "gov.min_deposit_cby"
)

// TierKey is the key of a tier's rule: "quorum_bps", "approval_bps",
// "validator_bps" or "timelock_blocks".
func TierKey(tier uint8, rule string) string { return fmt.Sprintf("gov.tier%d.%s", tier, rule) }

// MaxTier is the highest proposal tier (Tier 4, constitutional/meta).
const MaxTier = 4

// tierDefaults is the spec 002 §11.3 table: per tier, the stake quorum,
// the stake approval (strictly above) and the validator majority (strictly
// above) in basis points, and the timelock in blocks at 1 s blocks.
func tierDefaults() [MaxTier + 1][4]uint64 {
	return [MaxTier + 1][4]uint64{
		{1000, 5000, 5000, 3 * 86400},
		{1500, 5000, 5000, 5 * 86400},
		{2000, 6000, 5000, 7 * 86400},
		{2500, 6600, 6600, 7 * 86400},
		{3300, 7500, 6600, 14 * 86400},
	}
}

// Defs are the parameters declared by the Governance actor. Every rule of
// governance itself is a Tier 4 (meta) change.
func Defs() []params.Def {
	ds := []params.Def{
		{Key: KeyVotingPeriod, Tier: MaxTier, Min: 1, Max: 10_000_000, Default: 3 * 86400, Doc: "blocks a proposal is open for votes"},
		{Key: KeyMinDeposit, Tier: MaxTier, Min: 0, Max: 1_000_000_000, Default: 1000, Doc: "minimum proposal deposit, whole CBY"},
		{Key: KeyCouncilRatify, Tier: MaxTier, Min: 1, Max: 10_000_000, Default: 7 * 86400, Doc: "blocks within which a Council circuit-break must be ratified, or it lapses"},
	}
	ds = append(ds, fastTrackDefs()...)
	for t := uint8(0); t <= MaxTier; t++ {
		d := tierDefaults()[t]
		ds = append(ds,
			params.Def{Key: TierKey(t, "quorum_bps"), Tier: MaxTier, Min: 1, Max: 10000, Default: d[0], Doc: fmt.Sprintf("tier %d stake quorum (share of snapshot stake that voted)", t)},
			params.Def{Key: TierKey(t, "approval_bps"), Tier: MaxTier, Min: 0, Max: 9999, Default: d[1], Doc: fmt.Sprintf("tier %d stake approval: yes / (yes + no) must exceed it", t)},
			params.Def{Key: TierKey(t, "validator_bps"), Tier: MaxTier, Min: 0, Max: 9999, Default: d[2], Doc: fmt.Sprintf("tier %d validator majority: yes validators / all must exceed it", t)},
			params.Def{Key: TierKey(t, "timelock_blocks"), Tier: MaxTier, Min: 0, Max: 10_000_000, Default: d[3], Doc: fmt.Sprintf("tier %d timelock between passing and execution", t)},
		)
	}
	return ds
}

// DevGenesis are the genesis values of a --dev or local testnet chain:
// a 120-block voting period (which closes early once every voter has
// voted), 4-block timelocks and a 1 CBY deposit, so that a parameter
// change is proposed, voted, queued and in effect within seconds.
func DevGenesis() map[string]uint64 {
	g := map[string]uint64{KeyVotingPeriod: 120, KeyMinDeposit: 1, KeyCouncilRatify: 600}
	for t := uint8(0); t <= MaxTier; t++ {
		g[TierKey(t, "timelock_blocks")] = 4
	}
	return g
}
