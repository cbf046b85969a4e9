package governance_test

import (
	"crypto/ecdsa"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/governance"
	"github.com/cowboy-foundation/cowboy/chain/system/runners"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// councilKeys are ten deterministic keys: nine members and an outsider.
func councilKeys(t *testing.T) ([]*ecdsa.PrivateKey, []types.Address) {
	t.Helper()
	var ks []*ecdsa.PrivateKey
	var as []types.Address
	for i := 1; i <= 10; i++ {
		b := make([]byte, 32)
		b[31] = byte(i)
		k, err := crypto.ToECDSA(b)
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
		as = append(as, types.PubkeyToAddress(k.PublicKey))
	}
	return ks, as
}

// sign is the action signed by keys (systemtest's chain id is 1).
func sign(t *testing.T, in *types.GovCouncil, keys ...*ecdsa.PrivateKey) *types.GovCouncil {
	t.Helper()
	h := types.CouncilDigest(1, in.Action, in.Proposal, in.Actor, in.Nonce)
	in.Signatures = nil
	for _, k := range keys {
		s, err := crypto.Sign(h[:], k)
		if err != nil {
			t.Fatal(err)
		}
		in.Signatures = append(in.Signatures, s)
	}
	return in
}

func newCouncilFixture(t *testing.T) (*fixture, []*ecdsa.PrivateKey) {
	t.Helper()
	keys, addrs := councilKeys(t)
	g := map[string]uint64{governance.KeyVotingPeriod: 10, governance.KeyMinDeposit: 0, governance.KeyCouncilRatify: 20}
	for tier := uint8(0); tier <= governance.MaxTier; tier++ {
		g[governance.TierKey(tier, "timelock_blocks")] = 5
	}
	m, err := governance.New(governance.Params{Genesis: g, Voters: []types.Address{alice}, Council: addrs[:9]}, runners.ParamDefs(runners.Params{})...)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, m: m, c: systemtest.New()}, keys
}

// passToQueue opens a proposal and votes it through to the queue.
func (f *fixture) passToQueue(id uint64, in *types.GovPropose) {
	f.t.Helper()
	f.want(f.run(alice, nil, in), system.CodeOK)
	f.want(f.run(alice, nil, &types.GovVote{Proposal: id, Choice: types.VoteYes}), system.CodeOK)
	f.advance(f.c.Env.Height)
	if p := f.proposal(id); p.Status != governance.StatusQueued {
		f.t.Fatalf("proposal %d %s", id, governance.StatusName(p.Status))
	}
	f.c.Env.Height++
}

// councilActor submits actions signed by seven members, tracking the nonce.
type councilActor struct {
	f     *fixture
	keys  []*ecdsa.PrivateKey
	nonce uint64
}

func newActor(f *fixture, keys []*ecdsa.PrivateKey) *councilActor {
	return &councilActor{f: f, keys: keys}
}

// act submits in and wants code; a success advances the nonce.
func (a *councilActor) act(in *types.GovCouncil, code system.Code) {
	a.f.t.Helper()
	in.Nonce = a.nonce
	a.f.want(a.f.run(bob, nil, sign(a.f.t, in, a.keys[:7]...)), code)
	if code == system.CodeOK {
		a.nonce++
	}
}

// The Council's membership and threshold: 7 distinct members' signatures
// over the action with the current nonce, once.
func TestCouncilSignatures(t *testing.T) {
	if _, err := governance.New(governance.Params{Council: []types.Address{{1}, {2}}}); err == nil {
		t.Fatal("a 2-member Council accepted")
	}
	f, keys := newCouncilFixture(t)
	f.passToQueue(1, paramChange(0, runners.KeyHeartbeatTimeout, 90))
	cancel := func(nonce uint64) *types.GovCouncil {
		return &types.GovCouncil{Action: types.CouncilCancel, Proposal: 1, Nonce: nonce}
	}
	for name, in := range map[string]*types.GovCouncil{
		"six members":                sign(t, cancel(0), keys[:6]...),
		"six members and a stranger": sign(t, cancel(0), append(keys[:6:6], keys[9])...),
		"a member twice":             sign(t, cancel(0), append(keys[:6:6], keys[0])...),
		"wrong nonce":                sign(t, cancel(1), keys[:7]...),
	} {
		if r := f.run(bob, nil, in); r.Code() != system.CodeCouncilSignatures {
			t.Errorf("%s: %s (%v)", name, r.Code(), r.Err)
		}
	}
	// Signatures over another action do not carry over.
	forged := sign(t, cancel(0), keys[:7]...)
	forged.Proposal = 2
	f.want(f.run(bob, nil, forged), system.CodeCouncilSignatures)
	good := sign(t, cancel(0), keys[2:9]...)
	f.want(f.run(bob, nil, good), system.CodeOK)
	// Replaying the same signature set fails on the nonce.
	f.want(f.run(bob, nil, good), system.CodeCouncilSignatures)
	// No Council configured: every action is refused.
	f0 := newFixture(t, alice)
	f0.want(f0.run(bob, nil, sign(t, cancel(0), keys[:9]...)), system.CodeCouncilSignatures)
}

// Cancel works on a queued Tier 0–3 proposal only; a cancelled proposal
// never executes.
func TestCouncilCancel(t *testing.T) {
	f, keys := newCouncilFixture(t)
	act := newActor(f, keys).act
	act(&types.GovCouncil{Action: types.CouncilCancel, Proposal: 1}, system.CodeNoSuchProposal)
	f.want(f.run(alice, nil, paramChange(0, runners.KeyHeartbeatTimeout, 90)), system.CodeOK)
	act(&types.GovCouncil{Action: types.CouncilCancel, Proposal: 1}, system.CodeNotQueued) // still voting
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeOK)
	f.advance(f.c.Env.Height)
	f.c.Env.Height++
	f.passToQueue(2, paramChange(4, governance.KeyVotingPeriod, 30))
	act(&types.GovCouncil{Action: types.CouncilCancel, Proposal: 2}, system.CodeCouncilPower) // Tier 4
	act(&types.GovCouncil{Action: types.CouncilCancel, Proposal: 1}, system.CodeOK)
	if p := f.proposal(1); governance.StatusName(p.Status) != "cancelled" {
		t.Fatalf("status %s", governance.StatusName(p.Status))
	}
	f.advance(f.c.Env.Height + 10)
	if f.param(runners.KeyHeartbeatTimeout) != 60 {
		t.Fatal("a cancelled proposal executed")
	}
	if f.param(governance.KeyVotingPeriod) != 30 {
		t.Fatal("the Tier 4 proposal did not execute")
	}
	f.want(f.run(bob, nil, &types.GovExecute{Proposal: 1}), system.CodeNotQueued)
}

// Powers the Council does not have are refused, even with 9 signatures.
func TestCouncilOutsideItsPowers(t *testing.T) {
	f, keys := newCouncilFixture(t)
	for name, in := range map[string]*types.GovCouncil{
		"unknown action":       {Action: 9},
		"pause Governance":     {Action: types.CouncilPause, Actor: types.GovernanceAddress},
		"pause the Treasury":   {Action: types.CouncilPause, Actor: types.TreasuryAddress},
		"pause a user account": {Action: types.CouncilPause, Actor: alice},
	} {
		if r := f.run(bob, nil, sign(t, in, keys[:9]...)); r.Code() != system.CodeCouncilPower {
			t.Errorf("%s: %s (%v)", name, r.Code(), r.Err)
		}
	}
	// The Council cannot vote: its members are not voters.
	f.want(f.run(alice, nil, paramChange(0, runners.KeyHeartbeatTimeout, 90)), system.CodeOK)
	_, addrs := councilKeys(t)
	f.want(f.run(addrs[0], nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeNoVotingPower)
}

// A circuit-break refuses the actor's instructions; unratified it lapses
// after gov.council_ratify_blocks; ratified by an executed proposal it
// stays until the Council lifts it.
func TestCouncilCircuitBreak(t *testing.T) {
	f, keys := newCouncilFixture(t)
	reg := governance.Guard(runners.New(runners.Params{}))[0]
	act := newActor(f, keys).act
	heartbeat := func() system.Code {
		t.Helper()
		r, err := f.c.Run(reg, bob, types.RunnerRegistryAddress, nil, &types.RunnerHeartbeat{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Code()
	}
	if c := heartbeat(); c != system.CodeNotARunner {
		t.Fatalf("before: %s", c)
	}
	act(&types.GovCouncil{Action: types.CouncilUnpause, Actor: types.RunnerRegistryAddress}, system.CodeNotPaused)
	act(&types.GovCouncil{Action: types.CouncilPause, Actor: types.RunnerRegistryAddress}, system.CodeOK) // at 1, lapses at 21
	if c := heartbeat(); c != system.CodeActorPaused {
		t.Fatalf("paused: %s", c)
	}
	f.advance(20)
	if c := heartbeat(); c != system.CodeActorPaused {
		t.Fatalf("before the lapse: %s", c)
	}
	f.c.Env.Height = 21
	f.advance(21)
	if c := heartbeat(); c != system.CodeNotARunner {
		t.Fatalf("after the lapse: %s", c)
	}
	// Pause again and ratify by a proposal within the window.
	f.c.Env.Height = 22
	act(&types.GovCouncil{Action: types.CouncilPause, Actor: types.RunnerRegistryAddress}, system.CodeOK) // lapses at 42
	f.want(f.run(alice, nil, &types.GovPropose{Tier: 0, Ratify: []types.Address{alice}}), system.CodeInvalidProposal)
	f.passToQueue(1, &types.GovPropose{Tier: 0, Title: "ratify", Ratify: []types.Address{types.RunnerRegistryAddress}})
	f.advance(60)
	if p := f.proposal(1); p.Status != governance.StatusExecuted {
		t.Fatalf("ratification %s code %d", governance.StatusName(p.Status), p.FailCode)
	}
	if c := heartbeat(); c != system.CodeActorPaused {
		t.Fatalf("ratified, past the window: %s", c)
	}
	f.c.Env.Height = 61
	act(&types.GovCouncil{Action: types.CouncilUnpause, Actor: types.RunnerRegistryAddress}, system.CodeOK)
	if c := heartbeat(); c != system.CodeNotARunner {
		t.Fatalf("lifted: %s", c)
	}
	// A ratification of a break that is no longer there fails at execution.
	f.passToQueue(2, &types.GovPropose{Tier: 0, Title: "late", Ratify: []types.Address{types.RunnerRegistryAddress}})
	f.advance(f.c.Env.Height + 5)
	if p := f.proposal(2); p.Status != governance.StatusFailed || system.Code(p.FailCode) != system.CodeNotPaused {
		t.Fatalf("late ratification %s code %d", governance.StatusName(p.Status), p.FailCode)
	}
}

// Council membership changes only by a Tier 4 proposal; afterwards only
// the new members' signatures count.
func TestCouncilMembershipTier4(t *testing.T) {
	f, keys := newCouncilFixture(t)
	_, addrs := councilKeys(t)
	// The new Council: members 1–9 (member 0 leaves, the outsider joins).
	next := addrs[1:10]
	f.want(f.run(alice, nil, &types.GovPropose{Tier: 3, Council: next}), system.CodeTierTooLow)
	f.want(f.run(alice, nil, &types.GovPropose{Tier: 4, Council: next[:8]}), system.CodeInvalidProposal)
	f.want(f.run(alice, nil, &types.GovPropose{Tier: 4, Council: append(next[:8:8], next[0])}), system.CodeInvalidProposal)
	f.passToQueue(1, &types.GovPropose{Tier: 4, Title: "new council", Council: next})
	f.advance(f.c.Env.Height + 5)
	if p := f.proposal(1); p.Status != governance.StatusExecuted {
		t.Fatalf("status %s code %d", governance.StatusName(p.Status), p.FailCode)
	}
	cs, err := f.m.Council(f.c.State)
	if err != nil || len(cs) != 9 {
		t.Fatalf("council %v %v", cs, err)
	}
	for _, a := range cs {
		if a == addrs[0] {
			t.Fatal("the departed member is still on the Council")
		}
	}
	f.c.Env.Height++
	pause := &types.GovCouncil{Action: types.CouncilPause, Actor: types.RunnerRegistryAddress}
	// Members 0–6: the departed member's signature no longer counts.
	f.want(f.run(bob, nil, sign(t, pause, keys[:7]...)), system.CodeCouncilSignatures)
	f.want(f.run(bob, nil, sign(t, pause, keys[3:10]...)), system.CodeOK)
}
