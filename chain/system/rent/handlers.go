package rent

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Cycles charged by the instructions beyond the intrinsic cost.
const (
	PayCycles     = 5_000
	BondCycles    = 5_000
	RestoreCycles = 10_000
)

// Kinds implements system.Module: rent_pay, rent_sponsor, storage_bond and
// rent_restore.
func (m *Module) Kinds() []system.Kind {
	return []system.Kind{
		{Kind: types.KindRentPay, Check: Check, Handle: m.enabled(func(x system.Tx, from types.Address, in types.Instruction) error {
			return m.pay(x, from, in.(*types.RentPay).Actor, x.Transaction().Value(), false)
		})},
		{Kind: types.KindRentSponsor, Check: Check, Handle: m.enabled(func(x system.Tx, from types.Address, in types.Instruction) error {
			return m.sponsor(x, from, in.(*types.RentSponsor))
		})},
		{Kind: types.KindStorageBond, Check: Check, Handle: m.enabled(func(x system.Tx, from types.Address, in types.Instruction) error {
			return m.bond(x, from, in.(*types.StorageBond))
		})},
		{Kind: types.KindRentRestore, Check: Check, Handle: m.enabled(func(x system.Tx, from types.Address, in types.Instruction) error {
			return m.restore(x, in.(*types.RentRestore))
		})},
	}
}

func (m *Module) enabled(run func(x system.Tx, from types.Address, in types.Instruction) error) system.Handler {
	return func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
		if !m.on {
			return nil, system.Failf(system.CodeRentOff, "RentOff: this chain runs without state rent")
		}
		if err := run(x, from, in); err != nil {
			return nil, err
		}
		return nil, nil
	}
}

// Check is the stateless check of the rent instructions: each goes to the
// module; only rent_pay carries value.
func Check(tx *types.Tx, in types.Instruction) error {
	if to, ok := tx.To(); !ok || to != types.RentModuleAddress {
		return fmt.Errorf("%w: %s transactions go to %s", types.ErrMalformedTx, in.InstructionKind(), types.RentModuleAddress)
	}
	if in.InstructionKind() != types.KindRentPay && tx.Value().Sign() != 0 {
		return fmt.Errorf("%w: %s carries no value", types.ErrMalformedTx, in.InstructionKind())
	}
	return nil
}

// mustActor fails unless a holds actor code.
func mustActor(r state.Reader, a types.Address) error {
	acc, err := state.ReadAccount(r, a)
	if err != nil {
		return err
	}
	if acc.CodeHash == nil {
		return system.Failf(system.CodeRentNoActor, "RentNoActor: no actor at %s", a)
	}
	return nil
}

// accountOf returns a's rent record, registering a if it has none.
func (m *Module) accountOf(x system.Tx, g *Global, a types.Address) (*Account, error) {
	acc, err := ReadAccount(x.State(), a)
	if err != nil || acc != nil {
		return acc, err
	}
	return m.register(x.State(), g, a, x.Env().Height), nil
}

// pay credits v, already sent by payer, to a's rent: its debt first (to the
// Treasury), the rest prepaid (held by the module). sponsored says v was
// computed by rent_sponsor rather than sent as the transaction's value.
func (m *Module) pay(x system.Tx, payer, a types.Address, v *big.Int, sponsored bool) error {
	if err := x.Charge(PayCycles, 0); err != nil {
		return err
	}
	if !sponsored && v.Sign() == 0 {
		return system.Failf(system.CodeRentNoValue, "RentNoValue: rent_pay carries the amount as the transaction's value")
	}
	if err := mustActor(x.State(), a); err != nil {
		return err
	}
	o := x.State()
	g, err := m.global(o, x.Env().Height)
	if err != nil {
		return err
	}
	acc, err := m.accountOf(x, g, a)
	if err != nil {
		return err
	}
	if err := x.MoveValue(payer, types.RentModuleAddress, v); err != nil {
		return err
	}
	debt := minBig(acc.Debt, v)
	if debt.Sign() > 0 {
		if err := x.MoveValue(types.RentModuleAddress, types.TreasuryAddress, debt); err != nil {
			return err
		}
		acc.Debt.Sub(acc.Debt, debt)
	}
	acc.Prepaid.Add(acc.Prepaid, new(big.Int).Sub(v, debt))
	if acc.Debt.Sign() == 0 && acc.Status != StatusEvicted {
		acc.Status, acc.OverdueSince = StatusActive, 0
	}
	saveAccount(o, a, acc)
	saveGlobal(o, g)
	x.Emit(types.RentModuleAddress, &PaidEvent{Actor: a, Payer: payer, Amount: new(big.Int).Set(v), Debt: new(big.Int).Set(acc.Debt), Prepaid: new(big.Int).Set(acc.Prepaid)})
	return nil
}

// sponsor prepays in.Epochs epochs of the actor's current rent from the
// sender's balance.
func (m *Module) sponsor(x system.Tx, from types.Address, in *types.RentSponsor) error {
	if in.Epochs == 0 {
		return system.Failf(system.CodeRentNoValue, "RentNoValue: sponsor at least one epoch")
	}
	if err := mustActor(x.State(), in.Actor); err != nil {
		return err
	}
	acc, err := ReadAccount(x.State(), in.Actor)
	if err != nil {
		return err
	}
	per, err := m.PerEpoch(x.State(), x.Env().Height, in.Actor, acc)
	if err != nil {
		return err
	}
	cost := per.Mul(per, new(big.Int).SetUint64(in.Epochs))
	if acc != nil {
		cost.Add(cost, acc.Debt)
	}
	if cost.Sign() == 0 {
		return system.Failf(system.CodeRentNoRentDue, "RentNoRentDue: actor %s pays no rent (storage within the free %d bytes)", in.Actor, m.p.FreeBytes)
	}
	bal, err := state.ReadAccount(x.State(), from)
	if err != nil {
		return err
	}
	if bal.Balance.Cmp(cost) < 0 {
		return system.Failf(system.CodeSponsorBalance, "SponsorBalance: %d epochs of %s's rent cost %s; %s holds %s", in.Epochs, in.Actor, cost, from, bal.Balance)
	}
	return m.pay(x, from, in.Actor, cost, true)
}

// bond sets the actor's quota and locks or returns the bond difference.
func (m *Module) bond(x system.Tx, from types.Address, in *types.StorageBond) error {
	if err := x.Charge(BondCycles, 0); err != nil {
		return err
	}
	o := x.State()
	if err := mustActor(o, in.Actor); err != nil {
		return err
	}
	owner, err := actors.ReadActorOwner(o, in.Actor)
	if err != nil {
		return err
	}
	if owner == nil || *owner != from {
		return system.Failf(system.CodeNotActorOwner, "NotActorOwner: only the owner of %s may bond its storage", in.Actor)
	}
	acc, err := ReadAccount(o, in.Actor)
	if err != nil {
		return err
	}
	if acc != nil && acc.Status == StatusEvicted {
		return system.Failf(system.CodeActorDormant, "ActorDormant: actor %s is evicted", in.Actor)
	}
	meta, err := actors.ReadActorMeta(o, in.Actor)
	if err != nil {
		return err
	}
	if in.Quota < m.p.BaseQuota || in.Quota > m.p.MaxQuota || in.Quota < meta.StorageBytes {
		return system.Failf(system.CodeBadQuota, "BadQuota: quota is %d..%d bytes and at least the %d in use, not %d", m.p.BaseQuota, m.p.MaxQuota, meta.StorageBytes, in.Quota)
	}
	want := new(big.Int).SetUint64(in.Quota - m.p.BaseQuota)
	want.Mul(want, new(big.Int).SetUint64(m.p.BondPerByte))
	have := new(big.Int)
	if acc != nil {
		have.Set(acc.Bond)
	}
	switch diff := new(big.Int).Sub(want, have); diff.Sign() {
	case 1:
		bal, err := state.ReadAccount(o, from)
		if err != nil {
			return err
		}
		if bal.Balance.Cmp(diff) < 0 {
			return system.Failf(system.CodeRentBondBalance, "RentBondBalance: a %d-byte quota needs %s more bond; %s holds %s", in.Quota, diff, from, bal.Balance)
		}
		if err := x.MoveValue(from, types.RentModuleAddress, diff); err != nil {
			return err
		}
	case -1:
		if err := x.MoveValue(types.RentModuleAddress, from, diff.Neg(diff)); err != nil {
			return err
		}
	}
	g, err := m.global(o, x.Env().Height)
	if err != nil {
		return err
	}
	if acc == nil {
		acc = m.register(o, g, in.Actor, x.Env().Height)
	}
	acc.Bond, acc.Quota = want, in.Quota
	if in.Quota == m.p.BaseQuota {
		acc.Quota = 0
	}
	saveAccount(o, in.Actor, acc)
	saveGlobal(o, g)
	x.Emit(types.RentModuleAddress, &BondedEvent{Actor: in.Actor, Quota: in.Quota, Bond: new(big.Int).Set(want)})
	return nil
}

// restore writes one verified chunk of an evicted actor's archive; the
// last makes it active again.
func (m *Module) restore(x system.Tx, in *types.RentRestore) error {
	if err := x.Charge(RestoreCycles, 0); err != nil {
		return err
	}
	o := x.State()
	if err := mustActor(o, in.Actor); err != nil {
		return err
	}
	acc, err := ReadAccount(o, in.Actor)
	if err != nil {
		return err
	}
	if acc == nil || acc.Status != StatusEvicted || acc.Archive == nil {
		return system.Failf(system.CodeNotDormant, "NotDormant: actor %s is not evicted", in.Actor)
	}
	if acc.Debt.Sign() > 0 {
		return system.Failf(system.CodeRentDebt, "RentDebt: pay %s of rent debt first (rent_pay)", acc.Debt)
	}
	arch := acc.Archive
	n := uint64(len(arch.Chunks))
	switch {
	case in.Index != arch.Next:
		return system.Failf(system.CodeRestoreOrder, "RestoreOrder: the restore of %s expects chunk %d, not %d", in.Actor, arch.Next, in.Index)
	case n == 0 && len(in.Entries) != 0:
		return system.Failf(system.CodeRestoreMismatch, "RestoreMismatch: the archive of %s is empty", in.Actor)
	case n > 0 && (len(in.Entries) == 0 || !sorted(in.Entries)):
		return system.Failf(system.CodeRestoreOrder, "RestoreOrder: a chunk holds entries in strictly increasing key order")
	case n > 0 && ChunkHash(in.Entries) != arch.Chunks[in.Index]:
		return system.Failf(system.CodeRestoreMismatch, "RestoreMismatch: chunk %d does not match the archive root %s kept at eviction", in.Index, arch.Root)
	}
	var size uint64
	for _, e := range in.Entries {
		size += uint64(len(e.Key) + len(e.Value))
	}
	if err := x.Charge(0, size); err != nil {
		return err
	}
	for _, e := range in.Entries {
		o.Set(state.StorageKey(in.Actor, e.Key), append([]byte(nil), e.Value...))
	}
	meta, err := actors.ReadActorMeta(o, in.Actor)
	if err != nil {
		return err
	}
	if err := actors.SetStorageBytes(o, in.Actor, meta.StorageBytes+size); err != nil {
		return err
	}
	g, err := m.global(o, x.Env().Height)
	if err != nil {
		return err
	}
	g.TotalBytes += size
	arch.Next++
	if arch.Next >= n {
		root := arch.Root
		acc.Status, acc.Archive, acc.OverdueSince = StatusActive, nil, 0
		acc.Charged = m.Epoch(x.Env().Height)
		x.Emit(types.RentModuleAddress, &RestoredEvent{Actor: in.Actor, Root: root, Bytes: arch.Bytes})
	}
	saveAccount(o, in.Actor, acc)
	saveGlobal(o, g)
	return nil
}
