package execution_test

import (
	"crypto/ecdsa"
	"fmt"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system/entitlements"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// poolGrant is an EntitlementGrant admitting grantee to pool.
func poolGrant(grantee types.Address, pool string, c entitlement.Constraints) *types.EntitlementGrant {
	return &types.EntitlementGrant{Grantee: grantee, Scope: codec.MustMarshal(entitlement.RunnerPoolScope([]byte(pool))),
		Action: codec.MustMarshal(entitlement.RunnerJoinPoolAction([]byte(pool))), Constraints: codec.MustMarshal(&c)}
}

// submitPoolJob has a fresh one-runner EconomicBond actor submit a job
// restricted to pool.
func submitPoolJob(t *testing.T, c *chain, owner *ecdsa.PrivateKey, pool string) types.Hash {
	t.Helper()
	src := strings.Replace(strings.Replace(oracleActor, `"runners": 3`, `"runners": 1, "required_runner_pool": b"`+pool+`"`, 1),
		`"mode": 3, "vote_field": "/price"`, `"mode": 2`, 1)
	salt++
	oracle := deployValue(c, owner, src, fmt.Sprint("p", salt), genesis.CBY(5), nil)
	rs := c.ok(c.tx(owner, &oracle, &types.Call{Handler: "ask", Args: cborArgs([]any{"https://api.example.com/x", genesis.CBY(1), 0, 3})}, 0))
	var raw []byte
	if err := codec.Unmarshal(rs[0].Return, &raw); err != nil {
		t.Fatal(err)
	}
	id, _ := types.BytesToHash(raw)
	return id
}

func TestEntitlementRegistryAndPools(t *testing.T) {
	alice, _ := genKey()
	mallory, _ := genKey()
	c, runners := newJobChain(t, 2, alice, mallory)
	reg := types.EntitlementRegistryAddress
	aliceAddr := types.PubkeyToAddress(alice.PublicKey)
	r0, r1 := runners[0], runners[1]
	revocable := entitlement.Constraints{Revocable: true}

	// No member: a pool job finds no candidate.
	if j := readJob(t, c, submitPoolJob(t, c, alice, "gpu")); j.State != job.StateFailed || j.Fail != job.FailNoCandidates {
		t.Fatalf("job without pool members: %s %d", j.State, j.Fail)
	}
	// Alice claims pool "gpu" by granting r0; only she grants under it after.
	rs := c.ok(c.tx(alice, &reg, poolGrant(r0.addr, "gpu", revocable), 0))
	var idb []byte
	codec.Unmarshal(rs[0].Return, &idb)
	gid, _ := types.BytesToHash(idb)
	for _, tc := range []struct {
		key  *ecdsa.PrivateKey
		in   types.Instruction
		want string
	}{
		{mallory, poolGrant(r1.addr, "gpu", revocable), "Unauthorized"},
		{mallory, &types.EntitlementGrant{Grantee: r1.addr, Scope: codec.MustMarshal(entitlement.GlobalScope()),
			Action: codec.MustMarshal(entitlement.Action{Kind: entitlement.ActionAll}), Constraints: codec.MustMarshal(&revocable)}, "Unauthorized"},
		{alice, poolGrant(r0.addr, "gpu", revocable), "already exists"},
		{mallory, &types.EntitlementRevoke{ID: gid}, "only the granter"},
		{alice, &types.EntitlementGrant{Grantee: r1.addr, Scope: []byte{0xff}, Action: []byte{0x81, 0}, Constraints: codec.MustMarshal(&revocable)}, "InvalidEntitlement"},
	} {
		rs := c.block(c.tx(tc.key, &reg, tc.in, 0))
		if rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, tc.want) {
			t.Fatalf("%T: %+v", tc.in, rs[0])
		}
	}
	if _, err := c.ex.CheckTx(c.tx(alice, &reg, poolGrant(r1.addr, "gpu", revocable), 1)); err == nil {
		t.Fatal("entitlement instruction with value accepted")
	}
	c.nonce[aliceAddr]--
	// The pool filter admits exactly the member.
	for i := 0; i < 3; i++ {
		j := readJob(t, c, submitPoolJob(t, c, alice, "gpu"))
		if j.State != job.StateAssigned || j.Runners[0] != r0.addr {
			t.Fatalf("pool job %d: %s %v", i, j.State, j.Runners)
		}
	}
	var held []entitlement.Record
	c.st.View(func(v *store.View) (err error) {
		held, err = entitlements.ReadOnly(v).List(r0.addr, v.Head().Height)
		return err
	})
	if len(held) != 1 || held[0].Granter != aliceAddr {
		t.Fatalf("r0 holds %+v", held)
	}

	// Delegation: r0 → r1 needs a delegatable parent and strictly narrower
	// constraints; depth is bounded.
	deleg := func(key *ecdsa.PrivateKey, parent types.Hash, to types.Address, c2 entitlement.Constraints) *types.Receipt {
		return c.block(c.tx(key, &reg, &types.EntitlementDelegate{Parent: parent, Grantee: to, Constraints: codec.MustMarshal(&c2)}, 0))[0]
	}
	if r := deleg(r0.key, gid, r1.addr, entitlement.Constraints{Revocable: true}); r.Status != types.ReceiptFailed || !strings.Contains(r.Error, "Entitlement") {
		t.Fatalf("delegating a non-delegatable grant: %+v", r)
	}
	c.ok(c.tx(alice, &reg, &types.EntitlementRevoke{ID: gid}, 0))
	rs = c.ok(c.tx(alice, &reg, poolGrant(r0.addr, "gpu", entitlement.Constraints{Revocable: true, Delegatable: true, DelegationDepthMax: 2}), 0))
	codec.Unmarshal(rs[0].Return, &idb)
	gid, _ = types.BytesToHash(idb)
	if r := deleg(r0.key, gid, r1.addr, entitlement.Constraints{Revocable: true, Delegatable: true, DelegationDepthMax: 2}); r.Status != types.ReceiptFailed || !strings.Contains(r.Error, "narrower") {
		t.Fatalf("delegation with equal depth: %+v", r)
	}
	if r := deleg(r0.key, gid, r1.addr, entitlement.Constraints{Revocable: true, Delegatable: true, DelegationDepthMax: 1}); r.Status != types.ReceiptSuccess {
		t.Fatalf("narrower delegation: %+v", r)
	}
	// Revoking the parent cuts the delegation (lazily): with r0 busy, only
	// r1 could take a job, and after the revocation nobody can.
	c.ok(c.tx(alice, &reg, &types.EntitlementRevoke{ID: gid}, 0))
	if j := readJob(t, c, submitPoolJob(t, c, alice, "gpu")); j.State != job.StateFailed {
		t.Fatalf("pool job after revocation: %s %v", j.State, j.Runners)
	}

	// Actor scopes: the actor's owner grants under them, nobody else.
	act := deployValue(c, alice, badJobActor, "scoped", genesis.CBY(1), nil)
	actorGrant := func(to types.Address) *types.EntitlementGrant {
		return &types.EntitlementGrant{Grantee: to, Scope: codec.MustMarshal(entitlement.ActorScope(act)),
			Action:      codec.MustMarshal(entitlement.Action{Kind: entitlement.ActionActorExecuteHandler, Data: []byte("try_submit")}),
			Constraints: codec.MustMarshal(&revocable)}
	}
	malloryAddr := types.PubkeyToAddress(mallory.PublicKey)
	c.ok(c.tx(alice, &reg, actorGrant(malloryAddr), 0))
	if rs := c.block(c.tx(mallory, &reg, actorGrant(r0.addr), 0)); rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "owner") {
		t.Fatalf("grant under a foreign actor: %+v", rs[0])
	}
	c.st.View(func(v *store.View) error {
		ok, err := entitlements.ReadOnly(v).Check(malloryAddr, entitlement.ActorScope(act),
			entitlement.Action{Kind: entitlement.ActionActorExecuteHandler, Data: []byte("try_submit")}, v.Head().Height+1)
		if err != nil || !ok {
			t.Fatalf("actor-scoped check: %v %v", ok, err)
		}
		return nil
	})

	// Lazy expiry: a grant valid until h+1 admits at h+1 and not after.
	h := c.head().Height + 1
	until := h + 2
	c.ok(c.tx(alice, &reg, poolGrant(r1.addr, "cpu", entitlement.Constraints{Revocable: true, ValidUntil: &until}), 0))
	if j := readJob(t, c, submitPoolJob(t, c, alice, "cpu")); j.State != job.StateAssigned || j.Runners[0] != r1.addr {
		t.Fatalf("job within validity: %s %v (height %d, until %d)", j.State, j.Runners, c.head().Height, until)
	}
	for c.head().Height <= until {
		c.ok()
	}
	if j := readJob(t, c, submitPoolJob(t, c, alice, "cpu")); j.State != job.StateFailed {
		t.Fatalf("job after expiry: %s %v", j.State, j.Runners)
	}
	auditSupply(t, c)
}

func TestEntitlementRoles(t *testing.T) {
	alice, _ := genKey()
	bob, _ := genKey()
	mallory, _ := genKey()
	c, _ := newJobChain(t, 0, alice, bob, mallory)
	reg := types.EntitlementRegistryAddress
	bobAddr := types.PubkeyToAddress(bob.PublicKey)
	ns := entitlement.NamespaceScope([]byte("ns"))
	act := entitlement.Action{Kind: entitlement.ActionCustom, Data: []byte("deploy")}
	role := func(name string) *types.RoleCreate {
		return &types.RoleCreate{Name: name, Scopes: codec.MustMarshal([]entitlement.Scope{ns}), Actions: codec.MustMarshal([]entitlement.Action{act}),
			Constraints: codec.MustMarshal(&entitlement.Constraints{Revocable: true})}
	}
	rs := c.ok(c.tx(alice, &reg, role("ops"), 0)) // claims namespace "ns" for alice
	var idb []byte
	codec.Unmarshal(rs[0].Return, &idb)
	roleID, _ := types.BytesToHash(idb)
	if roleID != entitlement.RoleID(types.PubkeyToAddress(alice.PublicKey), []byte("ops")) {
		t.Fatalf("role id %s", roleID)
	}
	if rs := c.block(c.tx(mallory, &reg, role("ops2"), 0)); rs[0].Status != types.ReceiptFailed || !strings.Contains(rs[0].Error, "Unauthorized") {
		t.Fatalf("role over a foreign namespace: %+v", rs[0])
	}
	check := func() bool {
		var ok bool
		c.st.View(func(v *store.View) (err error) {
			ok, err = entitlements.ReadOnly(v).Check(bobAddr, ns, act, v.Head().Height+1)
			return err
		})
		return ok
	}
	if check() {
		t.Fatal("allowed before the role was assigned")
	}
	if rs := c.block(c.tx(mallory, &reg, &types.RoleAssign{RoleID: roleID, Assignee: bobAddr}, 0)); rs[0].Status != types.ReceiptFailed {
		t.Fatal("a stranger assigned alice's role")
	}
	c.ok(c.tx(alice, &reg, &types.RoleAssign{RoleID: roleID, Assignee: bobAddr}, 0))
	if !check() {
		t.Fatal("role does not grant its scope × action")
	}
	c.ok(c.tx(alice, &reg, &types.RoleRevoke{RoleID: roleID, Assignee: bobAddr}, 0))
	if check() {
		t.Fatal("allowed after the role was revoked")
	}
}
