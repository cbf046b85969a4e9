package timers

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/fees"
)

// Queue geometry. Consensus constants: they fix the key layout.
const (
	// RingSlots is the size of the tier-1 block ring buffer: it holds the
	// timers of the next RingSlots heights.
	RingSlots = 256
	// EpochLength is the scheduler epoch, in blocks: tier-2 and tier-3 keys
	// lead with the target's epoch. (This is the queue's own epoch, not the
	// 3,600-block consensus epoch.)
	EpochLength = RingSlots / 2
	// EpochBuckets is how many epochs' worth of heights tier 2 covers after
	// the ring: timers up to RingSlots + EpochBuckets×EpochLength = 8,448
	// blocks (~2.3 h) ahead are in tiers 1–2; further ones are in tier 3.
	EpochBuckets = 64
)

// Params are the timer economics (spec 002 "Timer Rate Limiting" table,
// §17.3, §17.9). They are part of the genesis and identical on all nodes.
// Amounts are in base units (10^-18 CBY).
type Params struct {
	// BaseDeposit is the refundable deposit of an owner's first 100 timers:
	// deposit(n) = BaseDeposit × (1 + floor(n/100)).
	BaseDeposit uint64 `json:"base_deposit"`
	// ProgressiveStep is the 100 in the deposit formula.
	ProgressiveStep uint64 `json:"progressive_step"`
	// SurchargeFree is the 16 in surcharge(k) = base × 2^max(0, k−16).
	SurchargeFree uint64 `json:"surcharge_free"`
	// MaxSurchargeExp bounds k−16; a schedule beyond it is refused
	// (ErrHeightFull) instead of quoting an unpayable amount.
	MaxSurchargeExp uint64 `json:"max_surcharge_exp"`
	// MaxPerOwner is the per-actor cap on pending timers.
	MaxPerOwner uint64 `json:"max_per_owner"`
	// InitialBasefee, MinBasefee: the timer basefee (the surcharge's
	// base_cost, burned on every schedule) at genesis and its floor.
	InitialBasefee uint64 `json:"initial_basefee"`
	MinBasefee     uint64 `json:"min_basefee"`
	// TargetDepth is the queue depth (pending timers, all tiers) above which
	// the timer basefee rises; Alpha, DeltaNum/DeltaDen as in spec §4.2.
	TargetDepth uint64 `json:"target_depth"`
	Alpha       uint64 `json:"alpha"`
	DeltaNum    uint64 `json:"delta_num"`
	DeltaDen    uint64 `json:"delta_den"`
	// Record size limits.
	MaxHandlerBytes int `json:"max_handler_bytes"`
	MaxDataBytes    int `json:"max_data_bytes"`
	// DefaultCyclesLimit, DefaultCellsLimit: the limits of the network
	// default bid (timers without a GBA, or whose GBA call fails).
	DefaultCyclesLimit uint64 `json:"default_cycles_limit"`
	DefaultCellsLimit  uint64 `json:"default_cells_limit"`
}

// DefaultParams returns the genesis defaults. The formulas' constants (100,
// 16, 20%) are the spec's; the amounts are this implementation's proposal.
func DefaultParams() Params {
	return Params{
		BaseDeposit:        1_000_000_000_000_000, // 0.001 CBY
		ProgressiveStep:    100,
		SurchargeFree:      16,
		MaxSurchargeExp:    64,
		MaxPerOwner:        1_000,
		InitialBasefee:     10_000_000_000_000, // 10^-5 CBY per schedule
		MinBasefee:         1,
		TargetDepth:        1_000_000,
		Alpha:              8,
		DeltaNum:           1,
		DeltaDen:           8,
		MaxHandlerBytes:    64,
		MaxDataBytes:       16 * 1024,
		DefaultCyclesLimit: 100_000,
		DefaultCellsLimit:  1_024,
	}
}

// Validate checks the parameters for internal consistency.
func (p Params) Validate() error {
	switch {
	case p.ProgressiveStep == 0:
		return fmt.Errorf("timers: progressive step must be positive")
	case p.MaxPerOwner == 0:
		return fmt.Errorf("timers: per-owner cap must be positive")
	case p.MinBasefee == 0 || p.InitialBasefee < p.MinBasefee:
		return fmt.Errorf("timers: basefee floor must be positive and at most the initial basefee")
	case p.TargetDepth == 0 || p.Alpha == 0 || p.DeltaDen == 0 || p.DeltaNum > p.DeltaDen:
		return fmt.Errorf("timers: target depth and alpha must be positive and 0 <= delta <= 1")
	case p.MaxHandlerBytes <= 0 || p.MaxDataBytes < 0:
		return fmt.Errorf("timers: bad record size limits")
	case p.DefaultCyclesLimit == 0:
		return fmt.Errorf("timers: default bid needs a cycles limit")
	}
	return nil
}

// Deposit is the progressive deposit for an owner that already has n
// pending timers: BaseDeposit × (1 + floor(n / ProgressiveStep)). It is
// held while the timer is pending and refunded on cancel.
func (p Params) Deposit(n uint64) *big.Int {
	d := new(big.Int).SetUint64(p.BaseDeposit)
	return d.Mul(d, new(big.Int).SetUint64(1+n/p.ProgressiveStep))
}

// Surcharge is the burned scheduling fee of the k-th timer targeting one
// height (k counts the new timer): baseCost × 2^max(0, k − SurchargeFree).
// baseCost is the current timer basefee. ok is false when the exponent
// exceeds MaxSurchargeExp; Schedule then refuses the timer.
func (p Params) Surcharge(baseCost, k uint64) (amount *big.Int, ok bool) {
	var exp uint64
	if k > p.SurchargeFree {
		exp = k - p.SurchargeFree
	}
	if exp > p.MaxSurchargeExp {
		return nil, false
	}
	s := new(big.Int).SetUint64(baseCost)
	return s.Lsh(s, uint(exp)), true
}

// CanAdd reports whether an owner with n pending timers may schedule one
// more (the per-actor cap).
func (p Params) CanAdd(n uint64) bool { return n < p.MaxPerOwner }

// NextBasefee is the timer basefee after one block with the given queue
// depth: spec §4.2's EIP-1559 rule with U = depth, T = TargetDepth,
// next = max(floor, cur × (1 + clamp((depth−T)/(T×α), −δ, +δ))), computed by
// chain/fees' implementation of that rule (exact rationals, rounded down;
// a depth above target raises the fee by at least 1).
func (p Params) NextBasefee(cur, depth uint64) uint64 {
	s := fees.Schedule{Alpha: p.Alpha, DeltaNum: p.DeltaNum, DeltaDen: p.DeltaDen, MinBasefee: p.MinBasefee}
	return s.NextBasefee(cur, depth, p.TargetDepth)
}
