package governance_test

import (
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/governance"
	"github.com/cowboy-foundation/cowboy/chain/system/models"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// modelFixture is the governance fixture with a Model Registry connected
// and models published by pub, one per name; it returns their ids.
func modelFixture(t *testing.T, names ...string) (*fixture, *models.Module, []types.Hash) {
	t.Helper()
	f := newFixture(t, alice)
	reg := models.New(models.Params{RetireDelay: 1})
	f.m.UseModels(reg)
	pub := types.Address{0xb0}
	if err := f.c.Fund(pub, cby(int64(1000*len(names)+100))); err != nil {
		t.Fatal(err)
	}
	var ids []types.Hash
	for i, n := range names {
		in := &types.ModelPublish{Weights: types.Hash{byte(i + 1)}, Arch: types.Hash{2}, Tokenizer: types.Hash{3}, License: types.Hash{4}, Name: n}
		r, err := f.c.Run(reg, pub, types.ModelRegistryAddress, cby(1000), in)
		if err != nil || r.Err != nil {
			t.Fatalf("publish %s: %v %v", n, err, r.Err)
		}
		ids = append(ids, models.ID(in.Weights, in.Arch, in.Tokenizer, in.License))
	}
	return f, reg, ids
}

// usable is the code of models.Usable for id (CodeOK when usable).
func (f *fixture) usable(id types.Hash) system.Code {
	f.t.Helper()
	return system.CodeOf(models.Usable(f.c.State, id))
}

// decide opens in as bob, alice votes choice, and the chain runs to the
// proposal's ETA (or its rejection); it returns the proposal.
func (f *fixture) decide(id uint64, in *types.GovPropose, choice uint8) *governance.Proposal {
	f.t.Helper()
	f.want(f.run(bob, cby(5), in), system.CodeOK)
	f.want(f.run(alice, nil, &types.GovVote{Proposal: id, Choice: choice}), system.CodeOK)
	f.advance(f.c.Env.Height + 3)
	f.c.Env.Height++
	return f.proposal(id)
}

func banModel(id types.Hash, reason string) *types.GovPropose {
	return &types.GovPropose{Tier: governance.ModelTier, Title: "ban", Models: []types.GovModel{{ID: id, Ban: true, Reason: reason}}}
}

// A passed Tier 1 ban proposal bans the model through the registry at its
// execution, and a passed unban proposal lifts the ban.
func TestModelBanProposal(t *testing.T) {
	f, _, ids := modelFixture(t, "tiny")
	id := ids[0]
	p := f.decide(1, banModel(id, "leaks training data"), types.VoteYes)
	if p.Status != governance.StatusExecuted {
		t.Fatalf("ban: status %s code %d", governance.StatusName(p.Status), p.FailCode)
	}
	if c := f.usable(id); c != system.CodeModelBanned {
		t.Fatalf("after the ban: %s, want ModelBanned", c)
	}
	if md, err := models.Read(f.c.State, id); err != nil || !md.Banned || md.BanReason != "leaks training data" {
		t.Fatalf("record %+v %v", md, err)
	}
	p = f.decide(2, &types.GovPropose{Tier: 1, Title: "unban", Models: []types.GovModel{{ID: id}}}, types.VoteYes)
	if p.Status != governance.StatusExecuted {
		t.Fatalf("unban: status %s code %d", governance.StatusName(p.Status), p.FailCode)
	}
	if c := f.usable(id); c != system.CodeOK {
		t.Fatalf("after the unban: %s", c)
	}
}

// A rejected ban proposal leaves the model usable.
func TestModelBanRejected(t *testing.T) {
	f, _, ids := modelFixture(t, "tiny")
	p := f.decide(1, banModel(ids[0], "spam"), types.VoteNo)
	if p.Status != governance.StatusRejected {
		t.Fatalf("status %s", governance.StatusName(p.Status))
	}
	if c := f.usable(ids[0]); c != system.CodeOK {
		t.Fatalf("after a rejected ban: %s", c)
	}
}

// A ban proposal's execution is all-or-nothing: when one of its models was
// withdrawn during the vote, the proposal fails with NoSuchModel and the
// other model is not banned either.
func TestModelBanAllOrNothing(t *testing.T) {
	f, reg, ids := modelFixture(t, "a", "b")
	in := &types.GovPropose{Tier: 1, Title: "ban both", Models: []types.GovModel{{ID: ids[0], Ban: true, Reason: "x"}, {ID: ids[1], Ban: true, Reason: "y"}}}
	f.want(f.run(bob, cby(5), in), system.CodeOK)
	f.want(f.run(alice, nil, &types.GovVote{Proposal: 1, Choice: types.VoteYes}), system.CodeOK)
	pub := types.Address{0xb0}
	for _, w := range []types.Instruction{&types.ModelRetire{ID: ids[1]}, &types.ModelWithdraw{ID: ids[1]}} {
		r, err := f.c.Run(reg, pub, types.ModelRegistryAddress, nil, w)
		if err != nil || r.Err != nil {
			t.Fatalf("%s: %v %v", w.InstructionKind(), err, r.Err)
		}
		f.c.Env.Height++
	}
	f.advance(f.c.Env.Height + 3)
	p := f.proposal(1)
	if p.Status != governance.StatusFailed || system.Code(p.FailCode) != system.CodeNoSuchModel {
		t.Fatalf("status %s code %s", governance.StatusName(p.Status), system.Code(p.FailCode))
	}
	if c := f.usable(ids[0]); c != system.CodeOK {
		t.Fatalf("model a after the failed proposal: %s", c)
	}
}

// Model proposals are refused below Tier 1, for an unregistered or twice
// named model, without a registry, and malformed without a ban reason or
// with an unban reason.
func TestModelProposalRefusals(t *testing.T) {
	f, _, ids := modelFixture(t, "tiny")
	id := ids[0]
	for _, c := range []struct {
		in   *types.GovPropose
		code system.Code
	}{
		{&types.GovPropose{Tier: 0, Models: []types.GovModel{{ID: id, Ban: true, Reason: "r"}}}, system.CodeTierTooLow},
		{banModel(types.Hash{0xee}, "r"), system.CodeNoSuchModel},
		{&types.GovPropose{Tier: 1, Models: []types.GovModel{{ID: id, Ban: true, Reason: "r"}, {ID: id}}}, system.CodeInvalidProposal},
	} {
		f.want(f.run(bob, cby(5), c.in), c.code)
	}
	for name, in := range map[string]*types.GovPropose{
		"ban without reason": banModel(id, ""),
		"padded reason":      banModel(id, " r"),
		"unban with reason":  {Tier: 1, Models: []types.GovModel{{ID: id, Reason: "r"}}},
		"ban and param": {Tier: 4, Models: []types.GovModel{{ID: id, Ban: true, Reason: "r"}},
			Params: []types.GovParam{{Key: governance.KeyMinDeposit, Value: 1}}},
	} {
		if _, err := f.c.Run(f.m, bob, gov, cby(5), in); !errors.Is(err, types.ErrMalformedTx) {
			t.Errorf("%s: %v", name, err)
		}
	}
	bare := newFixture(t, alice)
	bare.want(bare.run(bob, cby(5), banModel(id, "r")), system.CodeInvalidProposal)
}
