package entitlement

import (
	"bytes"
	"errors"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func addr(b byte) types.Address {
	var a types.Address
	a[0], a[19] = b, b
	return a
}

func u64(v uint64) *uint64 { return &v }

var (
	owner  = addr(0xA0)
	gov    = types.GovernanceAddress
	runner = addr(1)
	pool   = []byte("eu-tee")
)

func poolGrant(t *testing.T, r *Registry, who types.Address, c Constraints, at uint64) types.Hash {
	t.Helper()
	id, err := r.Grant(owner, who, RunnerPoolScope(pool), RunnerJoinPoolAction(pool), c, at)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestIDPreimage(t *testing.T) {
	s, a := RunnerPoolScope(pool), RunnerJoinPoolAction(pool)
	sb, _ := codec.Marshal(s)
	ab, _ := codec.Marshal(a)
	if !bytes.Equal(sb, append([]byte{0x82, 0x04, 0x46}, pool...)) || !bytes.Equal(ab, append([]byte{0x82, 0x0d, 0x46}, pool...)) {
		t.Fatalf("encodings %x %x", sb, ab)
	}
	id, _ := EntitlementID(runner, s, a, nil)
	if id != types.Keccak256(runner[:], sb, ab) {
		t.Fatal("root id preimage")
	}
	parent := types.Hash{9}
	id2, _ := EntitlementID(runner, s, a, &parent)
	if id2 != types.Keccak256(runner[:], sb, ab, parent[:]) {
		t.Fatal("delegated id preimage")
	}
	if RoleID(owner, []byte("ops")) != types.Keccak256([]byte("cowboy-role-v1:"), owner[:], []byte("ops")) {
		t.Fatal("role id preimage")
	}
}

func TestPoolMembershipAndLazyExpiry(t *testing.T) {
	kv := NewMemKV()
	r := NewRegistry(kv, gov)
	poolGrant(t, r, runner, Constraints{ValidFrom: u64(10), ValidUntil: u64(100), Revocable: true}, 5)
	for _, tc := range []struct {
		at   uint64
		want bool
	}{{9, false}, {10, true}, {100, true}} {
		if ok, err := r.InPool(runner, pool, tc.at); err != nil || ok != tc.want {
			t.Fatalf("at %d: %v %v", tc.at, ok, err)
		}
	}
	if ok, _ := r.InPool(runner, []byte("other"), 50); ok {
		t.Fatal("other pool admitted")
	}
	if ok, _ := r.InPool(addr(2), pool, 50); ok {
		t.Fatal("other runner admitted")
	}
	// record, id index and (scope, action) index
	if kv.Len() != 3 {
		t.Fatalf("kv has %d keys", kv.Len())
	}
	if ok, _ := r.InPool(runner, pool, 101); ok {
		t.Fatal("expired entitlement admitted")
	}
	if kv.Len() != 0 {
		t.Fatalf("expired record not deleted lazily: %d keys", kv.Len())
	}
	// Wildcards admit through Check but never through InPool.
	if _, err := r.Grant(owner, runner, GlobalScope(), Action{Kind: ActionAll}, Constraints{}, 200); err != nil {
		t.Fatal(err)
	}
	if ok, _ := r.Check(runner, RunnerPoolScope(pool), RunnerJoinPoolAction(pool), 200); !ok {
		t.Fatal("Global/All must cover in Check")
	}
	if ok, _ := r.InPool(runner, pool, 200); ok {
		t.Fatal("Global/All must not admit to a pool")
	}
}

func TestGrantRules(t *testing.T) {
	r := NewRegistry(NewMemKV(), gov)
	bad := []Constraints{
		{UsedCount: 1},
		{ValidFrom: u64(5), ValidUntil: u64(4)},
		{Delegatable: true, DelegationDepthMax: 6},
		{Delegatable: true},
		{DelegationDepthMax: 1},
		{RateLimit: &RateLimit{MaxUses: 1}},
	}
	for i, c := range bad {
		if _, err := r.Grant(owner, runner, GlobalScope(), Action{Kind: ActionSystemTransfer}, c, 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("constraints %d: want ErrInvalid, got %v", i, err)
		}
	}
	if _, err := r.Grant(owner, runner, Scope{Kind: ScopeToken, ID: []byte{1}}, Action{}, Constraints{}, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad scope: %v", err)
	}
	if _, err := r.Grant(owner, runner, GlobalScope(), Action{Kind: ActionCustom}, Constraints{}, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("custom action without data: %v", err)
	}
	id := poolGrant(t, r, runner, Constraints{ValidUntil: u64(10)}, 1)
	if _, err := r.Grant(owner, runner, RunnerPoolScope(pool), RunnerJoinPoolAction(pool), Constraints{}, 5); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate grant: %v", err)
	}
	// After expiry the same id can be granted again.
	if id2 := poolGrant(t, r, runner, Constraints{}, 11); id2 != id {
		t.Fatal("id changed")
	}
}

func TestLimits(t *testing.T) {
	r := NewRegistry(NewMemKV(), gov)
	for i := 0; i < MaxEntitlementsPerAddress; i++ {
		ns := []byte{byte(i), byte(i >> 8)}
		if _, err := r.Grant(owner, runner, NamespaceScope(ns), Action{Kind: ActionActorDeploy}, Constraints{ValidUntil: u64(uint64(100 + i))}, 1); err != nil {
			t.Fatal(i, err)
		}
	}
	if _, err := r.Grant(owner, runner, GlobalScope(), Action{Kind: ActionActorDeploy}, Constraints{}, 1); !errors.Is(err, ErrLimit) {
		t.Fatalf("257th entitlement: %v", err)
	}
	// Once one expires the slot frees up (expired records do not count).
	if _, err := r.Grant(owner, runner, GlobalScope(), Action{Kind: ActionActorDeploy}, Constraints{}, 101); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	for i := 0; i < MaxRolesPerAddress+1; i++ {
		id, err := r.CreateRole(owner, Role{Name: []byte{'r', byte(i)}, Scopes: []Scope{GlobalScope()}, Actions: []Action{{Kind: ActionTokenMint}}})
		if err != nil {
			t.Fatal(err)
		}
		err = r.AssignRole(owner, id, runner)
		if i < MaxRolesPerAddress && err != nil {
			t.Fatal(i, err)
		}
		if i == MaxRolesPerAddress && !errors.Is(err, ErrLimit) {
			t.Fatalf("65th role: %v", err)
		}
	}
}

func TestDelegationChain(t *testing.T) {
	r := NewRegistry(NewMemKV(), gov)
	root, err := r.Grant(owner, addr(10), ActorScope(addr(0x77)), Action{Kind: ActionActorSendMessage},
		Constraints{ValidUntil: u64(1000), MaxUses: 100, Delegatable: true, DelegationDepthMax: 5, Revocable: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ids := []types.Hash{root}
	for d := 1; d <= 5; d++ {
		depth := uint8(5 - d)
		c := Constraints{ValidUntil: u64(1000 - uint64(d)), MaxUses: uint64(100 - d), Delegatable: depth > 0, DelegationDepthMax: depth, Revocable: true}
		id, err := r.Delegate(addr(byte(9+d)), ids[d-1], addr(byte(10+d)), c, 2)
		if err != nil {
			t.Fatalf("depth %d: %v", d, err)
		}
		ids = append(ids, id)
	}
	if _, err := r.Delegate(addr(15), ids[5], addr(16), Constraints{Revocable: true}, 2); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("6th delegation: %v", err)
	}
	leaf := addr(15)
	if ok, _ := r.Check(leaf, ActorScope(addr(0x77)), Action{Kind: ActionActorSendMessage}, 3); !ok {
		t.Fatal("leaf cannot use its delegated entitlement")
	}
	// Using the leaf charges every ancestor.
	if err := r.Use(leaf, ids[5], 0, 3); err != nil {
		t.Fatal(err)
	}
	rootRec, _ := r.Get(root)
	if rootRec.Entitlement.Constraints.UsedCount != 1 {
		t.Fatalf("root used_count %d", rootRec.Entitlement.Constraints.UsedCount)
	}
	// Revoking a middle link disables everything below it.
	if err := r.Revoke(addr(11), ids[2]); err != nil {
		t.Fatal(err)
	}
	if ok, _ := r.Check(leaf, ActorScope(addr(0x77)), Action{Kind: ActionActorSendMessage}, 3); ok {
		t.Fatal("descendant of a revoked entitlement still works")
	}
	if _, err := r.Get(ids[5]); !errors.Is(err, ErrNotFound) {
		t.Fatal("orphan not deleted lazily")
	}
	if ok, _ := r.Check(addr(11), ActorScope(addr(0x77)), Action{Kind: ActionActorSendMessage}, 3); !ok {
		t.Fatal("ancestor affected by revoking its child")
	}
}

func TestNarrower(t *testing.T) {
	parent := Constraints{ValidFrom: u64(10), ValidUntil: u64(100), MaxUses: 10, UsedCount: 4, MaxAmountPerUse: u64(50), MaxTotalAmount: u64(500), TotalAmountUsed: 100,
		RateLimit: &RateLimit{MaxUses: 5, WindowBlocks: 10}, Delegatable: true, DelegationDepthMax: 3, Revocable: true}
	ok := func() Constraints {
		return Constraints{ValidFrom: u64(10), ValidUntil: u64(100), MaxUses: 6, MaxAmountPerUse: u64(50), MaxTotalAmount: u64(400),
			RateLimit: &RateLimit{MaxUses: 5, WindowBlocks: 10}, Delegatable: true, DelegationDepthMax: 2, Revocable: true}
	}
	tests := []struct {
		name string
		mut  func(*Constraints)
		ok   bool
	}{
		{"equal but shallower", func(*Constraints) {}, true},
		{"same depth", func(c *Constraints) { c.DelegationDepthMax = 3 }, false},
		{"earlier start", func(c *Constraints) { c.ValidFrom = u64(9) }, false},
		{"unbounded start", func(c *Constraints) { c.ValidFrom = nil }, false},
		{"later end", func(c *Constraints) { c.ValidUntil = u64(101) }, false},
		{"unbounded end", func(c *Constraints) { c.ValidUntil = nil }, false},
		{"more uses than remain", func(c *Constraints) { c.MaxUses = 7 }, false},
		{"unlimited uses", func(c *Constraints) { c.MaxUses = 0 }, false},
		{"bigger per-use amount", func(c *Constraints) { c.MaxAmountPerUse = u64(51) }, false},
		{"more total than remains", func(c *Constraints) { c.MaxTotalAmount = u64(401) }, false},
		{"no rate limit", func(c *Constraints) { c.RateLimit = nil }, false},
		{"faster rate", func(c *Constraints) { c.RateLimit.WindowBlocks = 9 }, false},
		{"slower rate", func(c *Constraints) { c.RateLimit.WindowBlocks = 20; c.RateLimit.MaxUses = 1 }, true},
		{"irrevocable", func(c *Constraints) { c.Revocable = false }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok()
			tc.mut(&c)
			err := Narrower(&c, &parent)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrNotNarrower)) {
				t.Fatalf("Narrower = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestUseLimits(t *testing.T) {
	r := NewRegistry(NewMemKV(), gov)
	id, err := r.Grant(owner, runner, TokenScope([32]byte{1}), Action{Kind: ActionTokenTransfer},
		Constraints{MaxUses: 3, MaxAmountPerUse: u64(10), MaxTotalAmount: u64(15), RateLimit: &RateLimit{MaxUses: 2, WindowBlocks: 10}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Use(runner, id, 11, 1); !errors.Is(err, ErrDenied) {
		t.Fatalf("per-use amount: %v", err)
	}
	if err := r.Use(addr(2), id, 1, 1); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("foreign use: %v", err)
	}
	must := func(amount, at uint64) {
		t.Helper()
		if err := r.Use(runner, id, amount, at); err != nil {
			t.Fatal(err)
		}
	}
	must(5, 1)
	must(5, 2)
	if err := r.Use(runner, id, 1, 3); !errors.Is(err, ErrDenied) {
		t.Fatalf("rate limit: %v", err)
	}
	if err := r.Use(runner, id, 6, 10); !errors.Is(err, ErrDenied) {
		t.Fatalf("total amount: %v", err)
	}
	must(5, 10) // new window; total now 15, uses 3
	if ok, _ := r.Check(runner, TokenScope([32]byte{1}), Action{Kind: ActionTokenTransfer}, 11); ok {
		t.Fatal("exhausted entitlement still checks true")
	}
}

func TestRevokeAndRoles(t *testing.T) {
	r := NewRegistry(NewMemKV(), gov)
	fixed := poolGrant(t, r, runner, Constraints{}, 1)
	if err := r.Revoke(owner, fixed); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("irrevocable revoked: %v", err)
	}
	rev := poolGrant(t, r, addr(2), Constraints{Revocable: true}, 1)
	if err := r.Revoke(addr(3), rev); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("stranger revoked: %v", err)
	}
	if err := r.Revoke(gov, rev); err != nil {
		t.Fatalf("governance revoke: %v", err)
	}
	if err := r.Revoke(gov, rev); !errors.Is(err, ErrNotFound) {
		t.Fatalf("double revoke: %v", err)
	}

	role := Role{Name: []byte("minter"), Scopes: []Scope{TokenScope([32]byte{7})}, Actions: []Action{{Kind: ActionTokenMint}, {Kind: ActionTokenBurn}},
		Constraints: Constraints{ValidFrom: u64(5), ValidUntil: u64(50)}}
	rid, err := r.CreateRole(owner, role)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateRole(owner, role); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate role: %v", err)
	}
	if err := r.AssignRole(addr(3), rid, runner); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("stranger assigned: %v", err)
	}
	if err := r.AssignRole(owner, rid, runner); err != nil {
		t.Fatal(err)
	}
	burn := Action{Kind: ActionTokenBurn}
	for _, tc := range []struct {
		at   uint64
		want bool
	}{{4, false}, {5, true}, {50, true}, {51, false}} {
		if ok, _ := r.Check(runner, TokenScope([32]byte{7}), burn, tc.at); ok != tc.want {
			t.Fatalf("role check at %d = %v", tc.at, ok)
		}
	}
	if ok, _ := r.Check(runner, TokenScope([32]byte{8}), burn, 10); ok {
		t.Fatal("role covers another token")
	}
	if err := r.RevokeRole(owner, rid, runner); err != nil {
		t.Fatal(err)
	}
	if ok, _ := r.Check(runner, TokenScope([32]byte{7}), burn, 10); ok {
		t.Fatal("revoked role still grants")
	}
}

func TestGasTable(t *testing.T) {
	got := [][2]int{{GrantCycles, GrantCells}, {RevokeCycles, RevokeCells}, {DelegateCycles, DelegateCells},
		{CreateRoleCycles, CreateRoleCells}, {AssignRoleCycles, AssignRoleCells}, {CheckCycles, CheckCells}}
	want := [][2]int{{5000, 500}, {2000, 100}, {3000, 300}, {5000, 500}, {2000, 100}, {500, 0}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d: %v want %v", i, got[i], want[i])
		}
	}
}

func FuzzDecoders(f *testing.F) {
	seeds := []any{
		GlobalScope(), ActorScope(addr(1)), TokenScope([32]byte{2}), RunnerScope(addr(3)), RunnerPoolScope(pool), NamespaceScope([]byte("ns")),
		Action{Kind: ActionAll}, RunnerJoinPoolAction(pool), Action{Kind: ActionRunnerRegister},
		Action{Kind: ActionRunnerRegister, MinStakeOverride: new(big.Int).Lsh(big.NewInt(1), 100)},
		Constraints{ValidFrom: u64(1), RateLimit: &RateLimit{MaxUses: 1, WindowBlocks: 2}, Delegatable: true, DelegationDepthMax: 2},
		Record{Entitlement: Entitlement{Grantee: addr(1), Scope: GlobalScope(), Action: Action{Kind: ActionCustom, Data: []byte("x")}, ParentID: &types.Hash{1}}, Depth: 1},
		RoleRecord{Role: Role{Name: []byte("r"), Scopes: []Scope{GlobalScope()}, Actions: []Action{{Kind: ActionAll}}}},
	}
	for _, s := range seeds {
		b, err := codec.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(v any, err error) {
			if err != nil {
				return
			}
			again, err := codec.Marshal(v)
			if err != nil || !bytes.Equal(again, data) {
				t.Fatalf("%T round trip %x -> %x (%v)", v, data, again, err)
			}
		}
		s, err := DecodeScope(data)
		check(s, err)
		a, err := DecodeAction(data)
		check(a, err)
		c, err := DecodeConstraints(data)
		check(c, err)
		rec, err := DecodeRecord(data)
		check(&rec, err)
		rr, err := DecodeRoleRecord(data)
		check(&rr, err)
		ss, err := DecodeScopes(data)
		check(ss, err)
		as, err := DecodeActions(data)
		check(as, err)
	})
}
