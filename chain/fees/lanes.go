package fees

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Lane is one of a block's execution lanes (spec 002 §6.3, §17.9),
// declared in chain/types beside the instruction kinds that name their lane.
type Lane = types.Lane

// The four lanes, highest priority first.
const (
	LaneSystem = types.LaneSystem // validator updates, governance, slashing
	LaneTimer  = types.LaneTimer  // scheduled timer executions (no transactions)
	LaneRunner = types.LaneRunner // runner registry, job results and attestations
	LaneUser   = types.LaneUser   // everything else
	NumLanes   = types.NumLanes
)

// LaneOf classifies a transaction that passed the stateless checks into its
// lane. It depends only on the transaction (its instruction kind and
// recipient), so every node tags every transaction alike: anything sent to
// the Governance actor (0x…09) is a system transaction; otherwise the lane
// is the one registered with the instruction's kind (chain/types kinds:
// validator kinds, and the reserved 70–79 range, are system; what runners
// send to the Runner Registry, Job Dispatcher and Result Verifier, their
// attestations and challenge_result are runner; the rest, submit_job and
// stake delegation included, is user). A plain transfer is a user
// transaction. The timer lane holds no transactions: it is filled by the
// executor's timer delivery.
func LaneOf(tx *types.Tx, in types.Instruction) Lane {
	if to, ok := tx.To(); ok && to == types.GovernanceAddress {
		return LaneSystem
	}
	if in == nil {
		return LaneUser
	}
	return in.InstructionKind().Lane()
}

// LaneSchedule is the lane configuration: the reserved capacity of the
// three reserved lanes and every lane's fee multiplier. It is part of the
// chain configuration and identical on all nodes.
type LaneSchedule struct {
	// SystemBps, TimerBps, RunnerBps are the reserved cycles of the
	// system, timer and runner lanes in basis points of the block's
	// TARGET cycles (§17.9: 500,000, 2,000,000 and 2,500,000 of
	// 10,000,000). The user lane has the rest of the block up to
	// MaxBlockCycles: its 50% of the target plus the elastic half above it.
	SystemBps uint64 `json:"system_bps"`
	TimerBps  uint64 `json:"timer_bps"`
	RunnerBps uint64 `json:"runner_bps"`
	// Multiplier is each lane's multiplier on the global basefees, in basis
	// points (10,000 = 1×), indexed by Lane.
	Multiplier [NumLanes]uint64 `json:"multiplier_bps"`
}

// MaxLaneMultiplier bounds a lane multiplier (100×).
const MaxLaneMultiplier = 1_000_000

// DefaultLanes returns the genesis lane configuration: §17.9's shares and
// neutral (1×) multipliers. The basefee already prices whole-block demand
// and the reservations, not prices, protect the reserved lanes; the
// multipliers are governance-tunable once there is data to tune them on.
func DefaultLanes() LaneSchedule {
	return LaneSchedule{SystemBps: 500, TimerBps: 2_000, RunnerBps: 2_500,
		Multiplier: [NumLanes]uint64{10_000, 10_000, 10_000, 10_000}}
}

// Validate checks the lane configuration.
func (l LaneSchedule) Validate() error {
	if l.SystemBps+l.TimerBps+l.RunnerBps > 10_000 || l.SystemBps > 10_000 || l.TimerBps > 10_000 || l.RunnerBps > 10_000 {
		return fmt.Errorf("fees: reserved lanes take %d+%d+%d bps of the target, more than 10000", l.SystemBps, l.TimerBps, l.RunnerBps)
	}
	for i, m := range l.Multiplier {
		if m == 0 || m > MaxLaneMultiplier {
			return fmt.Errorf("fees: %s lane multiplier %d bps outside 1..%d", Lane(i), m, MaxLaneMultiplier)
		}
	}
	return nil
}

// Basefees returns what lane l charges: each global basefee × the lane's
// multiplier, rounded down, at least 1.
func (l LaneSchedule) Basefees(b Basefees, lane Lane) Basefees {
	m := l.Multiplier[lane]
	if m == 10_000 {
		return b
	}
	scale := func(v uint64) uint64 {
		p := mul(v, m)
		p.Quo(p, mul(1, 10_000))
		if !p.IsUint64() {
			return ^uint64(0)
		}
		return max(p.Uint64(), 1)
	}
	return Basefees{Cycle: scale(b.Cycle), Cell: scale(b.Cell)}
}

// LaneCaps are a block's cycle capacities.
type LaneCaps struct {
	// Reserved is each lane's reserved cycles; Reserved[LaneUser] is the
	// user lane's own share (Total minus the three reservations).
	Reserved [NumLanes]uint64
	// Total is the block's cycle capacity (MaxBlockCycles).
	Total uint64
}

// Caps returns the lane capacities of a block under schedule s.
func (l LaneSchedule) Caps(s Schedule) LaneCaps {
	share := func(bps uint64) uint64 {
		p := mul(s.TargetCycles, bps)
		return p.Quo(p, mul(1, 10_000)).Uint64()
	}
	c := LaneCaps{Total: s.MaxBlockCycles}
	c.Reserved[LaneSystem] = share(l.SystemBps)
	c.Reserved[LaneTimer] = share(l.TimerBps)
	c.Reserved[LaneRunner] = share(l.RunnerBps)
	c.Reserved[LaneUser] = s.MaxBlockCycles - c.Reserved[LaneSystem] - c.Reserved[LaneTimer] - c.Reserved[LaneRunner]
	return c
}

// LaneMeter accounts the cycles a block under construction reserves per
// lane (by cycles limits). Selection runs in two passes (spec §6.3/§17.9):
//
//  1. reserved lanes: a system or runner transaction is taken if it fits
//     in what is left of its own lane's reservation;
//  2. everything else, highest fee first: a transaction of any lane is
//     taken if it fits in what is left of the block.
//
// The timer lane's claim is charged before both. So unused reserved
// capacity spills to the user lane (pass 2 may use it), the user lane never
// takes capacity a reserved lane claimed in pass 1, and a reserved-lane
// transaction beyond its reservation competes for the rest of the block
// like a user transaction.
type LaneMeter struct {
	caps LaneCaps
	used [NumLanes]uint64
	all  uint64
}

// Meter returns an empty meter for caps.
func (c LaneCaps) Meter() *LaneMeter { return &LaneMeter{caps: c} }

// FitsReserved reports whether n more cycles fit in lane l's own
// reservation (pass 1).
func (m *LaneMeter) FitsReserved(l Lane, n uint64) bool {
	return n <= m.caps.Reserved[l]-min(m.used[l], m.caps.Reserved[l]) && m.Fits(n)
}

// Fits reports whether n more cycles fit in the block (pass 2).
func (m *LaneMeter) Fits(n uint64) bool { return n <= m.caps.Total-m.all }

// Add records n cycles reserved in lane l; the caller checked it fits.
func (m *LaneMeter) Add(l Lane, n uint64) {
	m.used[l] += n
	m.all += n
}

// Used returns the cycles reserved in lane l.
func (m *LaneMeter) Used(l Lane) uint64 { return m.used[l] }

// Total returns the cycles reserved in all lanes.
func (m *LaneMeter) Total() uint64 { return m.all }
