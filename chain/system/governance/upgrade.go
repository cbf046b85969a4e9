package governance

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Version is one registered implementation of a system actor (spec 002
// §11.4: system actors are native code, so an upgrade switches a version
// pointer between registered implementations). Migrate, if set, runs
// atomically when the version activates; its failure reverts the
// activation.
type Version struct {
	Name    string
	Module  system.Module
	Migrate func(x system.Tx) error
}

// Versioned registers actor's implementations with m (the first is the
// genesis version) and returns the module to plug into the executor in
// their place: each instruction and end-of-block step goes to the version
// the actor's pointer names. Every version must own the same kinds.
func (m *Module) Versioned(actor types.Address, versions ...Version) (system.Module, error) {
	if len(versions) == 0 {
		return nil, fmt.Errorf("governance: no versions of %s", actor)
	}
	kinds := func(mod system.Module) []types.InstructionKind {
		var ks []types.InstructionKind
		for _, k := range mod.Kinds() {
			ks = append(ks, k.Kind)
		}
		slices.Sort(ks)
		return ks
	}
	for _, v := range versions[1:] {
		if !slices.Equal(kinds(v.Module), kinds(versions[0].Module)) {
			return nil, fmt.Errorf("governance: version %s of %s owns other kinds than %s", v.Name, actor, versions[0].Name)
		}
	}
	if m.versions == nil {
		m.versions = map[types.Address][]Version{}
	}
	m.versions[actor] = slices.Clone(versions)
	return &versioned{gov: m, actor: actor}, nil
}

// Upgrade records (state): the active version pointer, a scheduled
// activation and the rollback slot. None exists before the first upgrade.
type (
	// Pending is an executed upgrade waiting for its activation block.
	Pending struct {
		_                struct{} `cbor:",toarray"`
		Version          string
		Activation       uint64
		RollbackDeadline uint64
	}
	// Rollback is the version an upgrade replaced, restorable until Deadline.
	Rollback struct {
		_        struct{} `cbor:",toarray"`
		Version  string
		Deadline uint64
	}
)

func verKey(a types.Address) []byte { return system.Key(types.GovernanceAddress, []byte("ver"), a[:]) }
func pendingPrefix() []byte         { return system.Key(types.GovernanceAddress, []byte("upg")) }
func pendingKey(a types.Address) []byte {
	return system.Key(types.GovernanceAddress, []byte("upg"), a[:])
}
func rollbackKey(a types.Address) []byte {
	return system.Key(types.GovernanceAddress, []byte("rb"), a[:])
}

// ActiveVersion is the name of actor's version in force in r.
func (m *Module) ActiveVersion(r state.Reader, actor types.Address) (string, error) {
	b, ok, err := r.Get(verKey(actor))
	if err != nil {
		return "", err
	}
	if ok {
		var v string
		return v, codec.Unmarshal(b, &v)
	}
	if vs := m.versions[actor]; len(vs) > 0 {
		return vs[0].Name, nil
	}
	return "", nil
}

func (m *Module) version(actor types.Address, name string) (Version, bool) {
	for _, v := range m.versions[actor] {
		if v.Name == name {
			return v, true
		}
	}
	return Version{}, false
}

// checkUpgrade validates an upgrade action at proposal time.
func (m *Module) checkUpgrade(u types.GovUpgrade, h uint64) error {
	if _, ok := m.version(u.Actor, u.Version); !ok {
		return system.Failf(system.CodeUnknownVersion, "UnknownVersion: %s has no registered version %q", u.Actor, u.Version)
	}
	if u.RollbackDeadline < u.Activation || u.Activation <= h {
		return system.Failf(system.CodeInvalidProposal, "InvalidProposal: activation %d must be ahead (now %d) and not after the rollback deadline %d", u.Activation, h, u.RollbackDeadline)
	}
	return nil
}

// schedule records an executed upgrade for its activation block (or
// activates it now if that block has passed).
func (m *Module) schedule(x system.Tx, u types.GovUpgrade) error {
	if err := m.checkUpgrade(u, 0); err != nil {
		return err
	}
	p := &Pending{Version: u.Version, Activation: u.Activation, RollbackDeadline: u.RollbackDeadline}
	if x.Env().Height >= u.Activation {
		return m.activate(x, u.Actor, p)
	}
	x.State().Set(pendingKey(u.Actor), codec.MustMarshal(p))
	return nil
}

// activate switches actor to p's version: the current version goes to
// the rollback slot and the new version's migration runs; a failure is
// returned (the caller reverts).
func (m *Module) activate(x system.Tx, actor types.Address, p *Pending) error {
	cur, err := m.ActiveVersion(x.State(), actor)
	if err != nil {
		return err
	}
	v, ok := m.version(actor, p.Version)
	if !ok {
		return system.Failf(system.CodeUnknownVersion, "UnknownVersion: %s has no registered version %q", actor, p.Version)
	}
	o := x.State()
	o.Set(rollbackKey(actor), codec.MustMarshal(&Rollback{Version: cur, Deadline: p.RollbackDeadline}))
	o.Set(verKey(actor), codec.MustMarshal(p.Version))
	o.Delete(pendingKey(actor))
	if v.Migrate != nil {
		if err := v.Migrate(x); err != nil {
			if system.IsFailure(err) {
				return err
			}
			return system.Failf(system.CodeFailed, "Failed: migration of %s to %s: %v", actor, p.Version, err)
		}
	}
	x.Emit(types.GovernanceAddress, UpgradedEvent{Actor: actor, From: cur, To: p.Version})
	return nil
}

// activateDue activates the pending upgrades whose block has come, each
// atomically: a failed migration reverts its activation (the pending
// record is dropped and an event says why).
func (m *Module) activateDue(x system.Tx) error {
	var due []types.Address
	var recs []*Pending
	err := x.State().Scan(pendingPrefix(), func(k, b []byte) error {
		p := new(Pending)
		if err := codec.Unmarshal(b, p); err != nil {
			return err
		}
		if x.Env().Height >= p.Activation {
			due = append(due, types.Address(k[len(k)-len(types.Address{}):]))
			recs = append(recs, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, a := range due {
		snap := x.State().Snapshot()
		if err := m.activate(x, a, recs[i]); err != nil {
			if !system.IsFailure(err) {
				return err
			}
			x.State().RevertTo(snap)
			x.State().Delete(pendingKey(a))
			x.Emit(types.GovernanceAddress, UpgradedEvent{Actor: a, To: recs[i].Version, Code: uint32(system.CodeOf(err))})
		}
	}
	return nil
}

// rollback restores actor's rollback slot (the Council's Tier 3
// fast-track), before the slot's deadline.
func (m *Module) rollback(x system.Tx, actor types.Address) error {
	rb, err := system.Get[Rollback](x.State(), rollbackKey(actor), "governance: rollback %s", actor)
	if err != nil {
		return err
	}
	if rb == nil || x.Env().Height > rb.Deadline {
		return system.Failf(system.CodeNoRollback, "NoRollback: %s has no rollback slot in force", actor)
	}
	cur, err := m.ActiveVersion(x.State(), actor)
	if err != nil {
		return err
	}
	x.State().Set(verKey(actor), codec.MustMarshal(rb.Version))
	x.State().Delete(rollbackKey(actor))
	x.Emit(types.GovernanceAddress, UpgradedEvent{Actor: actor, From: cur, To: rb.Version})
	return nil
}

// UpgradedEvent records a version switch (an upgrade or a rollback), or
// with Code a failed activation that was reverted.
type UpgradedEvent struct {
	Actor types.Address `cbor:"actor" json:"actor"`
	From  string        `cbor:"from" json:"from"`
	To    string        `cbor:"to" json:"to"`
	Code  uint32        `cbor:"code" json:"code"`
}

// TopicUpgraded is the topic of UpgradedEvent.
const TopicUpgraded = "gov.upgraded"

// Topic implements system.EventData.
func (UpgradedEvent) Topic() string { return TopicUpgraded }

// versioned routes an actor's instructions and end-of-block step to its
// active version.
type versioned struct {
	gov   *Module
	actor types.Address
}

func (v *versioned) active(r state.Reader) (system.Module, error) {
	name, err := v.gov.ActiveVersion(r, v.actor)
	if err != nil {
		return nil, err
	}
	ver, ok := v.gov.version(v.actor, name)
	if !ok {
		return nil, fmt.Errorf("governance: %s points at unregistered version %q", v.actor, name)
	}
	return ver.Module, nil
}

func (v *versioned) Name() string { return v.gov.versions[v.actor][0].Module.Name() }

func (v *versioned) EndBlock(x system.Tx) error {
	mod, err := v.active(x.State())
	if err != nil {
		return err
	}
	return mod.EndBlock(x)
}

func (v *versioned) Kinds() []system.Kind {
	ks := v.gov.versions[v.actor][0].Module.Kinds()
	for i := range ks {
		kind := ks[i].Kind
		ks[i].Handle = func(x system.Tx, from types.Address, in types.Instruction) ([]byte, error) {
			mod, err := v.active(x.State())
			if err != nil {
				return nil, err
			}
			for _, k := range mod.Kinds() {
				if k.Kind == kind {
					return k.Handle(x, from, in)
				}
			}
			return nil, fmt.Errorf("governance: version of %s lost kind %s", v.actor, kind)
		}
	}
	return ks
}

// UpgradeState is one actor's upgrade records: the version its pointer
// names ("" if it never switched: its genesis version), a pending
// upgrade and its rollback slot.
type UpgradeState struct {
	Actor    types.Address
	Version  string
	Pending  *Pending
	Rollback *Rollback
}

// ReadUpgrades lists, in address order, every actor with an upgrade
// record in r (a switched pointer, a pending upgrade or a rollback slot).
func ReadUpgrades(r state.Reader) ([]UpgradeState, error) {
	by := map[types.Address]*UpgradeState{}
	get := func(k []byte) *UpgradeState {
		a := types.Address(k[len(k)-len(types.Address{}):])
		if by[a] == nil {
			by[a] = &UpgradeState{Actor: a}
		}
		return by[a]
	}
	err := r.Scan(system.Key(types.GovernanceAddress, []byte("ver")), func(k, v []byte) error {
		return codec.Unmarshal(v, &get(k).Version)
	})
	if err == nil {
		err = r.Scan(pendingPrefix(), func(k, v []byte) error {
			p := new(Pending)
			get(k).Pending = p
			return codec.Unmarshal(v, p)
		})
	}
	if err == nil {
		err = r.Scan(system.Key(types.GovernanceAddress, []byte("rb")), func(k, v []byte) error {
			rb := new(Rollback)
			get(k).Rollback = rb
			return codec.Unmarshal(v, rb)
		})
	}
	if err != nil {
		return nil, fmt.Errorf("governance: read upgrades: %w", err)
	}
	out := make([]UpgradeState, 0, len(by))
	for _, u := range by {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b UpgradeState) int { return bytes.Compare(a.Actor[:], b.Actor[:]) })
	return out, nil
}
