// Package rent is the state rent and storage bond module (0x…0F; spec 002
// §3.2 "Storage Quotas", §4.4, §12.5, §17.5 "State Rent", "Grace Period
// and Eviction"; docs/RENT.md).
//
// An actor whose storage exceeds the free allowance (10 KiB) pays rent on
// the excess, per byte per rent epoch, at a rate that follows total actor
// state size (Next). Rent is taken each epoch from the actor's prepaid
// rent, then its balance; what cannot be paid becomes debt with a 10%
// catch-up fee. After 7 overdue epochs (grace) come 3 warning epochs, then
// eviction: the actor's storage is archived (its chunk hashes and root
// kept), pruned with its timers, its storage bond burned, and the actor is
// dormant until the debt is paid and the archive presented again
// (rent_restore). A storage bond raises the quota up to 8 MiB; rent then
// applies to the whole quota.
//
// Work per block is bounded: a cursor visits at most SweepPerBlock
// registered actors per block, and an actor is also assessed when it is
// touched (its handlers run). With rent off (no "rent" object in genesis)
// the module writes nothing.
package rent

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/system/params"
)

// Defaults (spec 002 §13 "State Rent", §17.5).
const (
	DefaultEpochBlocks   = 86_400  // one day of ~1 s blocks
	DefaultFreeBytes     = 10_240  // accounts ≤ 10 KB pay nothing
	DefaultGraceEpochs   = 7       // "rent overdue"
	DefaultWarningEpochs = 3       // "eviction imminent"
	DefaultCatchUpBps    = 1000    // 10% of missed rent
	DefaultReserveEpochs = 35      // ~5 weeks of daily epochs
	DefaultBaseQuota     = 1 << 20 // 1 MiB
	DefaultMaxQuota      = 8 << 20 // 8 MiB with a storage bond
	DefaultSweepPerBlock = 16
	DefaultTargetBytes   = 1 << 30 // 1 GiB of actor state
	// RateScale: the rate is in 1/RateScale base units per byte per epoch.
	RateScale = 1_000_000_000_000
	// Alpha and DeltaDen are the rate rule's α = 8 and δ = 1/8.
	Alpha    = 8
	DeltaDen = 8
)

// KeyTargetBytes is the governed parameter T, the target total actor
// state size of the rate rule.
const KeyTargetBytes = "rent.target_state_bytes"

// Params configure the module (genesis "rent" object). A nil *Params is
// rent off; zero fields take the defaults (fill).
type Params struct {
	EpochBlocks   uint64 `json:"epoch_blocks,omitempty"`
	RatePico      uint64 `json:"rate_pico,omitempty"` // initial rate, 1e-12 base units per byte per epoch
	TargetBytes   uint64 `json:"target_bytes,omitempty"`
	FreeBytes     uint64 `json:"free_bytes,omitempty"`
	GraceEpochs   uint64 `json:"grace_epochs,omitempty"`
	WarningEpochs uint64 `json:"warning_epochs,omitempty"`
	CatchUpBps    uint64 `json:"catch_up_bps,omitempty"`
	ReserveEpochs uint64 `json:"reserve_epochs,omitempty"`
	BaseQuota     uint64 `json:"base_quota,omitempty"`
	MaxQuota      uint64 `json:"max_quota,omitempty"`
	// BondPerByte is the bond, in base units, per byte of quota above
	// BaseQuota.
	BondPerByte   uint64 `json:"bond_per_byte,omitempty"`
	SweepPerBlock uint64 `json:"sweep_per_block,omitempty"`
}

func (p *Params) fill() {
	def := func(v *uint64, d uint64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&p.EpochBlocks, DefaultEpochBlocks)
	def(&p.RatePico, 1_000_000) // 1e-6 base units per byte per epoch
	def(&p.TargetBytes, DefaultTargetBytes)
	def(&p.FreeBytes, DefaultFreeBytes)
	def(&p.GraceEpochs, DefaultGraceEpochs)
	def(&p.WarningEpochs, DefaultWarningEpochs)
	def(&p.CatchUpBps, DefaultCatchUpBps)
	def(&p.ReserveEpochs, DefaultReserveEpochs)
	def(&p.BaseQuota, DefaultBaseQuota)
	def(&p.MaxQuota, DefaultMaxQuota)
	def(&p.BondPerByte, 1_000_000_000) // 1e-9 CBY per byte
	def(&p.SweepPerBlock, DefaultSweepPerBlock)
}

// Validate checks filled params.
func (p Params) Validate() error {
	q := p
	q.fill()
	if q.MaxQuota < q.BaseQuota {
		return fmt.Errorf("rent: max_quota %d below base_quota %d", q.MaxQuota, q.BaseQuota)
	}
	if q.CatchUpBps > 10_000 {
		return fmt.Errorf("rent: catch_up_bps %d above 10000", q.CatchUpBps)
	}
	return nil
}

// ParamDefs declares the governed parameter T (the rate rule's target).
func ParamDefs(p *Params) []params.Def {
	q := Params{}
	if p != nil {
		q = *p
	}
	q.fill()
	return []params.Def{{Key: KeyTargetBytes, Tier: 0, Min: 1, Max: 1 << 50, Default: q.TargetBytes,
		Doc: "target total actor state size (bytes) of the state rent rate rule"}}
}

// perEpoch is the rent of billed bytes for one epoch at rate.
func perEpoch(billed uint64, rate *big.Int) *big.Int {
	v := new(big.Int).Mul(new(big.Int).SetUint64(billed), rate)
	return v.Quo(v, big.NewInt(RateScale))
}
