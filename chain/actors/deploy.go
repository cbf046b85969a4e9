package actors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"sort"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
)

func (x *Exec) code(h types.Hash) ([]byte, error) {
	b, ok, err := x.o.Get(state.CodeKey(h))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("code blob %s missing from state", h)
	}
	return b, nil
}

// resolveLibraries maps each candidate import to the deployer's published
// library, following the libraries' own imports (same publisher only).
func (x *Exec) resolveLibraries(deployer types.Address, imports []string) (map[string]types.Hash, error) {
	pins := map[string]types.Hash{}
	pending := append([]string(nil), imports...)
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		if _, done := pins[name]; done {
			continue
		}
		raw, ok, err := x.o.Get(LibraryKey(deployer, name))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, UnresolvedImport(name, deployer)
		}
		var lib Library
		if err := codec.Unmarshal(raw, &lib); err != nil {
			return nil, fmt.Errorf("decode library %s: %w", name, err)
		}
		pins[name] = lib.CodeHash
		if len(pins) > x.rt.limits.MaxLibsPerActor {
			return nil, failf(system.CodeTooManyLibraries, "TooManyLibraries: more than MAX_LIBS_PER_ACTOR = %d libraries (direct and transitive)", x.rt.limits.MaxLibsPerActor)
		}
		src, err := x.code(lib.CodeHash)
		if err != nil {
			return nil, err
		}
		more, err := x.rt.vm.Validate(x.ctx, src)
		if err != nil {
			return nil, failf(system.CodeInvalidLibrary, "library %q no longer validates: %v", name, err)
		}
		pending = append(pending, more...)
	}
	return pins, nil
}

func (x *Exec) loadPins(actor types.Address) (map[string][]byte, uint64, error) {
	libs := map[string][]byte{}
	var size uint64
	prefix := state.Key(state.PrefixLibPin, actor[:])
	err := x.o.Scan(prefix, func(k, v []byte) error {
		h, err := types.BytesToHash(v)
		if err != nil {
			return err
		}
		src, err := x.code(h)
		if err != nil {
			return err
		}
		libs[string(k[len(prefix):])] = src
		size += uint64(len(src))
		return nil
	})
	return libs, size, err
}

func validationFailure(err error) error {
	var ve *pvm.ValidationError
	if errors.As(err, &ve) {
		return failf(system.CodeValidationError, "ValidationError: line %d col %d [%s] %s", ve.Line, ve.Col, ve.Rule, ve.Message)
	}
	return err
}

// deploy runs a Deploy instruction atomically: any failure leaves no trace
// but the fee and the nonce (the caller reverts the overlay).
func (x *Exec) deploy(from types.Address, d *types.Deploy) (*types.Address, []byte, error) {
	src, err := types.CanonicalSource(d.Code)
	if err != nil {
		return nil, nil, failf(system.CodeInvalidSource, "%v", err)
	}
	imports, err := x.rt.vm.Validate(x.ctx, src)
	if err != nil {
		if errors.As(err, new(*pvm.ValidationError)) {
			return nil, nil, validationFailure(err)
		}
		return nil, nil, fmt.Errorf("%w: validate: %v", errInfra, err)
	}
	pins, err := x.resolveLibraries(from, imports)
	if err != nil {
		return nil, nil, err
	}
	if err := x.charge(uint64(len(pins))*fees.LibPinCycles, uint64(len(pins))*fees.LibPinCells); err != nil {
		return nil, nil, err
	}
	h := types.CodeHash(src)
	addr := types.ActorAddress(from, d.Salt, h)
	acc, err := x.o.Account(addr)
	if err != nil {
		return nil, nil, err
	}
	if acc.CodeHash != nil {
		return nil, nil, failf(system.CodeActorExists, "ActorExists: an actor already lives at %s (same deployer, salt and code)", addr)
	}
	if err := x.storeRequires(addr, d.Requires); err != nil {
		return nil, nil, err
	}
	if _, ok, err := x.o.Get(state.CodeKey(h)); err != nil {
		return nil, nil, err
	} else if !ok {
		x.o.Set(state.CodeKey(h), src)
	}
	acc.CodeHash = &h
	x.o.SetAccount(addr, acc)
	x.o.Set(state.StorageKey(addr, KeyOwner), codec.MustMarshal(from[:]))
	names := make([]string, 0, len(pins))
	for n := range pins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ph := pins[n]
		x.o.Set(PinKey(addr, n), ph[:])
	}
	if v := x.tx.Value(); v.Sign() > 0 {
		if err := x.moveValue(from, addr, v); err != nil {
			return nil, nil, err
		}
	}
	initArgs := []byte(d.InitArgs)
	ctorArgs := []byte(nil)
	if d.InitHandler == "" || d.InitHandler == "__init__" {
		ctorArgs = initArgs
	}
	if _, err := x.invoke(addr, from, x.tx.Value(), "", ctorArgs, true, 0, -1); err != nil {
		return nil, nil, err
	}
	x.o.Set(state.StorageKey(addr, KeyInitialized), codec.MustMarshal(true))
	var ret []byte
	if d.InitHandler != "" && d.InitHandler != "__init__" {
		x.deploying = true
		out, err := x.invoke(addr, from, x.tx.Value(), d.InitHandler, initArgs, false, 0, -1)
		if err != nil {
			return nil, nil, err
		}
		x.deploying = false
		if err := checkInline(out); err != nil {
			return nil, nil, err
		}
		ret = out
	}
	if err := x.deliver(); err != nil {
		return nil, nil, err
	}
	return &addr, ret, nil
}

func (x *Exec) call(from types.Address, to types.Address, c *types.Call) ([]byte, error) {
	acc, err := x.o.Account(to)
	if err != nil {
		return nil, err
	}
	if acc.CodeHash == nil {
		return nil, failf(system.CodeNoActor, "NoActor: no actor at %s", to)
	}
	if v := x.tx.Value(); v.Sign() > 0 {
		if err := x.moveValue(from, to, v); err != nil {
			return nil, err
		}
	}
	ret, err := x.invoke(to, from, x.tx.Value(), c.Handler, c.Args, false, 0, -1)
	if err != nil {
		return nil, err
	}
	if err := checkInline(ret); err != nil {
		return nil, err
	}
	if err := x.deliver(); err != nil {
		return nil, err
	}
	return ret, nil
}

// invoke runs one handler (or the constructor) of actor.
func (x *Exec) invoke(actor, caller types.Address, value *big.Int, handler string, payload []byte, init bool, depth int, parent int) ([]byte, error) {
	acc, err := x.o.Account(actor)
	if err != nil {
		return nil, err
	}
	if acc.CodeHash == nil {
		return nil, failf(system.CodeNoActor, "NoActor: no actor at %s", actor)
	}
	if hook := x.rt.storageHook; hook != nil {
		if err := hook.Enter(x, actor, !x.readOnly); err != nil {
			return nil, err
		}
	}
	src, err := x.code(*acc.CodeHash)
	if err != nil {
		return nil, err
	}
	libs, libBytes, err := x.loadPins(actor)
	if err != nil {
		return nil, err
	}
	if err := x.charge(libBytes*fees.LibLoadCyclesPerB, 0); err != nil {
		return nil, err
	}
	cyclesLeft := x.run.CyclesLimit - x.run.Cycles
	actorLeft := uint64(0)
	bounded := false
	if x.block != nil {
		used := x.block.actorCycles[actor]
		if used >= x.rt.limits.PerActorBlockCycles {
			return nil, failf(system.CodeActorBlockCycles, "ActorBlockCycles: actor %s used its per-block budget of %d cycles", actor, x.rt.limits.PerActorBlockCycles)
		}
		actorLeft = x.rt.limits.PerActorBlockCycles - used
		if actorLeft < cyclesLeft {
			cyclesLeft, bounded = actorLeft, true
		}
	}
	if parent < 0 {
		x.guards = nil // a new call chain
	}
	host := &Host{x: x, actor: actor, depth: depth, parent: parent}
	inv := &pvm.Invocation{
		Actor: actor, Caller: caller, Origin: x.origin, Value: value,
		Handler: handler, Payload: payload, Code: src, Libraries: libs,
		CyclesLimit: cyclesLeft, CellsLimit: x.run.CellsLimit - x.run.Cells,
		Depth: depth, ReadOnly: x.readOnly, Init: init, Deploying: x.deploying,
	}
	if len(inv.Payload) == 0 {
		inv.Payload = nil
	}
	out, err := x.rt.vm.Execute(x.ctx, inv, host)
	if err != nil {
		return nil, fmt.Errorf("%w: execute %s.%s: %v", errInfra, actor, handler, err)
	}
	if x.block != nil {
		x.block.actorCycles[actor] += out.CyclesUsed
	}
	x.run.Cycles += out.CyclesUsed
	x.run.Cells += out.CellsUsed
	if out.Err != nil {
		if out.Err.Kind == pvm.OutOfCycles && bounded {
			return nil, failf(system.CodeActorBlockCycles, "ActorBlockCycles: actor %s exceeded its per-block budget of %d cycles (%s: %s)", actor, x.rt.limits.PerActorBlockCycles, out.Err.Kind, out.Err.Message)
		}
		return nil, failf(system.CodeActorError, "%s: %s", out.Err.Kind, out.Err.Message)
	}
	return out.Return, nil
}

// deliver processes queued messages breadth-first in the order they were
// sent. A failing handler reverts only its own effects (and refunds the
// value it was sent); its sibling and parent messages stand.
func (x *Exec) deliver() error {
	for i := 0; i < len(x.queue); i++ {
		m := x.queue[i]
		snap := x.o.Snapshot()
		nEvents, nQueue := len(x.run.Events), len(x.queue)
		err := x.deliverOne(m)
		rec := &x.records[m.rec] // after delivery: the handler's sends may have grown the slice
		if err == nil {
			rec.Status, rec.Code, rec.Error = types.ReceiptSuccess, uint32(system.CodeOK), ""
			continue
		}
		if errors.Is(err, errInfra) || !isActorError(err) {
			return err
		}
		x.o.RevertTo(snap)
		x.run.Events = x.run.Events[:nEvents]
		for _, dropped := range x.queue[nQueue:] {
			x.records[dropped.rec].Status = types.ReceiptFailed
			x.records[dropped.rec].Code = uint32(system.CodeNotDelivered)
			x.records[dropped.rec].Error = "not delivered: sender's handler failed"
		}
		x.queue = x.queue[:nQueue]
		if x.failedMsg < 0 {
			x.failedMsg = m.rec
		}
		rec.Status = types.ReceiptFailed
		rec.Code = uint32(failureCode(err))
		rec.Error = err.Error()
		if m.value.Sign() > 0 {
			if err := x.o.AddBalance(m.from, m.value); err != nil {
				return err
			}
		}
		if x.run.Cycles > x.run.CyclesLimit || x.run.Cells > x.run.CellsLimit {
			x.failedMsg = m.rec // its delivery fails the transaction
			return failf(system.CodeOutOfCycles, "OutOfCycles: out of cycles delivering messages")
		}
	}
	return nil
}

// Dedup records (spec 002 §3.3): a lookup row per (recipient, message id)
// and an expiry row per (height, recipient, id), so that rows older than
// the dedup window are found and pruned without scanning all of them.
func dedupKey(to types.Address, id types.Hash) []byte {
	return state.Key(state.PrefixDedup, []byte{0}, to[:], id[:])
}

func dedupExpiryPrefix(height uint64) []byte {
	var h [8]byte
	binary.BigEndian.PutUint64(h[:], height)
	return state.Key(state.PrefixDedup, []byte{1}, h[:])
}

// pruneDedup drops the dedup rows written exactly window blocks ago.
func pruneDedup(o *state.Overlay, height, window uint64) error {
	if height < window {
		return nil
	}
	prefix := dedupExpiryPrefix(height - window)
	var expired [][]byte
	if err := o.Scan(prefix, func(k, _ []byte) error {
		expired = append(expired, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return err
	}
	for _, k := range expired {
		rest := k[len(prefix):]
		to, _ := types.BytesToAddress(rest[:types.AddressLength])
		id, _ := types.BytesToHash(rest[types.AddressLength:])
		o.Delete(dedupKey(to, id))
		o.Delete(k)
	}
	return nil
}

func (x *Exec) deliverOne(m *queuedMsg) error {
	id := x.records[m.rec].ID
	dk := dedupKey(m.to, id)
	if _, seen, err := x.o.Get(dk); err != nil {
		return err
	} else if seen {
		return failf(system.CodeDuplicateMessage, "DuplicateMessage: message %s already delivered to %s", id, m.to)
	}
	var h [8]byte
	binary.BigEndian.PutUint64(h[:], x.env.Height)
	x.o.Set(dk, h[:])
	x.o.Set(state.Key(state.PrefixDedup, []byte{1}, h[:], m.to[:], id[:]), []byte{1})
	if m.value.Sign() > 0 {
		if err := x.o.AddBalance(m.to, m.value); err != nil {
			return err
		}
	}
	acc, err := x.o.Account(m.to)
	if err != nil {
		return err
	}
	if acc.CodeHash == nil {
		if m.handler == "" {
			return nil // a plain value delivery to an account
		}
		return failf(system.CodeNoActor, "NoActor: no actor at %s", m.to)
	}
	_, err = x.invoke(m.to, m.from, m.value, m.handler, m.payload, false, m.depth, m.rec)
	return err
}

// publishLibrary runs PublishLibrary (seed 000 §3.3).
func (x *Exec) publishLibrary(from types.Address, p *types.PublishLibrary) error {
	if !LibraryNameRE.MatchString(p.Name) {
		return failf(system.CodeInvalidLibraryName, "InvalidLibraryName: %q must match %s", p.Name, LibraryNameRE)
	}
	src, err := types.CanonicalSource(p.Code)
	if err != nil {
		return failf(system.CodeInvalidSource, "%v", err)
	}
	if _, err := x.rt.vm.Validate(x.ctx, src); err != nil {
		if errors.As(err, new(*pvm.ValidationError)) {
			return validationFailure(err)
		}
		return fmt.Errorf("%w: validate: %v", errInfra, err)
	}
	h := types.CodeHash(src)
	if _, ok, err := x.o.Get(state.CodeKey(h)); err != nil {
		return err
	} else if !ok {
		if err := x.charge(0, uint64(len(src))); err != nil {
			return err
		}
		x.o.Set(state.CodeKey(h), src)
	}
	lib := Library{Publisher: from, Name: p.Name, CodeHash: h, CodeSize: uint64(len(src)), PublishedAt: x.env.Height}
	x.o.Set(LibraryKey(from, p.Name), codec.MustMarshal(&lib))
	x.emit(from, &LibraryPublishedEvent{Publisher: from, Name: p.Name, CodeHash: h, CodeSize: uint64(len(src))})
	return nil
}

func (x *Exec) removeLibrary(from types.Address, r *types.RemoveLibrary) error {
	k := LibraryKey(from, r.Name)
	if _, ok, err := x.o.Get(k); err != nil {
		return err
	} else if !ok {
		return failf(system.CodeNoSuchLibrary, "NoSuchLibrary: %s has no library named %q", from, r.Name)
	}
	x.o.Delete(k)
	x.emit(from, &LibraryRemovedEvent{Publisher: from, Name: r.Name})
	return nil
}
