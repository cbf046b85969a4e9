package apitypes

import "github.com/cowboy-foundation/cowboy/chain/types"

// RelayChallengeStats is a relay's availability-challenge record.
type RelayChallengeStats struct {
	Answered     uint64 `json:"answered"`
	Failed       uint64 `json:"failed"`
	Missed       uint64 `json:"missed"`
	Consecutive  uint64 `json:"consecutive_failures"`
	Reputation   uint64 `json:"reputation"` // 0..1000
	Flagged      bool   `json:"flagged"`    // a recent failure: unhealthy, shards are repaired away
	FlaggedUntil uint64 `json:"flagged_until_epoch,omitempty"`
	Earned       string `json:"earned"`  // rent claimed, base units
	Slashed      string `json:"slashed"` // stake burned, base units
	UnbondAt     uint64 `json:"unbond_at,omitempty"`
}

// VolumeRent is a volume's escrow at the Storage Manager.
type VolumeRent struct {
	Escrow       string `json:"escrow"`         // base units available for future epochs
	RentPerEpoch string `json:"rent_per_epoch"` // shard bytes × storage_rent_rate
	ShardBytes   uint64 `json:"shard_bytes"`    // used_bytes × erasure_overhead
	Arrears      uint64 `json:"arrears"`        // consecutive unpaid epochs
	GraceEpochs  uint64 `json:"grace_epochs"`
	Evicted      uint64 `json:"evicted,omitempty"` // height of eviction
	Funded       string `json:"funded"`
	Paid         string `json:"paid"`
	Refunded     string `json:"refunded"`
	Epoch        uint64 `json:"epoch"`
	EpochBlocks  uint64 `json:"epoch_blocks"`
}

// VolumePlacement is one relay's share of a volume with its latest challenge.
type VolumePlacement struct {
	Relay      types.Address  `json:"relay"`
	Version    uint64         `json:"version"`
	Bytes      uint64         `json:"bytes"`
	Count      uint64         `json:"count"`
	ShardsRoot types.Hash     `json:"shards_root"`
	Challenge  *ChallengeInfo `json:"challenge,omitempty"`
}

// ChallengeInfo is one availability challenge.
type ChallengeInfo struct {
	Volume     types.Hash    `json:"volume"`
	Relay      types.Address `json:"relay"`
	Epoch      uint64        `json:"epoch"`
	Version    uint64        `json:"version"`
	Issued     uint64        `json:"issued"`
	Deadline   uint64        `json:"deadline"`
	Seed       types.Hash    `json:"seed"`
	Bytes      uint64        `json:"bytes"`
	Count      uint64        `json:"count"`
	ShardsRoot types.Hash    `json:"shards_root"`
	LeafIndex  uint64        `json:"leaf_index"`
	Rent       string        `json:"rent"`
	Status     string        `json:"status"` // open | answered | failed | missed | claimed | refused | expired | superseded
	Closed     uint64        `json:"closed,omitempty"`
}

// RelayChallenges lists a relay's challenges still on record.
type RelayChallenges struct {
	Height      uint64 `json:"height"`
	Epoch       uint64 `json:"epoch"`
	EpochBlocks uint64 `json:"epoch_blocks"`
	// ResponseWindow is how many blocks after its issue a challenge may be
	// answered; provers pace their polling by it.
	ResponseWindow uint64          `json:"response_window,omitempty"`
	Challenges     []ChallengeInfo `json:"challenges"` // by epoch, then volume
}
