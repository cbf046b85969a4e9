package entitlements_test

import (
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/entitlements"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func grant(grantee types.Address, pool string) *types.EntitlementGrant {
	return &types.EntitlementGrant{Grantee: grantee, Scope: codec.MustMarshal(entitlement.RunnerPoolScope([]byte(pool))),
		Action: codec.MustMarshal(entitlement.RunnerJoinPoolAction([]byte(pool))), Constraints: codec.MustMarshal(&entitlement.Constraints{Revocable: true})}
}

// The registry as a module: the first granter under a pool claims it, a
// stranger's grant under it is Unauthorized, the grantee is in the pool
// until the grant is revoked; the id comes back as the return value.
func TestRegistryModule(t *testing.T) {
	m := entitlements.New()
	c := systemtest.New()
	owner, stranger, runner := types.Address{0x01}, types.Address{0x02}, types.Address{0x03}
	er := types.EntitlementRegistryAddress
	if _, err := c.Run(m, owner, types.JobDispatcherAddress, nil, grant(runner, "gpu")); !errors.Is(err, types.ErrMalformedTx) {
		t.Fatalf("grant to the dispatcher: %v", err)
	}
	r, err := c.Run(m, owner, er, nil, grant(runner, "gpu"))
	if err != nil || r.Err != nil {
		t.Fatalf("grant: %v %v", err, r.Err)
	}
	if len(r.Events) != 2 || r.Events[0].Topic != entitlements.TopicScopeClaimed || r.Events[1].Topic != entitlements.TopicEntitlementGranted {
		t.Fatalf("events %+v", r.Events)
	}
	var id []byte
	if err := codec.Unmarshal(r.Return, &id); err != nil || len(id) != 32 {
		t.Fatalf("grant id %x: %v", r.Return, err)
	}
	if r, _ := c.Run(m, stranger, er, nil, grant(stranger, "gpu")); r.Code() != system.CodeUnauthorized {
		t.Fatalf("stranger's grant: %v", r.Err)
	}
	in, err := entitlements.ReadOnly(c.State).InPool(runner, []byte("gpu"), c.Env.Height)
	if err != nil || !in {
		t.Fatalf("in pool %v: %v", in, err)
	}
	if r, _ := c.Run(m, owner, er, nil, &types.EntitlementRevoke{ID: types.Hash(id)}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if in, _ := entitlements.ReadOnly(c.State).InPool(runner, []byte("gpu"), c.Env.Height); in {
		t.Fatal("still in the pool after the revocation")
	}
	if r, _ := c.Run(m, owner, er, nil, &types.EntitlementRevoke{ID: types.Hash(id)}); r.Code() != system.CodeEntitlement {
		t.Fatalf("second revocation: %v", r.Err)
	}
}
