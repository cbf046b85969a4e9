// Package fees owns Cowboy's dual-metered fee schedule (spec 002 §2.3, §4,
// §17): the protocol limits of both meters, the intrinsic cost of each
// transaction kind, the two EIP-1559 basefees and their update rule, the
// settlement of a transaction's fee into burn and tip, and fee estimation.
// Every rule here is consensus: it uses integers only.
package fees

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Schedule holds the fee parameters (genesis defaults in Default; spec 002
// §4.3, §13, §17.8). It is part of the genesis and must be identical on all
// nodes.
type Schedule struct {
	TargetCycles   uint64 `json:"target_cycles"`    // T_c
	MaxBlockCycles uint64 `json:"max_block_cycles"` // E × T_c
	TargetCells    uint64 `json:"target_cells"`     // T_b
	MaxBlockCells  uint64 `json:"max_block_cells"`  // E × T_b
	Alpha          uint64 `json:"alpha"`            // smoothing, in blocks
	DeltaNum       uint64 `json:"delta_num"`        // max change per block = DeltaNum/DeltaDen
	DeltaDen       uint64 `json:"delta_den"`
	MinBasefee     uint64 `json:"min_basefee"` // floor (1)
	// Genesis basefees, in base units (10^-18 CBY) per cycle and per cell.
	InitialBasefeeCycle uint64 `json:"initial_basefee_cycle"`
	InitialBasefeeCell  uint64 `json:"initial_basefee_cell"`
	// Per-transaction maxima: a transaction may use at most one block.
	MaxTxCycles uint64 `json:"max_tx_cycles"`
	MaxTxCells  uint64 `json:"max_tx_cells"`
}

// Default returns the genesis defaults of spec 002.
func Default() Schedule {
	return Schedule{
		TargetCycles:        10_000_000,
		MaxBlockCycles:      20_000_000,
		TargetCells:         500_000,
		MaxBlockCells:       1_000_000,
		Alpha:               8,
		DeltaNum:            1,
		DeltaDen:            8,
		MinBasefee:          1,
		InitialBasefeeCycle: 1_000_000_000, // 1 nano-CBY per cycle: a transfer costs 10^-5 CBY
		InitialBasefeeCell:  1_000_000_000,
		MaxTxCycles:         20_000_000,
		MaxTxCells:          1_000_000,
	}
}

// Validate checks the schedule for internal consistency.
func (s Schedule) Validate() error {
	switch {
	case s.TargetCycles == 0 || s.TargetCells == 0:
		return fmt.Errorf("fees: targets must be positive")
	case s.MaxBlockCycles < s.TargetCycles || s.MaxBlockCells < s.TargetCells:
		return fmt.Errorf("fees: block caps must be at least the targets")
	case s.Alpha == 0 || s.DeltaDen == 0 || s.DeltaNum > s.DeltaDen:
		return fmt.Errorf("fees: alpha must be positive and 0 <= delta <= 1")
	case s.MinBasefee == 0:
		return fmt.Errorf("fees: min basefee must be at least 1")
	case s.InitialBasefeeCycle < s.MinBasefee || s.InitialBasefeeCell < s.MinBasefee:
		return fmt.Errorf("fees: initial basefees below the floor")
	case s.MaxTxCycles == 0 || s.MaxTxCycles > s.MaxBlockCycles || s.MaxTxCells > s.MaxBlockCells:
		return fmt.Errorf("fees: per-transaction maxima must fit in a block")
	}
	return nil
}

// NextBasefee applies spec 002 §4.2 to one meter:
//
//	next = max(floor, cur × (1 + clamp((U−T)/(T×α), −δ, +δ)))
//
// in exact rational arithmetic, rounded down once at the end. As in
// EIP-1559, a block above target raises the basefee by at least 1, so a
// basefee at the floor can still rise.
func (s Schedule) NextBasefee(cur, used, target uint64) uint64 {
	c := new(big.Int).SetUint64(cur)
	num := new(big.Int).Sub(new(big.Int).SetUint64(used), new(big.Int).SetUint64(target))    // U − T
	den := new(big.Int).Mul(new(big.Int).SetUint64(target), new(big.Int).SetUint64(s.Alpha)) // T × α
	dN, dD := new(big.Int).SetUint64(s.DeltaNum), new(big.Int).SetUint64(s.DeltaDen)
	lhs := new(big.Int).Mul(num, dD)
	rhs := new(big.Int).Mul(dN, den)
	next := new(big.Int)
	switch {
	case lhs.Cmp(rhs) > 0: // above +δ
		next.Mul(c, new(big.Int).Add(dD, dN)).Quo(next, dD)
	case lhs.Cmp(new(big.Int).Neg(rhs)) < 0: // below −δ
		next.Mul(c, new(big.Int).Sub(dD, dN)).Quo(next, dD)
	default:
		next.Mul(c, new(big.Int).Add(den, num)).Quo(next, den)
	}
	if num.Sign() > 0 && next.Cmp(c) <= 0 && s.DeltaNum > 0 {
		next.Add(c, big.NewInt(1))
	}
	if !next.IsUint64() {
		return ^uint64(0)
	}
	return max(next.Uint64(), s.MinBasefee)
}

// Basefees is the pair of basefees a block charges.
type Basefees struct {
	Cycle uint64 `json:"cycle"`
	Cell  uint64 `json:"cell"`
}

// Next returns the basefees of the child of a block that charged b and used
// the given amounts.
func (s Schedule) Next(b Basefees, cyclesUsed, cellsUsed uint64) Basefees {
	return Basefees{
		Cycle: s.NextBasefee(b.Cycle, cyclesUsed, s.TargetCycles),
		Cell:  s.NextBasefee(b.Cell, cellsUsed, s.TargetCells),
	}
}

// Intrinsic costs (spec 002 §17.2; library publishing per seed 000 §3.6).
const (
	TransferCycles      = 10_000
	CallCycles          = 10_000
	DeployCycles        = 50_000
	DeployBaseCells     = 100
	PublishLibCycles    = 100_000
	PublishLibPerByte   = 50
	RemoveLibCycles     = 10_000
	LibPinCycles        = 1_000 // per pin at deploy
	LibPinCells         = 64
	LibLoadCyclesPerB   = 50 // per handler call, per byte of pinned library code
	TimerScheduleCycles = 10_000
	TimerScheduleCells  = 64
)

// Intrinsic returns the cycles and cells a transaction pays before
// execution starts, from its kind and size. Calldata is 1 cell per payload
// byte (§17.4). The payload must already be known to decode.
func Intrinsic(tx *types.Tx, in types.Instruction) (cycles, cells uint64) {
	payload := uint64(len(tx.Payload()))
	switch v := in.(type) {
	case nil:
		return TransferCycles, payload
	case *types.Call:
		return CallCycles, payload
	case *types.Deploy:
		return DeployCycles, DeployBaseCells + payload
	case *types.PublishLibrary:
		// The per-byte cells for a new blob are charged at execution, when
		// it is known whether the blob already exists.
		return PublishLibCycles + uint64(len(v.Code))*PublishLibPerByte, payload
	case *types.RemoveLibrary:
		return RemoveLibCycles, payload
	}
	return CallCycles, payload
}

// CheckLimits enforces the per-transaction maxima and that the limits cover
// the intrinsic cost.
func (s Schedule) CheckLimits(tx *types.Tx, in types.Instruction) error {
	if tx.CyclesLimit() > s.MaxTxCycles {
		return fmt.Errorf("%w: cycles_limit %d > %d", types.ErrLimitsExceeded, tx.CyclesLimit(), s.MaxTxCycles)
	}
	if tx.CellsLimit() > s.MaxTxCells {
		return fmt.Errorf("%w: cells_limit %d > %d", types.ErrLimitsExceeded, tx.CellsLimit(), s.MaxTxCells)
	}
	ic, ib := Intrinsic(tx, in)
	if tx.CyclesLimit() < ic {
		return fmt.Errorf("%w: cycles_limit %d < intrinsic %d", types.ErrIntrinsicCost, tx.CyclesLimit(), ic)
	}
	if tx.CellsLimit() < ib {
		return fmt.Errorf("%w: cells_limit %d < intrinsic %d", types.ErrIntrinsicCost, tx.CellsLimit(), ib)
	}
	return nil
}

// MaxCost is what a transaction may cost at most: value plus both limits at
// the maximum fees. The sender's balance must cover it before execution.
func MaxCost(tx *types.Tx) *big.Int {
	c := mul(tx.CyclesLimit(), tx.MaxFeePerCycle())
	c.Add(c, mul(tx.CellsLimit(), tx.MaxFeePerCell()))
	return c.Add(c, tx.Value())
}

// MaxFee is the fee part of MaxCost (no value).
func MaxFee(tx *types.Tx) *big.Int {
	c := mul(tx.CyclesLimit(), tx.MaxFeePerCycle())
	return c.Add(c, mul(tx.CellsLimit(), tx.MaxFeePerCell()))
}

// Includable reports whether tx's fee caps cover the block's basefees.
func Includable(tx *types.Tx, b Basefees) error {
	if tx.MaxFeePerCycle() < b.Cycle {
		return fmt.Errorf("%w: max_fee_per_cycle %d < basefee %d", types.ErrFeeCapTooLow, tx.MaxFeePerCycle(), b.Cycle)
	}
	if tx.MaxFeePerCell() < b.Cell {
		return fmt.Errorf("%w: max_fee_per_cell %d < basefee %d", types.ErrFeeCapTooLow, tx.MaxFeePerCell(), b.Cell)
	}
	return nil
}

// tipPer is min(tip, maxFee − basefee); the caller has checked maxFee ≥ basefee.
func tipPer(tip, maxFee, basefee uint64) uint64 { return min(tip, maxFee-basefee) }

// Charge is the settlement of one transaction.
type Charge struct {
	Fee    *big.Int // paid by the sender: Burned + Tip
	Burned *big.Int // basefee part, 100% burned (§4.2)
	Tip    *big.Int // to the block proposer
}

// Settle computes spec 002 §2.3:
//
//	fee = cycles_used×(bc + min(tip_c, max_c − bc)) + cells_used×(bb + min(tip_b, max_b − bb))
//
// The sender reserved MaxFee up front; what is not charged (the unused
// limits, and the gap between the max fees and the effective prices) is
// refunded.
func Settle(tx *types.Tx, b Basefees, cyclesUsed, cellsUsed uint64) Charge {
	burned := mul(cyclesUsed, b.Cycle)
	burned.Add(burned, mul(cellsUsed, b.Cell))
	tip := mul(cyclesUsed, tipPer(tx.TipPerCycle(), tx.MaxFeePerCycle(), b.Cycle))
	tip.Add(tip, mul(cellsUsed, tipPer(tx.TipPerCell(), tx.MaxFeePerCell(), b.Cell)))
	return Charge{Fee: new(big.Int).Add(burned, tip), Burned: burned, Tip: tip}
}

// EffectiveFee orders transactions in the mempool (spec 002 §6.4), using the
// intrinsic costs only.
func EffectiveFee(tx *types.Tx, in types.Instruction, b Basefees) *big.Int {
	ic, ib := Intrinsic(tx, in)
	pc := min(tx.MaxFeePerCycle(), b.Cycle+tx.TipPerCycle())
	pb := min(tx.MaxFeePerCell(), b.Cell+tx.TipPerCell())
	f := mul(ic, pc)
	return f.Add(f, mul(ib, pb))
}

func mul(a, b uint64) *big.Int {
	return new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(b))
}

// Estimate is a suggested set of limits and prices for a transaction.
type Estimate struct {
	CyclesLimit    uint64 `json:"cycles_limit"`
	CellsLimit     uint64 `json:"cells_limit"`
	MaxFeePerCycle uint64 `json:"max_fee_per_cycle"`
	MaxFeePerCell  uint64 `json:"max_fee_per_cell"`
	TipPerCycle    uint64 `json:"tip_per_cycle"`
	TipPerCell     uint64 `json:"tip_per_cell"`
	MaxFee         string `json:"max_fee"` // limits × max fees, decimal base units
}

// Suggest estimates fees (spec 002 §17.10): limits are the expected usage
// plus a 20% margin (at least the intrinsic cost), capped at the protocol
// maxima; max fees are 2 × the current basefee + tip, which stays includable
// through five consecutive full blocks (+12.5% each); tips default to 1 base
// unit per cycle and per cell unless the caller asks for more.
func (s Schedule) Suggest(b Basefees, expectCycles, expectCells, tipCycle, tipCell uint64) Estimate {
	margin := func(v, max uint64) uint64 {
		v += v / 5
		if v > max {
			return max
		}
		return v
	}
	if tipCycle == 0 {
		tipCycle = 1
	}
	if tipCell == 0 {
		tipCell = 1
	}
	e := Estimate{
		CyclesLimit:    margin(expectCycles, s.MaxTxCycles),
		CellsLimit:     margin(expectCells, s.MaxTxCells),
		MaxFeePerCycle: 2*b.Cycle + tipCycle,
		MaxFeePerCell:  2*b.Cell + tipCell,
		TipPerCycle:    tipCycle,
		TipPerCell:     tipCell,
	}
	mf := mul(e.CyclesLimit, e.MaxFeePerCycle)
	mf.Add(mf, mul(e.CellsLimit, e.MaxFeePerCell))
	e.MaxFee = mf.String()
	return e
}
