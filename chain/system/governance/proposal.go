package governance

import (
	"bytes"
	"math/big"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Proposal states.
const (
	StatusVoting   uint8 = 1 // open for votes until VotingEnd
	StatusQueued   uint8 = 2 // passed; executes at ETA
	StatusExecuted uint8 = 3
	StatusRejected uint8 = 4 // failed a chamber or the quorum
	StatusFailed   uint8 = 5 // passed, but its execution failed (FailCode); nothing of it applied
)

// StatusName is the name of a proposal status.
func StatusName(s uint8) string {
	switch s {
	case StatusVoting:
		return "voting"
	case StatusQueued:
		return "queued"
	case StatusExecuted:
		return "executed"
	case StatusRejected:
		return "rejected"
	case StatusFailed:
		return "failed"
	case StatusCancelled:
		return "cancelled"
	}
	return "unknown"
}

// Rules are a tier's rules, fixed when the proposal opens.
type Rules struct {
	_              struct{} `cbor:",toarray"`
	QuorumBps      uint64
	ApprovalBps    uint64
	ValidatorBps   uint64
	TimelockBlocks uint64
}

// Voter is one validator of the snapshot: its stake then and its vote.
type Voter struct {
	_       struct{} `cbor:",toarray"`
	Address types.Address
	Stake   *big.Int
	Choice  uint8 // 0 = not voted, else types.VoteYes/No/Abstain
	// StakeOnly marks stake in the unbonding queue of a validator that has
	// left the set: it counts in the stake chamber, not the validator one.
	StakeOnly bool
}

// Proposal is the record of one proposal.
type Proposal struct {
	_             struct{} `cbor:",toarray"`
	ID            uint64
	Proposer      types.Address
	Tier          uint8
	Title         string
	Params        []types.GovParam
	Disburse      []types.GovDisburse
	Ratify        []types.Address // circuit-breaks to ratify
	Council       []types.Address // the new Security Council
	Upgrade       []types.GovUpgrade
	Models        []types.GovModel // Model Registry bans and unbans
	Deposit       *big.Int
	SnapshotBlock uint64
	VotingEnd     uint64 // voting closes at the end of this block (or once every voter has voted)
	ETA           uint64 // the block whose end executes it, once queued
	Status        uint8
	Rules         Rules
	Voters        []Voter // sorted by address
	ClosedAt      uint64  // the block whose end tallied it
	FailCode      uint32  // why a passed proposal failed to execute
}

func (p *Proposal) allVoted() bool {
	for _, v := range p.Voters {
		if v.Choice == 0 {
			return false
		}
	}
	return len(p.Voters) > 0
}

// Tally is a proposal's count in both chambers.
type Tally struct {
	Yes, No, Abstain, Total    *big.Int // stake
	ValYes, ValNo, ValAbstain  uint64   // validators
	Validators                 uint64
	Quorum, StakeOK, ValidatOK bool
}

// Passed reports whether both chambers passed with the quorum reached.
func (t Tally) Passed() bool { return t.Quorum && t.StakeOK && t.ValidatOK }

// Count tallies p by its rules: the stake quorum counts yes, no and
// abstain; the stake approval is yes over yes + no, strictly above the
// threshold; the validator majority is yes validators over all validators
// of the snapshot, strictly above the threshold.
func Count(p *Proposal) Tally {
	t := Tally{Yes: new(big.Int), No: new(big.Int), Abstain: new(big.Int), Total: new(big.Int)}
	for _, v := range p.Voters {
		t.Total.Add(t.Total, v.Stake)
		val := uint64(1)
		if v.StakeOnly {
			val = 0
		}
		t.Validators += val
		switch v.Choice {
		case types.VoteYes:
			t.Yes.Add(t.Yes, v.Stake)
			t.ValYes += val
		case types.VoteNo:
			t.No.Add(t.No, v.Stake)
			t.ValNo += val
		case types.VoteAbstain:
			t.Abstain.Add(t.Abstain, v.Stake)
			t.ValAbstain += val
		}
	}
	bps := func(v *big.Int) *big.Int { return new(big.Int).Mul(v, big.NewInt(10000)) }
	of := func(share uint64, v *big.Int) *big.Int { return new(big.Int).Mul(new(big.Int).SetUint64(share), v) }
	voted := new(big.Int).Add(new(big.Int).Add(t.Yes, t.No), t.Abstain)
	t.Quorum = t.Total.Sign() > 0 && bps(voted).Cmp(of(p.Rules.QuorumBps, t.Total)) >= 0
	t.StakeOK = t.Yes.Sign() > 0 && bps(t.Yes).Cmp(of(p.Rules.ApprovalBps, new(big.Int).Add(t.Yes, t.No))) > 0
	t.ValidatOK = t.Validators > 0 && bps(new(big.Int).SetUint64(t.ValYes)).Cmp(of(p.Rules.ValidatorBps, new(big.Int).SetUint64(t.Validators))) > 0
	return t
}

// State keys: the next id, the records and the set of open (voting or
// queued) proposals. Nothing is written before the first proposal.
func nextKey() []byte { return system.Key(types.GovernanceAddress, []byte("next")) }

// ProposalPrefix is the state prefix of the proposal records.
func ProposalPrefix() []byte { return system.Key(types.GovernanceAddress, []byte("prop")) }

// ProposalKey is the state key of proposal id.
func ProposalKey(id uint64) []byte {
	return system.Key(types.GovernanceAddress, []byte("prop"), system.BE8(id))
}
func activePrefix() []byte { return system.Key(types.GovernanceAddress, []byte("active")) }
func activeKey(id uint64) []byte {
	return system.Key(types.GovernanceAddress, []byte("active"), system.BE8(id))
}

// ReadProposal is proposal id, nil if there is none.
func ReadProposal(r state.Reader, id uint64) (*Proposal, error) {
	return system.Get[Proposal](r, ProposalKey(id), "governance: proposal %d", id)
}

// ReadProposals is every proposal, by id.
func ReadProposals(r state.Reader) ([]*Proposal, error) {
	var out []*Proposal
	err := r.Scan(ProposalPrefix(), func(_, v []byte) error {
		p := new(Proposal)
		if err := codec.Unmarshal(v, p); err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

func activeIDs(r state.Reader) ([]uint64, error) {
	ks, err := system.ScanKeys(r, activePrefix())
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, len(ks))
	for i, k := range ks {
		ids[i] = system.FromBE8(k[len(k)-8:])
	}
	slices.Sort(ids)
	return ids, nil
}

func save(o *state.Overlay, p *Proposal) { o.Set(ProposalKey(p.ID), codec.MustMarshal(p)) }

// snapshot is the voter set now: the members of the Validator Registry's
// epoch with their stake, plus the stake still unbonding of validators
// that left the set (stake chamber only); or on a chain without a
// registry the configured voters with one unit each.
func (m *Module) snapshot(r state.Reader) ([]Voter, error) {
	var vs []Voter
	ep, err := validators.ReadEpoch(r)
	if err != nil {
		return nil, err
	}
	if ep != nil && len(ep.Members) > 0 {
		for _, mem := range ep.Members {
			rec, err := validators.ReadValidator(r, mem.Address)
			if err != nil {
				return nil, err
			}
			if rec == nil || rec.Stake == nil || rec.Stake.Sign() <= 0 {
				continue
			}
			vs = append(vs, Voter{Address: mem.Address, Stake: new(big.Int).Set(rec.Stake)})
		}
		// Stake unbonding after its validator left the set still counts,
		// in the stake chamber only.
		inSet := map[types.Address]bool{}
		for _, mem := range ep.Members {
			inSet[mem.Address] = true
		}
		err := r.Scan(validators.ValidatorPrefix(), func(_, b []byte) error {
			var rec validators.ValidatorRecord
			if err := codec.Unmarshal(b, &rec); err != nil {
				return err
			}
			if !inSet[rec.Address] && (rec.Status == validators.ValidatorExiting || rec.Status == validators.ValidatorExited) &&
				rec.Stake != nil && rec.Stake.Sign() > 0 {
				vs = append(vs, Voter{Address: rec.Address, Stake: new(big.Int).Set(rec.Stake), StakeOnly: true})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	} else {
		for _, a := range m.voters {
			vs = append(vs, Voter{Address: a, Stake: big.NewInt(1)})
		}
	}
	slices.SortFunc(vs, func(a, b Voter) int { return bytes.Compare(a.Address[:], b.Address[:]) })
	return slices.CompactFunc(vs, func(a, b Voter) bool { return a.Address == b.Address }), nil
}

func (m *Module) rules(r state.Reader, tier uint8) (Rules, error) {
	var v [4]uint64
	for i, k := range []string{"quorum_bps", "approval_bps", "validator_bps", "timelock_blocks"} {
		x, err := m.store.Get(r, TierKey(tier, k))
		if err != nil {
			return Rules{}, err
		}
		v[i] = x
	}
	return Rules{QuorumBps: v[0], ApprovalBps: v[1], ValidatorBps: v[2], TimelockBlocks: v[3]}, nil
}

var cbyUnit = big.NewInt(1_000_000_000_000_000_000)

// propose opens a proposal; the return value is its id (8 bytes, big-endian).
func (m *Module) propose(x system.Tx, from types.Address, in *types.GovPropose) ([]byte, error) {
	o := x.State()
	for i, c := range in.Params {
		d, ok := m.store.Def(c.Key)
		if !ok {
			return nil, system.Failf(system.CodeUnknownParam, "UnknownParam: %q is not a governed parameter", c.Key)
		}
		if err := m.store.Check(c.Key, c.Value); err != nil {
			return nil, err
		}
		if in.Tier < d.Tier {
			return nil, system.Failf(system.CodeTierTooLow, "TierTooLow: %s needs tier %d, the proposal is tier %d", c.Key, d.Tier, in.Tier)
		}
		for _, prev := range in.Params[:i] {
			if prev.Key == c.Key {
				return nil, system.Failf(system.CodeInvalidProposal, "InvalidProposal: %s changed twice", c.Key)
			}
		}
	}
	for _, a := range in.Ratify {
		if !pausable(a) {
			return nil, system.Failf(system.CodeInvalidProposal, "InvalidProposal: %s is not a system actor the Council may circuit-break", a)
		}
	}
	if len(in.Upgrade) > 0 && in.Tier < 3 {
		return nil, system.Failf(system.CodeTierTooLow, "TierTooLow: an upgrade needs tier 3, the proposal is tier %d", in.Tier)
	}
	for _, u := range in.Upgrade {
		if err := m.checkUpgrade(u, x.Env().Height); err != nil {
			return nil, err
		}
	}
	if len(in.Council) > 0 {
		if in.Tier < MaxTier {
			return nil, system.Failf(system.CodeTierTooLow, "TierTooLow: a Council change needs tier %d, the proposal is tier %d", MaxTier, in.Tier)
		}
		if _, err := councilSet(in.Council); err != nil {
			return nil, err
		}
	}
	if err := m.proposeModels(x, in); err != nil {
		return nil, err
	}
	if len(in.Disburse) > 0 && in.Tier < 2 {
		return nil, system.Failf(system.CodeTierTooLow, "TierTooLow: a disbursement needs tier 2, the proposal is tier %d", in.Tier)
	}
	minCBY, err := m.store.Get(o, KeyMinDeposit)
	if err != nil {
		return nil, err
	}
	deposit := new(big.Int)
	if tx := x.Transaction(); tx != nil {
		deposit.Set(tx.Value())
	}
	if min := new(big.Int).Mul(new(big.Int).SetUint64(minCBY), cbyUnit); deposit.Cmp(min) < 0 {
		return nil, system.Failf(system.CodeDepositTooLow, "DepositTooLow: deposit %s below the minimum %s", deposit, min)
	}
	voters, err := m.snapshot(o)
	if err != nil {
		return nil, err
	}
	if len(voters) == 0 {
		return nil, system.Failf(system.CodeNoVotingPower, "NoVotingPower: the chain has no voters")
	}
	rules, err := m.rules(o, in.Tier)
	if err != nil {
		return nil, err
	}
	period, err := m.store.Get(o, KeyVotingPeriod)
	if err != nil {
		return nil, err
	}
	if deposit.Sign() > 0 {
		if err := x.MoveValue(from, types.GovernanceAddress, deposit); err != nil {
			return nil, err
		}
	}
	next := uint64(1)
	if b, ok, err := o.Get(nextKey()); err != nil {
		return nil, err
	} else if ok {
		if err := codec.Unmarshal(b, &next); err != nil {
			return nil, err
		}
	}
	h := x.Env().Height
	p := &Proposal{ID: next, Proposer: from, Tier: in.Tier, Title: in.Title, Params: in.Params, Disburse: in.Disburse, Ratify: in.Ratify, Council: in.Council, Upgrade: in.Upgrade, Models: in.Models,
		Deposit: deposit, SnapshotBlock: h, VotingEnd: h + period - 1, Status: StatusVoting, Rules: rules, Voters: voters}
	save(o, p)
	o.Set(activeKey(next), []byte{1})
	o.Set(nextKey(), codec.MustMarshal(next+1))
	x.Emit(types.GovernanceAddress, ProposedEvent{Proposal: next, Proposer: from, Tier: in.Tier, VotingEnd: p.VotingEnd})
	return system.BE8(next), nil
}

func (m *Module) vote(x system.Tx, from types.Address, in *types.GovVote) error {
	if in.Choice < types.VoteYes || in.Choice > types.VoteAbstain {
		return system.Failf(system.CodeInvalidVote, "InvalidVote: choice %d (1 yes, 2 no, 3 abstain)", in.Choice)
	}
	p, err := ReadProposal(x.State(), in.Proposal)
	if err != nil {
		return err
	}
	if p == nil {
		return system.Failf(system.CodeNoSuchProposal, "NoSuchProposal: %d", in.Proposal)
	}
	if p.Status != StatusVoting || x.Env().Height > p.VotingEnd {
		return system.Failf(system.CodeVotingClosed, "VotingClosed: proposal %d is %s", p.ID, StatusName(p.Status))
	}
	i, ok := slices.BinarySearchFunc(p.Voters, from, func(v Voter, a types.Address) int { return bytes.Compare(v.Address[:], a[:]) })
	if !ok {
		return system.Failf(system.CodeNoVotingPower, "NoVotingPower: %s has no stake in proposal %d's snapshot", from, p.ID)
	}
	p.Voters[i].Choice = in.Choice
	save(x.State(), p)
	x.Emit(types.GovernanceAddress, VotedEvent{Proposal: p.ID, Voter: from, Choice: in.Choice})
	return nil
}

// tally closes p's voting: passed proposals queue for their timelock; the
// deposit returns to the proposer if the quorum was reached, else it goes
// to the Treasury.
func (m *Module) tally(x system.Tx, p *Proposal) error {
	t := Count(p)
	h := x.Env().Height
	p.ClosedAt = h
	if t.Passed() {
		p.Status, p.ETA = StatusQueued, h+p.Rules.TimelockBlocks
	} else {
		p.Status = StatusRejected
		x.State().Delete(activeKey(p.ID))
	}
	to := p.Proposer
	if !t.Quorum {
		to = types.TreasuryAddress
	}
	if p.Deposit.Sign() > 0 {
		if err := x.MoveValue(types.GovernanceAddress, to, p.Deposit); err != nil {
			return err
		}
	}
	save(x.State(), p)
	x.Emit(types.GovernanceAddress, TalliedEvent{Proposal: p.ID, Status: StatusName(p.Status), ETA: p.ETA})
	return nil
}
