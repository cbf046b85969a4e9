package rent

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/params"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TimerPruner cancels an evicted actor's pending timers
// (chain/timers/timerlane.Lane).
type TimerPruner interface {
	PruneOwner(o *state.Overlay, owner types.Address) (int, error)
}

// Module is the rent module plugged into the executor; it is also the
// actor host's storage hook (actors.StorageHook).
type Module struct {
	on     bool
	p      Params
	src    params.Source
	timers TimerPruner
}

var _ actors.StorageHook = (*Module)(nil)

// New returns the module; p nil is rent off (no state is written).
func New(p *Params) *Module {
	m := &Module{}
	if p != nil {
		m.on, m.p = true, *p
	}
	m.p.fill()
	return m
}

// Enabled reports whether rent is on.
func (m *Module) Enabled() bool { return m.on }

// Params returns the filled parameters.
func (m *Module) Params() Params { return m.p }

// UseParams makes the module read T (KeyTargetBytes) from src.
func (m *Module) UseParams(src params.Source) { m.src = src }

// UseTimers sets what prunes an evicted actor's timers.
func (m *Module) UseTimers(t TimerPruner) { m.timers = t }

// Name implements system.Module.
func (m *Module) Name() string { return "rent" }

// Epoch is the rent epoch of height h.
func (m *Module) Epoch(h uint64) uint64 { return h / m.p.EpochBlocks }

func (m *Module) target(r state.Reader) (uint64, error) {
	if m.src == nil {
		return m.p.TargetBytes, nil
	}
	return m.src.Get(r, KeyTargetBytes)
}

// global returns the Global record, initialised on first use.
func (m *Module) global(r state.Reader, height uint64) (*Global, error) {
	g, err := ReadGlobal(r)
	if err != nil {
		return nil, err
	}
	if g == nil {
		g = &Global{Rate: new(big.Int).SetUint64(m.p.RatePico), Epoch: m.Epoch(height)}
	}
	if g.Rate == nil {
		g.Rate = new(big.Int)
	}
	return g, nil
}

// quotaOf is an account's quota (the base quota without a bond).
func (m *Module) quotaOf(acc *Account) uint64 {
	if acc != nil && acc.Quota > m.p.BaseQuota {
		return acc.Quota
	}
	return m.p.BaseQuota
}

// Billed is the bytes an actor with used bytes of storage pays rent on:
// the excess over the free allowance, of the whole quota when a bond
// extended it.
func (m *Module) Billed(acc *Account, used uint64) uint64 {
	size := used
	if acc != nil && acc.Quota > m.p.BaseQuota {
		size = max(size, acc.Quota)
	}
	if size <= m.p.FreeBytes {
		return 0
	}
	return size - m.p.FreeBytes
}

// PerEpoch is the rent actor a owes per epoch at the current rate.
func (m *Module) PerEpoch(r state.Reader, height uint64, a types.Address, acc *Account) (*big.Int, error) {
	g, err := m.global(r, height)
	if err != nil {
		return nil, err
	}
	meta, err := actors.ReadActorMeta(r, a)
	if err != nil {
		return nil, err
	}
	return perEpoch(m.Billed(acc, meta.StorageBytes), g.Rate), nil
}

// Quota implements actors.StorageHook.
func (m *Module) Quota(r state.Reader, a types.Address) (uint64, error) {
	if !m.on {
		return m.p.BaseQuota, nil
	}
	acc, err := ReadAccount(r, a)
	if err != nil {
		return 0, err
	}
	return m.quotaOf(acc), nil
}

// Used implements actors.StorageHook: it keeps S and registers an actor
// once it pays rent.
func (m *Module) Used(x system.Tx, a types.Address, old, new uint64) error {
	if !m.on {
		return nil
	}
	o := x.State()
	g, err := m.global(o, x.Env().Height)
	if err != nil {
		return err
	}
	g.TotalBytes = g.TotalBytes - min(old, g.TotalBytes) + new
	if m.Billed(nil, new) > 0 {
		acc, err := ReadAccount(o, a)
		if err != nil {
			return err
		}
		if acc == nil {
			m.register(o, g, a, x.Env().Height)
		}
	}
	saveGlobal(o, g)
	return nil
}

// Enter implements actors.StorageHook: a dormant actor runs no handler,
// and a touched actor is assessed (lazy assessment).
func (m *Module) Enter(x system.Tx, a types.Address, write bool) error {
	if !m.on {
		return nil
	}
	o := x.State()
	acc, err := ReadAccount(o, a)
	if err != nil || acc == nil {
		return err
	}
	if acc.Status == StatusEvicted {
		return system.Failf(system.CodeActorDormant, "ActorDormant: actor %s was evicted for unpaid rent at height %d; pay its debt and restore it (rent_restore)", a, acc.Archive.Height)
	}
	if !write {
		return nil
	}
	g, err := m.global(o, x.Env().Height)
	if err != nil {
		return err
	}
	evict, err := m.assess(x, g, a, acc)
	if err != nil {
		return err
	}
	saveAccount(o, a, acc)
	if evict {
		return system.Failf(system.CodeActorDormant, "ActorDormant: actor %s is due for eviction for unpaid rent (debt %s)", a, acc.Debt)
	}
	return nil
}

// register adds a to the sweep index with its current epoch settled.
func (m *Module) register(o *state.Overlay, g *Global, a types.Address, height uint64) *Account {
	acc := &Account{Seq: g.Count, Charged: m.Epoch(height)}
	acc.norm()
	o.Set(indexKey(g.Count), a[:])
	g.Count++
	saveAccount(o, a, acc)
	return acc
}

// unregister removes a from the index, moving the last entry into its slot.
func (m *Module) unregister(o *state.Overlay, g *Global, a types.Address, acc *Account) error {
	last := g.Count - 1
	if acc.Seq != last {
		b, _, err := o.Get(indexKey(last))
		if err != nil {
			return err
		}
		other, err := types.BytesToAddress(b)
		if err != nil {
			return fmt.Errorf("rent: index %d: %w", last, err)
		}
		oacc, err := ReadAccount(o, other)
		if err != nil || oacc == nil {
			return fmt.Errorf("rent: index %d names %s without a record: %v", last, other, err)
		}
		oacc.Seq = acc.Seq
		saveAccount(o, other, oacc)
		o.Set(indexKey(acc.Seq), other[:])
	}
	o.Delete(indexKey(last))
	o.Delete(AccountKey(a))
	g.Count--
	return nil
}

// assess settles a's rent up to the current epoch and moves the value:
// prepaid rent (held by the module) and the actor's balance go to the
// Treasury. It reports whether the actor is due for eviction.
func (m *Module) assess(x system.Tx, g *Global, a types.Address, acc *Account) (bool, error) {
	o := x.State()
	now := m.Epoch(x.Env().Height)
	meta, err := actors.ReadActorMeta(o, a)
	if err != nil {
		return false, err
	}
	bal, err := state.ReadAccount(o, a)
	if err != nil {
		return false, err
	}
	s := Assess(acc, now, perEpoch(m.Billed(acc, meta.StorageBytes), g.Rate), bal.Balance, m.p)
	if s.FromPrepaid.Sign() > 0 {
		if err := x.MoveValue(types.RentModuleAddress, types.TreasuryAddress, s.FromPrepaid); err != nil {
			return false, err
		}
	}
	if s.FromBalance.Sign() > 0 {
		if err := x.MoveValue(a, types.TreasuryAddress, s.FromBalance); err != nil {
			return false, err
		}
	}
	if s.Epochs > 0 || s.FromBalance.Sign() > 0 || s.FromPrepaid.Sign() > 0 {
		paid := new(big.Int).Add(s.FromPrepaid, s.FromBalance)
		x.Emit(types.RentModuleAddress, &ChargedEvent{Actor: a, Epoch: now, Epochs: s.Epochs, Paid: paid, Debt: new(big.Int).Set(acc.Debt)})
	}
	st := Standing{Actor: a, Debt: new(big.Int).Set(acc.Debt), Since: acc.OverdueSince, EvictEpoch: EvictEpoch(acc.OverdueSince, m.p)}
	if s.From == StatusActive && s.To != StatusActive {
		ev := OverdueEvent(st)
		x.Emit(types.RentModuleAddress, &ev)
	}
	if s.From != StatusWarning && s.To == StatusWarning {
		ev := ImminentEvent(st)
		x.Emit(types.RentModuleAddress, &ev)
	}
	return s.Evict, nil
}

// EndBlock implements system.Module: at an epoch boundary the rate moves
// by the rate rule; then the sweep visits at most SweepPerBlock registered
// actors from the cursor, assessing each, evicting those due and dropping
// those that no longer pay rent.
func (m *Module) EndBlock(x system.Tx) error {
	if !m.on {
		return nil
	}
	o := x.State()
	h := x.Env().Height
	g, err := m.global(o, h)
	if err != nil {
		return err
	}
	if e := m.Epoch(h); e > g.Epoch {
		t, err := m.target(o)
		if err != nil {
			return err
		}
		// One step per epoch passed; a chain makes one step per epoch, a
		// gap (never more than a few) is capped.
		for i := 0; g.Epoch < e && i < 64; i++ {
			g.Rate = Next(g.Rate, g.TotalBytes, t)
			g.Epoch++
		}
		g.Epoch = e
	}
	for i := uint64(0); i < m.p.SweepPerBlock && g.Count > 0; i++ {
		if g.Cursor >= g.Count {
			g.Cursor = 0
		}
		b, _, err := o.Get(indexKey(g.Cursor))
		if err != nil {
			return err
		}
		a, err := types.BytesToAddress(b)
		if err != nil {
			return fmt.Errorf("rent: index %d: %w", g.Cursor, err)
		}
		acc, err := ReadAccount(o, a)
		if err != nil || acc == nil {
			return fmt.Errorf("rent: index %d names %s without a record: %v", g.Cursor, a, err)
		}
		dropped, err := m.visit(x, g, a, acc)
		if err != nil {
			return err
		}
		if !dropped {
			g.Cursor++
		}
	}
	saveGlobal(o, g)
	return nil
}

// visit is the sweep's step for one actor; it reports whether the actor
// left the index.
func (m *Module) visit(x system.Tx, g *Global, a types.Address, acc *Account) (bool, error) {
	o := x.State()
	if acc.Status == StatusEvicted {
		return false, nil
	}
	evict, err := m.assess(x, g, a, acc)
	if err != nil {
		return false, err
	}
	if evict {
		return false, m.evict(x, g, a, acc)
	}
	meta, err := actors.ReadActorMeta(o, a)
	if err != nil {
		return false, err
	}
	if m.Billed(acc, meta.StorageBytes) == 0 && acc.Debt.Sign() == 0 && acc.Prepaid.Sign() == 0 && acc.Bond.Sign() == 0 {
		return true, m.unregister(o, g, a, acc)
	}
	saveAccount(o, a, acc)
	return false, nil
}
