package models_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/models"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func cby(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }

// The Model Registry as a module: publication with its deposit and
// derived id, listing, governance bans, and retirement with the delayed
// refund that a ban holds back.
func TestModelRegistry(t *testing.T) {
	m := models.New(models.Params{RetireDelay: 10})
	if m.Params().Deposit.Cmp(cby(1000)) != 0 {
		t.Fatalf("default deposit %s, want 1,000 CBY", m.Params().Deposit)
	}
	c := systemtest.New()
	pub, other := types.Address{0x01}, types.Address{0x02}
	for _, a := range []types.Address{pub, other} {
		if err := c.Fund(a, cby(5000)); err != nil {
			t.Fatal(err)
		}
	}
	reg := types.ModelRegistryAddress
	run := func(from types.Address, value *big.Int, in types.Instruction) *systemtest.Result {
		t.Helper()
		return c.MustRun(t, m, from, reg, value, in)
	}
	in := &types.ModelPublish{Weights: types.Hash{1}, Arch: types.Hash{2}, Tokenizer: types.Hash{3}, License: types.Hash{4}, Name: "tiny-llama", URI: "cbfs://weights"}
	if _, err := c.Run(m, pub, types.RunnerRegistryAddress, cby(1000), in); !errors.Is(err, types.ErrMalformedTx) {
		t.Fatalf("publish elsewhere: %v", err)
	}
	if _, err := c.Run(m, pub, reg, big.NewInt(1), &types.ModelRetire{}); !errors.Is(err, types.ErrMalformedTx) {
		t.Fatalf("retire with value: %v", err)
	}
	if r := run(pub, cby(999), in); r.Code() != system.CodeModelDeposit {
		t.Fatalf("short deposit: %v", r.Err)
	}
	if r := run(pub, cby(1000), &types.ModelPublish{Name: " padded"}); r.Code() != system.CodeInvalidModel {
		t.Fatalf("bad name: %v", r.Err)
	}
	r := run(pub, cby(1000), in)
	if r.Err != nil || len(r.Events) != 1 || r.Events[0].Topic != models.TopicModelPublished {
		t.Fatalf("publish: %v %+v", r.Err, r.Events)
	}
	// The id is keccak256 of the four component hashes, concatenated.
	var cat []byte
	for _, h := range []types.Hash{in.Weights, in.Arch, in.Tokenizer, in.License} {
		cat = append(cat, h[:]...)
	}
	id := types.Keccak256(cat)
	var ret []byte
	if err := codec.Unmarshal(r.Return, &ret); err != nil || types.Hash(ret) != id {
		t.Fatalf("returned id %x, want %s (%v)", ret, id, err)
	}
	if got, ok := models.ParseRef(id.String()); !ok || got != id {
		t.Fatalf("ParseRef(%s) = %s %v", id, got, ok)
	}
	if _, ok := models.ParseRef("gpt-4o-mini"); ok {
		t.Fatal("a free model name parsed as an id")
	}
	if bal, _ := c.Balance(reg); bal.Cmp(cby(1000)) != 0 {
		t.Fatalf("registry holds %s", bal)
	}
	if r := run(other, cby(1000), in); r.Code() != system.CodeModelExists {
		t.Fatalf("republish: %v", r.Err)
	}
	if err := models.Usable(c.State, id); err != nil {
		t.Fatalf("usable: %v", err)
	}
	if err := models.Usable(c.State, types.Hash{9}); system.CodeOf(err) != system.CodeNoSuchModel {
		t.Fatalf("unknown model usable: %v", err)
	}
	list, err := models.List(c.State)
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Publisher != pub || list[0].Name != "tiny-llama" {
		t.Fatalf("list %+v: %v", list, err)
	}

	// Only governance bans; a ban makes the model unusable until lifted.
	if r := run(pub, nil, &types.ModelBan{ID: id, Reason: "x"}); r.Code() != system.CodeNotGovernance {
		t.Fatalf("ban by the publisher: %v", r.Err)
	}
	if r := run(types.GovernanceAddress, nil, &types.ModelBan{ID: id, Reason: "mislabelled weights"}); r.Err != nil || r.Events[0].Topic != models.TopicModelBanned {
		t.Fatalf("ban: %v", r.Err)
	}
	if err := models.Usable(c.State, id); system.CodeOf(err) != system.CodeModelBanned {
		t.Fatalf("banned model usable: %v", err)
	}
	if r := run(types.GovernanceAddress, nil, &types.ModelUnban{ID: id}); r.Err != nil {
		t.Fatalf("unban: %v", r.Err)
	}
	if err := models.Usable(c.State, id); err != nil {
		t.Fatalf("unbanned: %v", err)
	}
	// The Go entry point governance's proposals call.
	if err := m.Ban(systemtest.Ctx(c), types.Hash{9}, ""); system.CodeOf(err) != system.CodeNoSuchModel {
		t.Fatalf("ban of an unknown model: %v", err)
	}

	// Retire: only the publisher; the deposit waits for the delay and a ban.
	if r := run(other, nil, &types.ModelRetire{ID: id}); r.Code() != system.CodeNotModelOwner {
		t.Fatalf("retire by another: %v", r.Err)
	}
	if r := run(pub, nil, &types.ModelWithdraw{ID: id}); r.Code() != system.CodeNotRetired {
		t.Fatalf("withdraw active: %v", r.Err)
	}
	if r := run(pub, nil, &types.ModelRetire{ID: id}); r.Err != nil {
		t.Fatalf("retire: %v", r.Err)
	}
	if err := models.Usable(c.State, id); system.CodeOf(err) != system.CodeModelRetired {
		t.Fatalf("retired model usable: %v", err)
	}
	if r := run(pub, nil, &types.ModelWithdraw{ID: id}); r.Code() != system.CodeStillUnbonding {
		t.Fatalf("early withdraw: %v", r.Err)
	}
	c.Env.Height += 10
	if err := m.Ban(systemtest.Ctx(c), id, "found late"); err != nil {
		t.Fatal(err)
	}
	if r := run(pub, nil, &types.ModelWithdraw{ID: id}); r.Code() != system.CodeModelBanned {
		t.Fatalf("withdraw while banned: %v", r.Err)
	}
	if err := m.Unban(systemtest.Ctx(c), id); err != nil {
		t.Fatal(err)
	}
	before, _ := c.Balance(pub)
	if r := run(pub, nil, &types.ModelWithdraw{ID: id}); r.Err != nil {
		t.Fatalf("withdraw: %v", r.Err)
	}
	after, _ := c.Balance(pub)
	if new(big.Int).Sub(after, before).Cmp(cby(1000)) != 0 {
		t.Fatalf("refund %s", new(big.Int).Sub(after, before))
	}
	if md, err := models.Read(c.State, id); err != nil || md != nil {
		t.Fatalf("withdrawn model still recorded: %+v %v", md, err)
	}
}

// The registry's address is its own: no other system actor lives there.
func TestRegistryAddress(t *testing.T) {
	for _, a := range []types.Address{types.RunnerRegistryAddress, types.JobDispatcherAddress, types.ResultVerifierAddress,
		types.SecretsManagerAddress, types.TEEVerifierAddress, types.DualBasefeeAddress, types.EntitlementRegistryAddress,
		types.TreasuryAddress, types.GovernanceAddress, types.StorageManagerAddress, types.RelayRegistryAddress,
		types.ValidatorRegistryAddress, types.TimerEscrowAddress} {
		if a == types.ModelRegistryAddress {
			t.Fatalf("the Model Registry shares %s with another system actor", a)
		}
	}
}
