package types

import "math/big"

// Governance (0x…09) and Treasury (0x…08) instructions, kinds 120–129
// (spec 002 §9, §11; docs/GOVERNANCE.md). `to` is the Governance actor;
// only gov_propose carries value (its deposit).
const (
	KindGovPropose InstructionKind = 120 // open a proposal; value is the deposit
	KindGovVote    InstructionKind = 121 // vote on a proposal in its voting period (a later vote replaces an earlier one)
	KindGovExecute InstructionKind = 122 // execute a queued proposal whose ETA has come
	KindGovCouncil InstructionKind = 123 // a Security Council action carrying 7 of its 9 members' signatures
)

// Security Council actions (GovCouncil.Action).
const (
	CouncilCancel    uint8 = 1 // cancel a queued Tier 0–3 proposal
	CouncilFastTrack uint8 = 2 // fast-track a Tier 3 system-actor upgrade: roll Actor back to its rollback slot before the deadline
	CouncilPause     uint8 = 3 // circuit-break a system actor: its instructions are refused
	CouncilUnpause   uint8 = 4 // lift a circuit-break
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

// GovPropose opens a proposal of tier Tier (0–4) with one kind of action:
// parameter changes (Params), treasury disbursements (Disburse), or the
// ratification of Security Council circuit-breaks of system actors (Ratify),
// a new Security Council (Council, Tier 4), system-actor upgrades
// (Upgrade, Tier 3), or Model Registry bans and unbans (Models, Tier 1).
type GovPropose struct {
	_        struct{} `cbor:",toarray"`
	Kind     InstructionKind
	Tier     uint8
	Title    string
	Params   []GovParam
	Disburse []GovDisburse
	Ratify   []Address
	Council  []Address // Tier 4: the Security Council's new nine members
	Upgrade  []GovUpgrade
	Models   []GovModel // Tier 1: ban or unban models in the Model Registry (0x…0D)
}

// GovModel bans (Ban, with Reason) or unbans (Reason empty) model ID in
// the Model Registry: a Tier 1 "registry & whitelist" action (spec 002
// §5.1, §11.3).
type GovModel struct {
	_      struct{} `cbor:",toarray"`
	ID     Hash
	Ban    bool
	Reason string
}

// GovUpgrade switches system actor Actor to its registered implementation
// Version at block Activation (Tier 3, spec 002 §11.4); the previous
// version stays in a rollback slot until RollbackDeadline.
type GovUpgrade struct {
	_                struct{} `cbor:",toarray"`
	Actor            Address
	Version          string
	Activation       uint64
	RollbackDeadline uint64
}

// GovCouncil is a Security Council action. Anyone may send it; its
// authority is Signatures: 65-byte secp256k1 signatures by distinct
// Council members over CouncilDigest of the same fields.
type GovCouncil struct {
	_          struct{} `cbor:",toarray"`
	Kind       InstructionKind
	Action     uint8
	Proposal   uint64  // cancel, fast-track
	Actor      Address // pause, unpause
	Nonce      uint64  // the Council's action count; a signature set is good once
	Signatures []Bytes
}

// CouncilDigest is the hash Council members sign for an action on chain
// chainID.
func CouncilDigest(chainID uint64, action uint8, proposal uint64, actor Address, nonce uint64) Hash {
	var b [8 + 1 + 8 + 8]byte
	putBE8(b[0:8], chainID)
	b[8] = action
	putBE8(b[9:17], proposal)
	putBE8(b[17:25], nonce)
	return Keccak256([]byte("cowboy/council/v1"), b[:], actor[:])
}

func putBE8(b []byte, v uint64) {
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
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
func (GovCouncil) InstructionKind() InstructionKind { return KindGovCouncil }

// govKinds registers the kinds declared in this file (kinds.go).
var govKinds = []kindSpec{
	{KindGovPropose, "gov_propose", LaneUser, newOf[GovPropose]},
	{KindGovVote, "gov_vote", LaneUser, newOf[GovVote]},
	{KindGovExecute, "gov_execute", LaneUser, newOf[GovExecute]},
	{KindGovCouncil, "gov_council", LaneUser, newOf[GovCouncil]},
}
