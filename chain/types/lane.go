package types

import "fmt"

// Lane is one of a block's execution lanes (spec 002 §6.3, §17.9). The
// numbering is the lanes' priority order, highest first. Each instruction
// kind names its lane where it is registered (kinds.go), so the lane is
// declared here with the kinds; chain/fees re-exports it and owns the
// capacities and multipliers.
type Lane uint8

// The four lanes.
const (
	LaneSystem Lane = iota // validator updates, governance, slashing
	LaneTimer              // scheduled timer executions (no transactions)
	LaneRunner             // runner registry, job results and attestations
	LaneUser               // everything else
	NumLanes   = 4
)

func (l Lane) String() string {
	switch l {
	case LaneSystem:
		return "system"
	case LaneTimer:
		return "timer"
	case LaneRunner:
		return "runner"
	case LaneUser:
		return "user"
	}
	return fmt.Sprintf("lane(%d)", uint8(l))
}
