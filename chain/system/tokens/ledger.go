package tokens

import (
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/entitlements"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The ledger: the CIP-20 operations over a system.Tx, shared by the
// instructions and the actor host ops. They charge nothing (the caller
// charges the cost table) and check everything before they write, so a
// failure leaves no state change; the events go out last.

func setAmount(x system.Tx, k []byte, v *big.Int) {
	if v.Sign() == 0 {
		x.State().Delete(k)
		return
	}
	x.State().Set(k, codec.MustMarshal(v))
}

func saveToken(x system.Tx, t *Token) { x.State().Set(Key(t.ID), codec.MustMarshal(t)) }

func mustToken(x system.Tx, id types.Hash) (*Token, error) {
	t, err := Read(x.State(), id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, system.Failf(system.CodeNoSuchToken, "NoSuchToken: no token %s", id)
	}
	return t, nil
}

// Create creates the token described by in for admin and mints in.Initial
// to it; it returns the new token's id.
func Create(x system.Tx, admin types.Address, in *types.TokenCreate) (types.Hash, error) {
	switch {
	case !validLabel(in.Name, MaxNameBytes):
		return types.Hash{}, system.Failf(system.CodeInvalidToken, "InvalidToken: name is 1..%d bytes of UTF-8 without surrounding spaces", MaxNameBytes)
	case !validLabel(in.Symbol, MaxSymbolBytes):
		return types.Hash{}, system.Failf(system.CodeInvalidToken, "InvalidToken: symbol is 1..%d bytes of UTF-8 without surrounding spaces", MaxSymbolBytes)
	case in.Decimals > MaxDecimals:
		return types.Hash{}, system.Failf(system.CodeInvalidToken, "InvalidToken: decimals is 0..%d, not %d", MaxDecimals, in.Decimals)
	}
	capV := new(big.Int)
	if in.Cap != nil && in.Cap.Sign() != 0 {
		if err := validAmount("cap", in.Cap); err != nil {
			return types.Hash{}, err
		}
		capV.Set(in.Cap)
	}
	initial := new(big.Int)
	if in.Initial != nil && in.Initial.Sign() != 0 {
		if err := validAmount("initial supply", in.Initial); err != nil {
			return types.Hash{}, err
		}
		if capV.Sign() > 0 && in.Initial.Cmp(capV) > 0 {
			return types.Hash{}, system.Failf(system.CodeSupplyCapExceeded, "SupplyCapExceeded: initial supply %s is above the cap %s", in.Initial, capV)
		}
		initial.Set(in.Initial)
	}
	seqB, _, err := x.State().Get(seqKey())
	if err != nil {
		return types.Hash{}, err
	}
	seq := system.FromBE8(seqB)
	id := ID(admin, seq)
	if t, err := Read(x.State(), id); err != nil {
		return types.Hash{}, err
	} else if t != nil { // unreachable: ids are numbered
		return types.Hash{}, system.Failf(system.CodeInvalidToken, "InvalidToken: token %s exists", id)
	}
	x.State().Set(seqKey(), system.BE8(seq+1))
	t := &Token{ID: id, Name: in.Name, Symbol: in.Symbol, Decimals: in.Decimals, Cap: capV, Supply: initial,
		Admin: admin, CreatedAt: x.Env().Height}
	saveToken(x, t)
	setAmount(x, BalanceKey(id, admin), initial)
	// The admin owns the token's entitlement scope: it grants TokenMint
	// and TokenBurn on it (chain/system/entitlements).
	x.State().Set(entitlements.ScopeOwnerKey(Scope(id)), admin[:])
	x.Emit(types.TokenModuleAddress, &TokenCreatedEvent{ID: id, Admin: admin, Name: t.Name, Symbol: t.Symbol, Decimals: t.Decimals, Cap: capV})
	if initial.Sign() > 0 {
		x.Emit(types.TokenModuleAddress, &TransferEvent{ID: id, To: admin, Amount: initial})
	}
	return id, nil
}

// move moves amount of token id from one holder to another.
func move(x system.Tx, id types.Hash, from, to types.Address, amount *big.Int) error {
	bal, err := BalanceOf(x.State(), id, from)
	if err != nil {
		return err
	}
	if bal.Cmp(amount) < 0 {
		return system.Failf(system.CodeTokenBalance, "TokenBalance: %s holds %s of token %s, not %s", from, bal, id, amount)
	}
	if from != to {
		dst, err := BalanceOf(x.State(), id, to)
		if err != nil {
			return err
		}
		setAmount(x, BalanceKey(id, from), bal.Sub(bal, amount))
		setAmount(x, BalanceKey(id, to), dst.Add(dst, amount))
	}
	x.Emit(types.TokenModuleAddress, &TransferEvent{ID: id, From: from, To: to, Amount: new(big.Int).Set(amount)})
	return nil
}

// Transfer moves amount of token id from from to to.
func Transfer(x system.Tx, id types.Hash, from, to types.Address, amount *big.Int) error {
	if err := validAmount("amount", amount); err != nil {
		return err
	}
	if _, err := mustToken(x, id); err != nil {
		return err
	}
	return move(x, id, from, to, amount)
}

// TransferFrom moves amount of token id from owner to to, spending
// spender's allowance.
func TransferFrom(x system.Tx, id types.Hash, spender, owner, to types.Address, amount *big.Int) error {
	if err := validAmount("amount", amount); err != nil {
		return err
	}
	if _, err := mustToken(x, id); err != nil {
		return err
	}
	allow, err := Allowance(x.State(), id, owner, spender)
	if err != nil {
		return err
	}
	if allow.Cmp(amount) < 0 {
		return system.Failf(system.CodeTokenAllowance, "TokenAllowance: %s may spend %s of %s's token %s, not %s", spender, allow, owner, id, amount)
	}
	bal, err := BalanceOf(x.State(), id, owner)
	if err != nil {
		return err
	}
	if bal.Cmp(amount) < 0 { // checked before the allowance is written
		return system.Failf(system.CodeTokenBalance, "TokenBalance: %s holds %s of token %s, not %s", owner, bal, id, amount)
	}
	setAmount(x, AllowanceKey(id, owner, spender), allow.Sub(allow, amount))
	return move(x, id, owner, to, amount)
}

// Approve sets spender's allowance over owner's balance of token id.
func Approve(x system.Tx, id types.Hash, owner, spender types.Address, amount *big.Int) error {
	if amount == nil || amount.Sign() < 0 || amount.Cmp(MaxAmount) > 0 {
		return system.Failf(system.CodeInvalidToken, "InvalidToken: an allowance is 0..2^256-1, not %v", amount)
	}
	if _, err := mustToken(x, id); err != nil {
		return err
	}
	setAmount(x, AllowanceKey(id, owner, spender), new(big.Int).Set(amount))
	x.Emit(types.TokenModuleAddress, &ApprovalEvent{ID: id, Owner: owner, Spender: spender, Amount: new(big.Int).Set(amount)})
	return nil
}

// authorise fails with code unless who holds act on token t: its admin,
// or a holder of a live entitlement covering (Token(t.ID), act).
func authorise(x system.Tx, t *Token, who types.Address, act entitlement.ActionKind, code system.Code) error {
	if who == t.Admin {
		return nil
	}
	ok, err := entitlements.Writable(x.State()).Check(who, Scope(t.ID), entitlement.Action{Kind: act}, x.Env().Height)
	if err != nil || ok {
		return err
	}
	what, ent := "mint", "TokenMint"
	if act == entitlement.ActionTokenBurn {
		what, ent = "burn", "TokenBurn"
	}
	return system.Failf(code, "%s: %s may not %s token %s (admin %s, or a %s entitlement)", code, who, what, t.ID, t.Admin, ent)
}

// Mint mints amount of token id to to; minter must hold mint authority,
// and the supply stays within the cap.
func Mint(x system.Tx, id types.Hash, minter, to types.Address, amount *big.Int) error {
	if err := validAmount("amount", amount); err != nil {
		return err
	}
	t, err := mustToken(x, id)
	if err != nil {
		return err
	}
	if err := authorise(x, t, minter, entitlement.ActionTokenMint, system.CodeNotMinter); err != nil {
		return err
	}
	limit := MaxAmount
	if t.Capped() {
		limit = t.Cap
	}
	supply := new(big.Int).Add(t.Supply, amount)
	if supply.Cmp(limit) > 0 {
		return system.Failf(system.CodeSupplyCapExceeded, "SupplyCapExceeded: minting %s takes token %s's supply %s above its cap %s", amount, id, t.Supply, limit)
	}
	bal, err := BalanceOf(x.State(), id, to)
	if err != nil {
		return err
	}
	t.Supply = supply
	saveToken(x, t)
	setAmount(x, BalanceKey(id, to), bal.Add(bal, amount))
	x.Emit(types.TokenModuleAddress, &TransferEvent{ID: id, To: to, Amount: new(big.Int).Set(amount)})
	return nil
}

// Burn burns amount of holder's balance of token id; holder must hold burn
// authority.
func Burn(x system.Tx, id types.Hash, holder types.Address, amount *big.Int) error {
	if err := validAmount("amount", amount); err != nil {
		return err
	}
	t, err := mustToken(x, id)
	if err != nil {
		return err
	}
	if err := authorise(x, t, holder, entitlement.ActionTokenBurn, system.CodeNotBurner); err != nil {
		return err
	}
	bal, err := BalanceOf(x.State(), id, holder)
	if err != nil {
		return err
	}
	if bal.Cmp(amount) < 0 {
		return system.Failf(system.CodeTokenBalance, "TokenBalance: %s holds %s of token %s, not %s", holder, bal, id, amount)
	}
	t.Supply = new(big.Int).Sub(t.Supply, amount)
	saveToken(x, t)
	setAmount(x, BalanceKey(id, holder), bal.Sub(bal, amount))
	x.Emit(types.TokenModuleAddress, &TransferEvent{ID: id, From: holder, Amount: new(big.Int).Set(amount)})
	return nil
}
