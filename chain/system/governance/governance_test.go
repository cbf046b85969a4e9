package governance_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/governance"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/system/treasury"
	"github.com/cowboy-foundation/cowboy/chain/system/validators"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func cby(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }

var gov = types.GovernanceAddress

// fixture is a chain with the governance module, dev-like genesis values
// (voting period 10, timelock 3, deposit 5 CBY) and a funded proposer.
type fixture struct {
	t *testing.T
	m *governance.Module
	c *systemtest.Chain
}

func newFixture(t *testing.T, voters ...types.Address) *fixture {
	t.Helper()
	g := map[string]uint64{governance.KeyVotingPeriod: 10, governance.KeyMinDeposit: 5}
	for tier := uint8(0); tier <= governance.MaxTier; tier++ {
		g[governance.TierKey(tier, "timelock_blocks")] = 3
	}
	m, err := governance.New(governance.Params{Genesis: g, Voters: voters})
	if err != nil {
		t.Fatal(err)
	}
	c := systemtest.New()
	for _, a := range []types.Address{{0xa1}, {0xa2}} {
		if err := c.Fund(a, cby(1000)); err != nil {
			t.Fatal(err)
		}
	}
	return &fixture{t: t, m: m, c: c}
}

func (f *fixture) run(from types.Address, value *big.Int, in types.Instruction) *systemtest.Result {
	f.t.Helper()
	r, err := f.c.Run(f.m, from, gov, value, in)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fixture) want(r *systemtest.Result, code system.Code) {
	f.t.Helper()
	if r.Code() != code {
		f.t.Fatalf("code %s, want %s (%v)", r.Code(), code, r.Err)
	}
}

// advance runs end-of-block steps up to and including height h.
func (f *fixture) advance(h uint64) {
	f.t.Helper()
	for f.c.Env.Height <= h {
		if err := f.c.EndBlock(f.m); err != nil {
			f.t.Fatal(err)
		}
		if f.c.Env.Height == h {
			break
		}
		f.c.Env.Height++
	}
}

func (f *fixture) proposal(id uint64) *governance.Proposal {
	f.t.Helper()
	p, err := governance.ReadProposal(f.c.State, id)
	if err != nil || p == nil {
		f.t.Fatalf("proposal %d: %v, %v", id, p, err)
	}
	return p
}

func (f *fixture) param(key string) uint64 {
	f.t.Helper()
	v, err := f.m.Store().Get(f.c.State, key)
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

func paramChange(tier uint8, key string, v uint64) *types.GovPropose {
	return &types.GovPropose{Tier: tier, Title: "t", Params: []types.GovParam{{Key: key, Value: v}}}
}

var alice, bob = types.Address{0xa1}, types.Address{0xa2}

// The stateless check: target, value, and the proposal's shape.
func TestCheck(t *testing.T) {
	f := newFixture(t, alice)
	for name, c := range map[string]struct {
		to    types.Address
		value *big.Int
		in    types.Instruction
	}{
		"wrong target":  {types.TreasuryAddress, nil, &types.GovVote{Proposal: 1, Choice: 1}},
		"value on vote": {gov, big.NewInt(1), &types.GovVote{Proposal: 1, Choice: 1}},
		"tier 5":        {gov, nil, paramChange(5, governance.KeyMinDeposit, 1)},
		"no action":     {gov, nil, &types.GovPropose{Tier: 0}},
		"both actions": {gov, nil, &types.GovPropose{Tier: 2, Params: []types.GovParam{{Key: governance.KeyMinDeposit}},
			Disburse: []types.GovDisburse{{To: alice, Amount: big.NewInt(1)}}}},
		"zero disbursement": {gov, nil, &types.GovPropose{Tier: 2, Disburse: []types.GovDisburse{{To: alice, Amount: new(big.Int)}}}},
	} {
		if _, err := f.c.Run(f.m, alice, c.to, c.value, c.in); !errors.Is(err, types.ErrMalformedTx) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Each refusal of gov_propose has its code and leaves no state.
func TestProposeRefusals(t *testing.T) {
	f := newFixture(t, alice)
	for _, c := range []struct {
		in    *types.GovPropose
		value *big.Int
		code  system.Code
	}{
		{paramChange(4, "no.such.key", 1), cby(5), system.CodeUnknownParam},
		{paramChange(4, governance.KeyVotingPeriod, 0), cby(5), system.CodeParamOutOfRange},
		{paramChange(3, governance.KeyVotingPeriod, 20), cby(5), system.CodeTierTooLow},
		{&types.GovPropose{Tier: 1, Disburse: []types.GovDisburse{{To: bob, Amount: cby(1)}}}, cby(5), system.CodeTierTooLow},
		{&types.GovPropose{Tier: 4, Params: []types.GovParam{{Key: governance.KeyVotingPeriod, Value: 2}, {Key: governance.KeyVotingPeriod, Value: 3}}}, cby(5), system.CodeInvalidProposal},
		{paramChange(4, governance.KeyVotingPeriod, 20), cby(4), system.CodeDepositTooLow},
		{paramChange(4, governance.KeyVotingPeriod, 20), cby(5000), system.CodeInsufficientBalance},
	} {
		f.want(f.run(alice, c.value, c.in), c.code)
	}
	if ps, err := governance.ReadProposals(f.c.State); err != nil || len(ps) != 0 {
		t.Fatalf("refused proposals left records: %v %v", ps, err)
	}
	if len(f.c.State.Writes()) != 2 { // the funded accounts
		t.Fatalf("refusals wrote state: %d writes", len(f.c.State.Writes()))
	}
	// A chain with no voters cannot open proposals.
	f0 := newFixture(t)
	f0.want(f0.run(alice, cby(5), paramChange(4, governance.KeyVotingPeriod, 20)), system.CodeNoVotingPower)
}

// A parameter change on a --dev-like chain: proposed, voted, closed early
// once every voter voted, queued for the timelock, executed at the ETA;
// the Governance actor then consumes the new value (a higher deposit
// refuses the old one). The deposit returns to the proposer.
func TestParameterChangeLifecycle(t *testing.T) {
	f := newFixture(t, alice)
	r := f.run(bob, cby(5), paramChange(4, governance.KeyMinDeposit, 50))
	f.want(r, system.CodeOK)
	if system.FromBE8(r.Return) != 1 || len(r.Events) != 1 || r.Events[0].Topic != governance.TopicProposed {
		t.Fatalf("return %x events %+v", r.Return, r.Events)
	}
	if bal, _ := f.c.Balance(bob); bal.Cmp(cby(995)) != 0 {
		t.Fatalf("deposit not held: %s", bal)
	}
	// Bad votes.
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 9, Choice: types.VoteYes}), system.CodeNoSuchProposal)
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 1, Choice: 4}), system.CodeInvalidVote)
	f.want(f.run(bob, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeNoVotingPower)
	// Execution before it passed.
	f.want(f.run(bob, nil, &types.GovExecute{Proposal: 1}), system.CodeNotQueued)
	f.want(f.run(bob, nil, &types.GovExecute{Proposal: 7}), system.CodeNoSuchProposal)

	// A later vote replaces the earlier one.
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 1, Choice: types.VoteNo}), system.CodeOK)
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeOK)
	if tl := governance.Count(f.proposal(1)); tl.ValYes != 1 || tl.ValNo != 0 || !tl.Passed() {
		t.Fatalf("tally %+v", tl)
	}
	// Every voter voted: the end of this block closes the vote.
	f.advance(1)
	p := f.proposal(1)
	if p.Status != governance.StatusQueued || p.ETA != 4 {
		t.Fatalf("status %s eta %d", governance.StatusName(p.Status), p.ETA)
	}
	if bal, _ := f.c.Balance(bob); bal.Cmp(cby(1000)) != 0 {
		t.Fatalf("deposit not refunded: %s", bal)
	}
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 1, Choice: types.VoteNo}), system.CodeVotingClosed)
	f.c.Env.Height = 3
	f.want(f.run(bob, nil, &types.GovExecute{Proposal: 1}), system.CodeBeforeETA)
	if f.param(governance.KeyMinDeposit) != 5 {
		t.Fatal("changed before the ETA")
	}
	f.advance(4)
	if p := f.proposal(1); p.Status != governance.StatusExecuted {
		t.Fatalf("status %s", governance.StatusName(p.Status))
	}
	if f.param(governance.KeyMinDeposit) != 50 {
		t.Fatal("not changed at the ETA")
	}
	f.want(f.run(bob, nil, &types.GovExecute{Proposal: 1}), system.CodeNotQueued)
	// The consumer: the old deposit is refused now, the new one accepted.
	f.c.Env.Height = 5
	f.want(f.run(bob, cby(5), paramChange(4, governance.KeyVotingPeriod, 20)), system.CodeDepositTooLow)
	f.want(f.run(bob, cby(50), paramChange(4, governance.KeyVotingPeriod, 20)), system.CodeOK)
}

// gov_execute by anyone at the ETA executes before the end of the block.
func TestExecuteTx(t *testing.T) {
	f := newFixture(t, alice, bob)
	f.want(f.run(alice, cby(5), paramChange(0, "gov.voting_period_blocks", 7)), system.CodeTierTooLow)
	f.want(f.run(alice, cby(5), paramChange(4, governance.KeyVotingPeriod, 7)), system.CodeOK)
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeOK)
	// bob has not voted: the vote stays open until its end (height 10).
	f.advance(9)
	if p := f.proposal(1); p.Status != governance.StatusVoting || p.VotingEnd != 10 {
		t.Fatalf("status %s end %d", governance.StatusName(p.Status), p.VotingEnd)
	}
	f.want(f.run(bob, nil, &types.GovVote{Proposal: 1, Choice: types.VoteAbstain}), system.CodeOK)
	f.c.Env.Height = 10
	// bob abstained at 9 after the step ran; the period's end closes it.
	f.advance(10)
	p := f.proposal(1)
	// 1 of 2 validators voted yes: 50% is not above the tier 4 majority.
	if p.Status != governance.StatusRejected {
		t.Fatalf("status %s", governance.StatusName(p.Status))
	}
	f.c.Env.Height = 11
	f.want(f.run(alice, cby(5), paramChange(4, governance.KeyVotingPeriod, 7)), system.CodeOK)
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 2, Choice: types.VoteYes}), system.CodeOK)
	f.want(f.run(bob, nil, &types.GovVote{Proposal: 2, Choice: types.VoteYes}), system.CodeOK)
	f.advance(11)
	if p := f.proposal(2); p.Status != governance.StatusQueued || p.ETA != 14 {
		t.Fatalf("status %s eta %d", governance.StatusName(p.Status), p.ETA)
	}
	f.c.Env.Height = 14
	f.want(f.run(bob, nil, &types.GovExecute{Proposal: 2}), system.CodeOK)
	if f.param(governance.KeyVotingPeriod) != 7 || f.proposal(2).Status != governance.StatusExecuted {
		t.Fatal("gov_execute did not execute")
	}
	f.advance(14) // the end-of-block step leaves it alone
	if f.proposal(2).Status != governance.StatusExecuted {
		t.Fatal("executed twice")
	}
	// The next proposal's period is the new one.
	f.c.Env.Height = 15
	f.want(f.run(alice, cby(5), paramChange(4, governance.KeyMinDeposit, 6)), system.CodeOK)
	if p := f.proposal(3); p.VotingEnd != 15+7-1 {
		t.Fatalf("voting end %d", p.VotingEnd)
	}
}

// treasurySupply is the sum of the balances of the accounts in play.
func supply(t *testing.T, c *systemtest.Chain, as ...types.Address) *big.Int {
	t.Helper()
	s := new(big.Int)
	for _, a := range as {
		b, err := c.Balance(a)
		if err != nil {
			t.Fatal(err)
		}
		s.Add(s, b)
	}
	return s
}

// A Tier 2 disbursement pays from the Treasury, conserving supply; one
// that the Treasury cannot cover fails as a whole (no partial payment)
// and records why.
func TestDisbursement(t *testing.T) {
	f := newFixture(t, alice)
	if err := f.c.Fund(types.TreasuryAddress, cby(100)); err != nil {
		t.Fatal(err)
	}
	carol := types.Address{0xc0}
	all := []types.Address{alice, bob, carol, gov, types.TreasuryAddress}
	before := supply(t, f.c, all...)
	pass := func(id uint64, in *types.GovPropose) {
		t.Helper()
		f.want(f.run(bob, cby(5), in), system.CodeOK)
		f.want(f.run(alice, nil, &types.GovVote{Proposal: id, Choice: types.VoteYes}), system.CodeOK)
		f.advance(f.c.Env.Height + 3)
		f.c.Env.Height++
	}
	pass(1, &types.GovPropose{Tier: 2, Disburse: []types.GovDisburse{{To: carol, Amount: cby(30)}, {To: bob, Amount: cby(10)}}})
	if p := f.proposal(1); p.Status != governance.StatusExecuted {
		t.Fatalf("status %s code %d", governance.StatusName(p.Status), p.FailCode)
	}
	if b, _ := f.c.Balance(carol); b.Cmp(cby(30)) != 0 {
		t.Fatalf("carol %s", b)
	}
	info, err := treasury.Read(f.c.State)
	if err != nil || info.Balance.Cmp(cby(60)) != 0 || info.Disbursed.Cmp(cby(40)) != 0 || info.Disbursements != 2 {
		t.Fatalf("treasury %+v %v", info, err)
	}
	// 50 then 20 from 60: the second fails, so the first is not paid either.
	pass(2, &types.GovPropose{Tier: 2, Disburse: []types.GovDisburse{{To: carol, Amount: cby(50)}, {To: carol, Amount: cby(20)}}})
	if p := f.proposal(2); p.Status != governance.StatusFailed || system.Code(p.FailCode) != system.CodeTreasuryInsufficient {
		t.Fatalf("status %s code %d", governance.StatusName(p.Status), p.FailCode)
	}
	if b, _ := f.c.Balance(carol); b.Cmp(cby(30)) != 0 {
		t.Fatalf("partial payment: carol %s", b)
	}
	if got := supply(t, f.c, all...); got.Cmp(before) != 0 {
		t.Fatalf("supply %s, was %s", got, before)
	}
}

// A proposal that misses the quorum is rejected and its deposit goes to
// the Treasury.
func TestQuorumMissedDepositToTreasury(t *testing.T) {
	f := newFixture(t, alice)
	f.want(f.run(bob, cby(5), paramChange(4, governance.KeyMinDeposit, 9)), system.CodeOK)
	f.advance(10)
	if p := f.proposal(1); p.Status != governance.StatusRejected {
		t.Fatalf("status %s", governance.StatusName(p.Status))
	}
	if b, _ := f.c.Balance(types.TreasuryAddress); b.Cmp(cby(5)) != 0 {
		t.Fatalf("treasury %s", b)
	}
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeVotingClosed)
}

// With a Validator Registry the stake chamber weighs the validators' stake
// snapshotted when the proposal opened: a validator joining later has no
// vote on it; and a stake majority does not pass without the validator
// chamber (bicameral disagreement).
func TestStakeSnapshotAndBicameral(t *testing.T) {
	f := newFixture(t)
	big1, small1, small2 := types.Address{0xb1}, types.Address{0xb2}, types.Address{0xb3}
	validators.SetGenesisValidators(f.c.State, []validators.GenesisValidator{
		{Address: big1, BLSKey: types.Bytes{1}, Stake: cby(900)},
		{Address: small1, BLSKey: types.Bytes{2}, Stake: cby(50)},
		{Address: small2, BLSKey: types.Bytes{3}, Stake: cby(50)},
	}, 0)
	f.want(f.run(alice, cby(5), paramChange(4, governance.KeyMinDeposit, 9)), system.CodeOK)
	if p := f.proposal(1); len(p.Voters) != 3 || p.Voters[0].Address != big1 || p.Voters[0].Stake.Cmp(cby(900)) != 0 {
		t.Fatalf("snapshot %+v", p.Voters)
	}
	// A stake move after the snapshot: a new validator has no vote here.
	late := types.Address{0xb4}
	validators.SetGenesisValidators(f.c.State, []validators.GenesisValidator{
		{Address: big1, BLSKey: types.Bytes{1}, Stake: cby(900)}, {Address: late, BLSKey: types.Bytes{4}, Stake: cby(5000)},
	}, 0)
	f.want(f.run(late, nil, &types.GovVote{Proposal: 1, Choice: types.VoteNo}), system.CodeNoVotingPower)
	f.want(f.run(big1, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeOK)
	f.want(f.run(small1, nil, &types.GovVote{Proposal: 1, Choice: types.VoteNo}), system.CodeOK)
	f.want(f.run(small2, nil, &types.GovVote{Proposal: 1, Choice: types.VoteNo}), system.CodeOK)
	tl := governance.Count(f.proposal(1))
	if !tl.Quorum || !tl.StakeOK || tl.ValidatOK || tl.Passed() {
		t.Fatalf("tally %+v", tl)
	}
	f.advance(1)
	if p := f.proposal(1); p.Status != governance.StatusRejected {
		t.Fatalf("status %s", governance.StatusName(p.Status))
	}
}

// The §11.3 tier matrix at its boundaries: the quorum passes at exactly
// its share, the approval and the validator majority only strictly above.
func TestTierMatrix(t *testing.T) {
	f := newFixture(t, alice)
	want := [][4]uint64{{1000, 5000, 5000}, {1500, 5000, 5000}, {2000, 6000, 5000}, {2500, 6600, 6600}, {3300, 7500, 6600}}
	for tier := uint8(0); tier <= governance.MaxTier; tier++ {
		q, a, v := f.param(governance.TierKey(tier, "quorum_bps")), f.param(governance.TierKey(tier, "approval_bps")), f.param(governance.TierKey(tier, "validator_bps"))
		if q != want[tier][0] || a != want[tier][1] || v != want[tier][2] {
			t.Fatalf("tier %d rules %d %d %d", tier, q, a, v)
		}
		rules := governance.Rules{QuorumBps: q, ApprovalBps: a, ValidatorBps: v}
		// 10,000 voters of stake 1 each: exact shares.
		mk := func(yes, no, abstain int) *governance.Proposal {
			p := &governance.Proposal{Rules: rules}
			for i := 0; i < 10000; i++ {
				c := uint8(0)
				switch {
				case i < yes:
					c = types.VoteYes
				case i < yes+no:
					c = types.VoteNo
				case i < yes+no+abstain:
					c = types.VoteAbstain
				}
				p.Voters = append(p.Voters, governance.Voter{Stake: big.NewInt(1), Choice: c})
			}
			return p
		}
		// Quorum: exactly q voting (all abstain) reaches it, one less does not.
		if tl := governance.Count(mk(0, 0, int(q))); !tl.Quorum {
			t.Errorf("tier %d: quorum at exactly %d bps not reached", tier, q)
		}
		if tl := governance.Count(mk(0, 0, int(q)-1)); tl.Quorum {
			t.Errorf("tier %d: quorum below %d bps reached", tier, q)
		}
		// Approval: yes/(yes+no) exactly a fails, one more yes passes.
		if tl := governance.Count(mk(int(a), 10000-int(a), 0)); tl.StakeOK {
			t.Errorf("tier %d: approval at exactly %d bps passed", tier, a)
		}
		if tl := governance.Count(mk(int(a)+1, 10000-int(a)-1, 0)); !tl.StakeOK {
			t.Errorf("tier %d: approval above %d bps failed", tier, a)
		}
		// Validator majority: exactly v yes validators fails, one more passes.
		if tl := governance.Count(mk(int(v), 0, 0)); tl.ValidatOK {
			t.Errorf("tier %d: validator majority at exactly %d bps passed", tier, v)
		}
		if tl := governance.Count(mk(int(v)+1, 0, 0)); !tl.ValidatOK {
			t.Errorf("tier %d: validator majority above %d bps failed", tier, v)
		}
	}
}

// Genesis values are checked; nothing is written until a change.
func TestGenesisValues(t *testing.T) {
	if _, err := governance.New(governance.Params{Genesis: map[string]uint64{"x": 1}}); err == nil {
		t.Fatal("unknown genesis key accepted")
	}
	if _, err := governance.New(governance.Params{Genesis: map[string]uint64{governance.KeyVotingPeriod: 0}}); err == nil {
		t.Fatal("out-of-range genesis value accepted")
	}
	m, err := governance.New(governance.Params{Genesis: governance.DevGenesis()})
	if err != nil {
		t.Fatal(err)
	}
	o := state.NewOverlay(state.MapReader{})
	vs, err := m.Store().All(o)
	if err != nil || len(vs) != len(governance.Defs()) {
		t.Fatalf("%d values: %v", len(vs), err)
	}
	for _, v := range vs {
		if v.Key == governance.KeyVotingPeriod && (v.Value != 120 || v.Source != "genesis") {
			t.Fatalf("%+v", v)
		}
	}
	if err := m.EndBlock(systemtest.Ctx(&systemtest.Chain{State: o, Env: system.Env{Height: 5}})); err != nil {
		t.Fatal(err)
	}
	if len(o.Writes()) != 0 {
		t.Fatal("an idle governance wrote state")
	}
}

// Stake unbonding after its validator left the set still votes, in the
// stake chamber only.
func TestUnbondingStakeVotes(t *testing.T) {
	f := newFixture(t)
	vals := validators.New(validators.Params{EpochLength: 4, MinStake: cby(100)}, 1)
	v1, v2, v3 := types.Address{0xe1}, types.Address{0xe2}, types.Address{0xe3}
	validators.SetGenesisValidators(f.c.State, []validators.GenesisValidator{
		{Address: v1, BLSKey: types.Bytes{1}, Stake: cby(600)}, {Address: v2, BLSKey: types.Bytes{2}, Stake: cby(300)},
		{Address: v3, BLSKey: types.Bytes{3}, Stake: cby(100)}}, 0)
	if r, err := f.c.Run(vals, v3, types.ValidatorRegistryAddress, nil, &types.ValidatorExit{}); err != nil || r.Err != nil {
		t.Fatalf("exit: %v %v", err, r)
	}
	for h := uint64(1); h <= 4; h++ {
		f.c.Env.Height = h
		if err := f.c.EndBlock(vals); err != nil {
			t.Fatal(err)
		}
	}
	if ep, _ := validators.ReadEpoch(f.c.State); len(ep.Members) != 2 {
		t.Fatalf("members %+v", ep.Members)
	}
	f.c.Env.Height = 5
	f.want(f.run(alice, cby(5), paramChange(4, governance.KeyMinDeposit, 9)), system.CodeOK)
	f.want(f.run(v3, nil, &types.GovVote{Proposal: 1, Choice: types.VoteNo}), system.CodeOK)
	f.want(f.run(v1, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeOK)
	f.want(f.run(v2, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeOK)
	tl := governance.Count(f.proposal(1))
	if tl.Validators != 2 || tl.ValYes != 2 || tl.ValNo != 0 || tl.Total.Cmp(cby(1000)) != 0 || tl.No.Cmp(cby(100)) != 0 || !tl.Passed() {
		t.Fatalf("tally %+v", tl)
	}
}
