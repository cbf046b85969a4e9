package types

import "math/big"

// Governance (0x…09) and Treasury (0x…08) instructions, kinds 120–129
// (spec 002 §9, §11; docs/GOVERNANCE.md). `to` is the Governance actor;
// only gov_propose carries value (its deposit).
const (
	KindGovPropose InstructionKind = 120 // open a proposal; value is the deposit
	KindGovVote    InstructionKind = 121 // vote on a proposal in its voting period (a later vote replaces an earlier one)
	KindGovExecute InstructionKind = 122 // execute a queued proposal whose ETA has come
)

// Vote choices of GovVote.
const (
	VoteYes     uint8 = 1
	VoteNo      uint8 = 2
	VoteAbstain uint8 = 3
)

// GovParam is one parameter change: a key of the parameter store and its
// new value.
type GovParam struct {
	_     struct{} `cbor:",toarray"`
	Key   string
	Value uint64
}

// GovDisburse pays Amount from the Treasury to To.
type GovDisburse struct {
	_      struct{} `cbor:",toarray"`
	To     Address
	Amount *big.Int
}

// GovPropose opens a proposal of tier Tier (0–4): either parameter changes
// (Params) or treasury disbursements (Disburse), not both.
type GovPropose struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	Tier     uint8
	Title    string
	Params   []GovParam
	Disburse []GovDisburse
}

// GovVote casts the sender's vote (VoteYes, VoteNo, VoteAbstain).
type GovVote struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	Proposal uint64
	Choice   uint8
}

// GovExecute executes a queued proposal at or after its ETA.
type GovExecute struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	Proposal uint64
}

func (GovPropose) InstructionKind() InstructionKind { return KindGovPropose }
func (GovVote) InstructionKind() InstructionKind    { return KindGovVote }
func (GovExecute) InstructionKind() InstructionKind { return KindGovExecute }

// govKinds registers the kinds declared in this file (kinds.go).
var govKinds = []kindSpec{
	{KindGovPropose, "gov_propose", LaneUser, newOf[GovPropose]},
	{KindGovVote, "gov_vote", LaneUser, newOf[GovVote]},
	{KindGovExecute, "gov_execute", LaneUser, newOf[GovExecute]},
}
