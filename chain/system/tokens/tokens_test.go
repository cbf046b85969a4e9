package tokens_test

import (
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/entitlements"
	"github.com/cowboy-foundation/cowboy/chain/system/systemtest"
	"github.com/cowboy-foundation/cowboy/chain/system/tokens"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

var (
	admin, alice, bob, minter = types.Address{0xA0}, types.Address{0xA1}, types.Address{0xB0}, types.Address{0xC0}
	tm                        = types.TokenModuleAddress
)

func n(v int64) *big.Int { return big.NewInt(v) }

type tokenChain struct {
	*systemtest.Chain
	t *testing.T
	m *tokens.Module
}

func newTokenChain(t *testing.T) *tokenChain {
	return &tokenChain{Chain: systemtest.New(), t: t, m: tokens.New()}
}

func (c *tokenChain) run(from types.Address, in types.Instruction) *systemtest.Result {
	c.t.Helper()
	return c.MustRun(c.t, c.m, from, tm, nil, in)
}

func (c *tokenChain) create(in *types.TokenCreate) types.Hash {
	c.t.Helper()
	r := c.run(admin, in)
	if r.Err != nil {
		c.t.Fatalf("create: %v", r.Err)
	}
	var id []byte
	if err := codec.Unmarshal(r.Return, &id); err != nil || len(id) != 32 {
		c.t.Fatalf("create returned %x: %v", r.Return, err)
	}
	return types.Hash(id)
}

func (c *tokenChain) balance(id types.Hash, a types.Address) int64 {
	c.t.Helper()
	b, err := tokens.BalanceOf(c.State, id, a)
	if err != nil {
		c.t.Fatal(err)
	}
	return b.Int64()
}

// stateDigest is every write in the overlay, to prove a failed operation
// left none.
func stateDigest(t *testing.T, o *state.Overlay) string {
	t.Helper()
	var out []byte
	if err := o.Scan(nil, func(k, v []byte) error { out = append(append(append(out, k...), '='), v...); return nil }); err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The cost table of spec 002 §17.3, charged exactly by each instruction
// (the module's metering beyond the transaction's intrinsic cost).
func TestCostTable(t *testing.T) {
	c := newTokenChain(t)
	create := &types.TokenCreate{Name: "Cowboy Dollar", Symbol: "CUSD", Decimals: 6, Cap: n(1_000_000), Initial: n(1_000)}
	r := c.run(admin, create)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if want := uint64(256 + len("Cowboy Dollar") + len("CUSD")); r.Cycles != 10_000 || r.Cells != want {
		t.Fatalf("token_create charged %d cycles %d cells, want 10,000 and %d", r.Cycles, r.Cells, want)
	}
	id := tokens.ID(admin, 0)
	if r := c.run(admin, &types.TokenApprove{ID: id, Spender: bob, Amount: n(100)}); r.Err != nil {
		t.Fatal(r.Err)
	}
	cases := []struct {
		name          string
		from          types.Address
		in            types.Instruction
		cycles, cells uint64
	}{
		{"token_transfer", admin, &types.TokenTransfer{ID: id, To: alice, Amount: n(10)}, 1_000, 64},
		{"token_transfer_from", bob, &types.TokenTransferFrom{ID: id, From: admin, To: alice, Amount: n(10)}, 1_500, 96},
		{"token_approve", admin, &types.TokenApprove{ID: id, Spender: bob, Amount: n(5)}, 500, 32},
		{"token_mint", admin, &types.TokenMint{ID: id, To: alice, Amount: n(10)}, 1_000, 64},
		{"token_burn", admin, &types.TokenBurn{ID: id, Amount: n(10)}, 500, 64},
	}
	for _, tc := range cases {
		r := c.run(tc.from, tc.in)
		if r.Err != nil {
			t.Fatalf("%s: %v", tc.name, r.Err)
		}
		if r.Cycles != tc.cycles || r.Cells != tc.cells {
			t.Errorf("%s charged %d cycles %d cells, want %d and %d", tc.name, r.Cycles, r.Cells, tc.cycles, tc.cells)
		}
	}
	if c := tokens.CostOf(tokens.OpBalanceOf); c != (tokens.Cost{Cycles: 100}) {
		t.Errorf("token_balance_of costs %+v, want 100 cycles and no cells", c)
	}
}

// A token's life: create with metadata and an initial supply, transfer,
// approve and transfer_from, mint up to the cap, burn; events and supply
// conservation at every step.
func TestTokenLifecycle(t *testing.T) {
	c := newTokenChain(t)
	id := c.create(&types.TokenCreate{Name: "Gold", Symbol: "GLD", Decimals: 2, Cap: n(1_000), Initial: n(600)})
	tok, err := tokens.Read(c.State, id)
	if err != nil || tok == nil || tok.Name != "Gold" || tok.Symbol != "GLD" || tok.Decimals != 2 || tok.Cap.Int64() != 1_000 || tok.Supply.Int64() != 600 || tok.Admin != admin {
		t.Fatalf("token %+v: %v", tok, err)
	}
	supply := func() {
		t.Helper()
		tok, _ := tokens.Read(c.State, id)
		sum := c.balance(id, admin) + c.balance(id, alice) + c.balance(id, bob)
		if sum != tok.Supply.Int64() {
			t.Fatalf("balances sum to %d, supply %s", sum, tok.Supply)
		}
	}
	r := c.run(admin, &types.TokenTransfer{ID: id, To: alice, Amount: n(100)})
	if r.Err != nil || len(r.Events) != 1 || r.Events[0].Topic != tokens.TopicTokenTransfer || r.Events[0].Emitter != tm {
		t.Fatalf("transfer: %v %+v", r.Err, r.Events)
	}
	var ev tokens.TransferEvent
	if err := codec.Unmarshal(r.Events[0].Data, &ev); err != nil || ev.From != admin || ev.To != alice || ev.Amount.Int64() != 100 {
		t.Fatalf("transfer event %+v: %v", ev, err)
	}
	supply()
	if r := c.run(alice, &types.TokenApprove{ID: id, Spender: bob, Amount: n(60)}); r.Err != nil || r.Events[0].Topic != tokens.TopicTokenApproval {
		t.Fatalf("approve: %v", r.Err)
	}
	if r := c.run(bob, &types.TokenTransferFrom{ID: id, From: alice, To: bob, Amount: n(50)}); r.Err != nil {
		t.Fatalf("transfer_from: %v", r.Err)
	}
	if a, _ := tokens.Allowance(c.State, id, alice, bob); a.Int64() != 10 {
		t.Fatalf("allowance left %s, want 10", a)
	}
	supply()
	if r := c.run(admin, &types.TokenMint{ID: id, To: bob, Amount: n(400)}); r.Err != nil {
		t.Fatalf("mint to the cap: %v", r.Err)
	}
	supply()
	if r := c.run(admin, &types.TokenBurn{ID: id, Amount: n(500)}); r.Err != nil {
		t.Fatalf("burn: %v", r.Err)
	}
	supply()
	if got := [3]int64{c.balance(id, admin), c.balance(id, alice), c.balance(id, bob)}; got != [3]int64{0, 50, 450} {
		t.Fatalf("balances %v", got)
	}
	// A second token gets its own id; List returns both.
	id2 := c.create(&types.TokenCreate{Name: "Silver", Symbol: "SLV"})
	if id2 == id || id2 != tokens.ID(admin, 1) {
		t.Fatalf("second id %s", id2)
	}
	if all, err := tokens.List(c.State); err != nil || len(all) != 2 {
		t.Fatalf("list %d: %v", len(all), err)
	}
}

// Bad input gets its numeric code and leaves no state change.
func TestBadInput(t *testing.T) {
	c := newTokenChain(t)
	id := c.create(&types.TokenCreate{Name: "Gold", Symbol: "GLD", Cap: n(1_000), Initial: n(100)})
	if r := c.run(alice, &types.TokenCreate{Name: "Cap", Symbol: "CAP", Cap: n(10)}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := c.run(admin, &types.TokenApprove{ID: id, Spender: bob, Amount: n(5)}); r.Err != nil {
		t.Fatal(r.Err)
	}
	cases := []struct {
		name string
		from types.Address
		in   types.Instruction
		code system.Code
	}{
		{"transfer beyond balance", admin, &types.TokenTransfer{ID: id, To: alice, Amount: n(101)}, system.CodeTokenBalance},
		{"transfer of nothing", admin, &types.TokenTransfer{ID: id, To: alice, Amount: n(0)}, system.CodeInvalidToken},
		{"negative transfer", admin, &types.TokenTransfer{ID: id, To: alice, Amount: n(-1)}, system.CodeInvalidToken},
		{"unknown token", admin, &types.TokenTransfer{ID: types.Hash{9}, To: alice, Amount: n(1)}, system.CodeNoSuchToken},
		{"transfer_from beyond allowance", bob, &types.TokenTransferFrom{ID: id, From: admin, To: bob, Amount: n(6)}, system.CodeTokenAllowance},
		{"transfer_from without allowance", alice, &types.TokenTransferFrom{ID: id, From: admin, To: alice, Amount: n(1)}, system.CodeTokenAllowance},
		{"mint above the cap", admin, &types.TokenMint{ID: id, To: alice, Amount: n(901)}, system.CodeSupplyCapExceeded},
		{"mint by a non-minter", alice, &types.TokenMint{ID: id, To: alice, Amount: n(1)}, system.CodeNotMinter},
		{"burn by a non-burner", bob, &types.TokenBurn{ID: id, Amount: n(1)}, system.CodeNotBurner},
		{"burn beyond balance", admin, &types.TokenBurn{ID: id, Amount: n(101)}, system.CodeTokenBalance},
		{"empty name", admin, &types.TokenCreate{Symbol: "X"}, system.CodeInvalidToken},
		{"padded symbol", admin, &types.TokenCreate{Name: "X", Symbol: " X"}, system.CodeInvalidToken},
		{"too many decimals", admin, &types.TokenCreate{Name: "X", Symbol: "X", Decimals: 37}, system.CodeInvalidToken},
		{"initial above the cap", admin, &types.TokenCreate{Name: "X", Symbol: "X", Cap: n(5), Initial: n(6)}, system.CodeSupplyCapExceeded},
		{"cap above 2^256-1", admin, &types.TokenCreate{Name: "X", Symbol: "X", Cap: new(big.Int).Lsh(n(1), 256)}, system.CodeInvalidToken},
	}
	for _, tc := range cases {
		before := stateDigest(t, c.State)
		if before == "" {
			t.Fatal("the state digest sees no writes")
		}
		r := c.run(tc.from, tc.in)
		if r.Code() != tc.code {
			t.Errorf("%s: code %s (%v), want %s", tc.name, r.Code(), r.Err, tc.code)
		}
		if len(r.Events) != 0 || stateDigest(t, c.State) != before {
			t.Errorf("%s: state or events changed by a failed operation", tc.name)
		}
	}
	if _, err := c.Run(c.m, admin, types.ModelRegistryAddress, nil, &types.TokenTransfer{ID: id, To: alice, Amount: n(1)}); err == nil {
		t.Fatal("a token instruction sent elsewhere passed the check")
	}
	if _, err := c.Run(c.m, admin, tm, n(1), &types.TokenTransfer{ID: id, To: alice, Amount: n(1)}); err == nil {
		t.Fatal("a token instruction with value passed the check")
	}
}

// Mint and burn authority beyond the admin comes from entitlements on the
// token's scope, which only the admin (or governance) grants.
func TestMintAuthorityFromEntitlements(t *testing.T) {
	c := newTokenChain(t)
	id := c.create(&types.TokenCreate{Name: "Wrapped Ether", Symbol: "wETH", Decimals: 18})
	ents := entitlements.New()
	er := types.EntitlementRegistryAddress
	grant := func(from types.Address, act entitlement.ActionKind) *systemtest.Result {
		return c.MustRun(t, ents, from, er, nil, &types.EntitlementGrant{Grantee: minter,
			Scope: codec.MustMarshal(tokens.Scope(id)), Action: codec.MustMarshal(entitlement.Action{Kind: act}),
			Constraints: codec.MustMarshal(&entitlement.Constraints{Revocable: true})})
	}
	if r := c.run(minter, &types.TokenMint{ID: id, To: minter, Amount: n(7)}); r.Code() != system.CodeNotMinter {
		t.Fatalf("mint before the grant: %v", r.Err)
	}
	if r := grant(alice, entitlement.ActionTokenMint); r.Code() != system.CodeUnauthorized {
		t.Fatalf("a stranger granted mint authority: %v", r.Err)
	}
	if r := grant(admin, entitlement.ActionTokenMint); r.Err != nil {
		t.Fatalf("admin's grant: %v", r.Err)
	}
	if r := c.run(minter, &types.TokenMint{ID: id, To: minter, Amount: n(7)}); r.Err != nil {
		t.Fatalf("entitled mint: %v", r.Err)
	}
	if r := c.run(minter, &types.TokenBurn{ID: id, Amount: n(2)}); r.Code() != system.CodeNotBurner {
		t.Fatalf("burn with only mint authority: %v", r.Err)
	}
	if r := grant(admin, entitlement.ActionTokenBurn); r.Err != nil {
		t.Fatalf("admin's burn grant: %v", r.Err)
	}
	if r := c.run(minter, &types.TokenBurn{ID: id, Amount: n(2)}); r.Err != nil {
		t.Fatalf("entitled burn: %v", r.Err)
	}
	if got := c.balance(id, minter); got != 5 {
		t.Fatalf("minter holds %d, want 5", got)
	}
	// Uncapped tokens are bounded by 2^256-1.
	if r := c.run(admin, &types.TokenMint{ID: id, To: admin, Amount: tokens.MaxAmount}); r.Code() != system.CodeSupplyCapExceeded {
		t.Fatalf("mint past 2^256-1: %v", r.Err)
	}
}
