package execution

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"sort"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus/vrf"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
)

// VM is the narrow interface through which execution runs actor code.
// *pvm.Engine implements it.
type VM interface {
	Validate(ctx context.Context, source []byte) ([]string, error)
	Execute(ctx context.Context, inv *pvm.Invocation, host pvm.Host) (*pvm.Outcome, error)
}

// ActorLimits are the execution limits of spec 002 §3, §12.1, §13 and
// seed 000 §3.6. Zero fields take the defaults.
type ActorLimits struct {
	MaxLibsPerActor     int    // 8
	FanoutPerTx         int    // messages one transaction may enqueue, nested sends included: 1,024
	MaxMessageDepth     int    // 32
	MailboxBytes        int    // payload bytes one actor may receive per transaction: 1,000,000
	StorageQuota        uint64 // bytes of key+value per actor: 1 MiB
	DedupWindow         uint64 // blocks a delivered message id is remembered: 10,000
	PerActorBlockCycles uint64 // cycles one actor may burn per block: 1,000,000
	QueryCycles         uint64 // budget of a read-only query: 10,000,000
}

func (l *ActorLimits) fill() {
	if l.MaxLibsPerActor <= 0 {
		l.MaxLibsPerActor = 8
	}
	if l.FanoutPerTx <= 0 {
		l.FanoutPerTx = 1024
	}
	if l.MaxMessageDepth <= 0 {
		l.MaxMessageDepth = 32
	}
	if l.MailboxBytes <= 0 {
		l.MailboxBytes = 1_000_000
	}
	if l.StorageQuota == 0 {
		l.StorageQuota = 1 << 20
	}
	if l.DedupWindow == 0 {
		l.DedupWindow = 10_000
	}
	if l.PerActorBlockCycles == 0 {
		l.PerActorBlockCycles = 1_000_000
	}
	if l.QueryCycles == 0 {
		l.QueryCycles = 10_000_000
	}
}

// Reserved actor storage keys, written only by the chain.
var (
	KeyOwner       = []byte(system.ActorOwnerKey)
	KeyInitialized = []byte("__INITIALIZED__")
)

// LibraryNameRE is the library name rule of seed 000 §3.3.
var LibraryNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`)

// Library is the metadata row of a published library (seed 000 §3.1).
type Library struct {
	_           struct{}      `cbor:",toarray"`
	Publisher   types.Address `json:"publisher"`
	Name        string        `json:"name"`
	CodeHash    types.Hash    `json:"code_hash"`
	CodeSize    uint64        `json:"code_size"`
	PublishedAt uint64        `json:"published_at"`
}

// Library event topics; the publisher's account emits them.
const (
	TopicLibraryPublished = "LibraryPublished"
	TopicLibraryRemoved   = "LibraryRemoved"
)

// LibraryPublishedEvent is the data of the LibraryPublished event.
type LibraryPublishedEvent struct {
	Publisher types.Address `cbor:"publisher" json:"publisher"`
	Name      string        `cbor:"name" json:"name"`
	CodeHash  types.Hash    `cbor:"code_hash" json:"code_hash"`
	CodeSize  uint64        `cbor:"code_size" json:"code_size"`
}

// Topic implements system.EventData.
func (*LibraryPublishedEvent) Topic() string { return TopicLibraryPublished }

// LibraryRemovedEvent is the data of the LibraryRemoved event.
type LibraryRemovedEvent struct {
	Publisher types.Address `cbor:"publisher" json:"publisher"`
	Name      string        `cbor:"name" json:"name"`
}

// Topic implements system.EventData.
func (*LibraryRemovedEvent) Topic() string { return TopicLibraryRemoved }

// LibraryKey is the state key of (publisher, name).
func LibraryKey(publisher types.Address, name string) []byte {
	return state.Key(state.PrefixLibrary, publisher[:], []byte(name))
}

// PinKey is the state key of an actor's pin for an import name.
func PinKey(actor types.Address, name string) []byte {
	return state.Key(state.PrefixLibPin, actor[:], []byte(name))
}

// ActorMeta is chain-owned bookkeeping per actor, outside its storage.
type ActorMeta struct {
	_            struct{} `cbor:",toarray"`
	StorageBytes uint64   // bytes of key+value in the actor's storage
	MsgNonce     uint64   // messages sent, feeds message ids
}

func actorMetaKey(a types.Address) []byte { return state.Key(state.PrefixActor, a[:]) }

// ReadActorMeta returns the chain's bookkeeping for an actor.
func ReadActorMeta(r state.Reader, a types.Address) (*ActorMeta, error) { return readMeta(r, a) }

func readMeta(r state.Reader, a types.Address) (*ActorMeta, error) {
	b, ok, err := r.Get(actorMetaKey(a))
	if err != nil || !ok {
		return &ActorMeta{}, err
	}
	var m ActorMeta
	if err := codec.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode actor meta %s: %w", a, err)
	}
	return &m, nil
}

func writeMeta(o *state.Overlay, a types.Address, m *ActorMeta) {
	o.Set(actorMetaKey(a), codec.MustMarshal(m))
}

// failf is a deterministic failure of an actor instruction; its text goes
// into the receipt.
func failf(code system.Code, format string, args ...any) error {
	return system.Failf(code, format, args...)
}

// UnresolvedImport formats the deploy failure of seed 000 §4.
func UnresolvedImport(name string, deployer types.Address) error {
	return failf(system.CodeUnresolvedImport, "UnresolvedImport { name: %q }: no library named %q published under deployer account %s", name, name, deployer)
}

// txExec carries one transaction's execution.
type txExec struct {
	ctx    context.Context
	ex     *Executor
	o      *state.Overlay
	env    BlockEnv
	tx     *types.Tx
	origin types.Address
	run    *txRun
	block  *blockMeters

	queue     []*queuedMsg
	records   []types.MessageRecord
	mailbox   map[types.Address]int
	readOnly  bool
	deploying bool // running the deploy-time init handler
}

type queuedMsg struct {
	rec     int // index into records
	from    types.Address
	to      types.Address
	handler string
	payload []byte
	value   *big.Int
	depth   int
}

// blockMeters tracks per-actor cycles across a block (§12.1).
type blockMeters struct {
	actorCycles map[types.Address]uint64
}

func (m *blockMeters) clone() *blockMeters {
	c := &blockMeters{actorCycles: make(map[types.Address]uint64, len(m.actorCycles))}
	for a, v := range m.actorCycles {
		c.actorCycles[a] = v
	}
	return c
}

func (x *txExec) charge(cycles, cells uint64) error {
	x.run.cycles += cycles
	x.run.cells += cells
	if x.run.cycles > x.run.cyclesLimit {
		return failf(system.CodeOutOfCycles, "OutOfCycles: out of cycles")
	}
	if x.run.cells > x.run.cellsLimit {
		return failf(system.CodeOutOfCells, "OutOfCells: out of cells")
	}
	return nil
}

func (x *txExec) code(h types.Hash) ([]byte, error) {
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
func (x *txExec) resolveLibraries(deployer types.Address, imports []string) (map[string]types.Hash, error) {
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
		if len(pins) > x.ex.limits.MaxLibsPerActor {
			return nil, failf(system.CodeTooManyLibraries, "TooManyLibraries: more than MAX_LIBS_PER_ACTOR = %d libraries (direct and transitive)", x.ex.limits.MaxLibsPerActor)
		}
		src, err := x.code(lib.CodeHash)
		if err != nil {
			return nil, err
		}
		more, err := x.ex.vm.Validate(x.ctx, src)
		if err != nil {
			return nil, failf(system.CodeInvalidLibrary, "library %q no longer validates: %v", name, err)
		}
		pending = append(pending, more...)
	}
	return pins, nil
}

func (x *txExec) loadPins(actor types.Address) (map[string][]byte, uint64, error) {
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
func (x *txExec) deploy(from types.Address, d *types.Deploy) (*types.Address, []byte, error) {
	src, err := types.CanonicalSource(d.Code)
	if err != nil {
		return nil, nil, failf(system.CodeInvalidSource, "%v", err)
	}
	imports, err := x.ex.vm.Validate(x.ctx, src)
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
		ret = out
	}
	if err := x.deliver(); err != nil {
		return nil, nil, err
	}
	return &addr, ret, nil
}

func (x *txExec) call(from types.Address, to types.Address, c *types.Call) ([]byte, error) {
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
	if err := x.deliver(); err != nil {
		return nil, err
	}
	return ret, nil
}

func (x *txExec) moveValue(from, to types.Address, v *big.Int) error {
	if err := x.o.SubBalance(from, v); err != nil {
		return failf(system.CodeInsufficientBalance, "%v", err)
	}
	return x.o.AddBalance(to, v)
}

// errInfra marks failures of the node itself (not of the transaction); they
// abort block execution instead of producing a receipt.
var errInfra = errors.New("infrastructure failure")

// invoke runs one handler (or the constructor) of actor.
func (x *txExec) invoke(actor, caller types.Address, value *big.Int, handler string, payload []byte, init bool, depth int, parent int) ([]byte, error) {
	acc, err := x.o.Account(actor)
	if err != nil {
		return nil, err
	}
	if acc.CodeHash == nil {
		return nil, failf(system.CodeNoActor, "NoActor: no actor at %s", actor)
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
	cyclesLeft := x.run.cyclesLimit - x.run.cycles
	actorLeft := uint64(0)
	bounded := false
	if x.block != nil {
		used := x.block.actorCycles[actor]
		if used >= x.ex.limits.PerActorBlockCycles {
			return nil, failf(system.CodeActorBlockCycles, "ActorBlockCycles: actor %s used its per-block budget of %d cycles", actor, x.ex.limits.PerActorBlockCycles)
		}
		actorLeft = x.ex.limits.PerActorBlockCycles - used
		if actorLeft < cyclesLeft {
			cyclesLeft, bounded = actorLeft, true
		}
	}
	host := &actorHost{x: x, actor: actor, depth: depth, parent: parent}
	inv := &pvm.Invocation{
		Actor: actor, Caller: caller, Origin: x.origin, Value: value,
		Handler: handler, Payload: payload, Code: src, Libraries: libs,
		CyclesLimit: cyclesLeft, CellsLimit: x.run.cellsLimit - x.run.cells,
		Depth: depth, ReadOnly: x.readOnly, Init: init, Deploying: x.deploying,
	}
	if len(inv.Payload) == 0 {
		inv.Payload = nil
	}
	out, err := x.ex.vm.Execute(x.ctx, inv, host)
	if err != nil {
		return nil, fmt.Errorf("%w: execute %s.%s: %v", errInfra, actor, handler, err)
	}
	if x.block != nil {
		x.block.actorCycles[actor] += out.CyclesUsed
	}
	x.run.cycles += out.CyclesUsed
	x.run.cells += out.CellsUsed
	if out.Err != nil {
		if out.Err.Kind == pvm.OutOfCycles && bounded {
			return nil, failf(system.CodeActorBlockCycles, "ActorBlockCycles: actor %s exceeded its per-block budget of %d cycles (%s: %s)", actor, x.ex.limits.PerActorBlockCycles, out.Err.Kind, out.Err.Message)
		}
		return nil, failf(system.CodeActorError, "%s: %s", out.Err.Kind, out.Err.Message)
	}
	return out.Return, nil
}

// deliver processes queued messages breadth-first in the order they were
// sent. A failing handler reverts only its own effects (and refunds the
// value it was sent); its sibling and parent messages stand.
func (x *txExec) deliver() error {
	for i := 0; i < len(x.queue); i++ {
		m := x.queue[i]
		snap := x.o.Snapshot()
		nEvents, nQueue := len(x.run.events), len(x.queue)
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
		x.run.events = x.run.events[:nEvents]
		for _, dropped := range x.queue[nQueue:] {
			x.records[dropped.rec].Status = types.ReceiptFailed
			x.records[dropped.rec].Code = uint32(system.CodeNotDelivered)
			x.records[dropped.rec].Error = "not delivered: sender's handler failed"
		}
		x.queue = x.queue[:nQueue]
		rec.Status = types.ReceiptFailed
		rec.Code = uint32(failureCode(err))
		rec.Error = err.Error()
		if m.value.Sign() > 0 {
			if err := x.o.AddBalance(m.from, m.value); err != nil {
				return err
			}
		}
		if x.run.cycles > x.run.cyclesLimit || x.run.cells > x.run.cellsLimit {
			return failf(system.CodeOutOfCycles, "OutOfCycles: out of cycles delivering messages")
		}
	}
	return nil
}

func isActorError(err error) bool { return system.IsFailure(err) }

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

func (x *txExec) deliverOne(m *queuedMsg) error {
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

// actorHost serves one invocation's host calls over the transaction's overlay.
type actorHost struct {
	x      *txExec
	actor  types.Address
	depth  int
	parent int
}

var _ pvm.Host = (*actorHost)(nil)

func (h *actorHost) StorageGet(key []byte) ([]byte, bool, error) {
	v, ok, err := h.x.o.Get(state.StorageKey(h.actor, key))
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	return v, ok, nil
}

func reservedKey(key []byte) bool {
	return string(key) == string(KeyOwner) || string(key) == string(KeyInitialized)
}

func (h *actorHost) adjustUsage(key []byte, newLen int) error {
	sk := state.StorageKey(h.actor, key)
	old, ok, err := h.x.o.Get(sk)
	if err != nil {
		return fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	meta, err := readMeta(h.x.o, h.actor)
	if err != nil {
		return fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	used := meta.StorageBytes
	if ok {
		used -= uint64(len(key) + len(old))
	}
	if newLen >= 0 {
		used += uint64(len(key) + newLen)
	}
	if used > h.x.ex.limits.StorageQuota {
		return fmt.Errorf("storage quota exceeded: %d bytes > %d per actor", used, h.x.ex.limits.StorageQuota)
	}
	meta.StorageBytes = used
	writeMeta(h.x.o, h.actor, meta)
	return nil
}

func (h *actorHost) StorageSet(key, value []byte) error {
	if reservedKey(key) {
		return fmt.Errorf("storage key %q is reserved", key)
	}
	if err := h.adjustUsage(key, len(value)); err != nil {
		return err
	}
	h.x.o.Set(state.StorageKey(h.actor, key), value)
	return nil
}

func (h *actorHost) StorageDelete(key []byte) error {
	if reservedKey(key) {
		return fmt.Errorf("storage key %q is reserved", key)
	}
	if err := h.adjustUsage(key, -1); err != nil {
		return err
	}
	h.x.o.Delete(state.StorageKey(h.actor, key))
	return nil
}

func (h *actorHost) EmitEvent(topic string, data []byte) error {
	if len(data) == 0 {
		data = []byte{0xf6} // CBOR null
	}
	if err := codec.Valid(data); err != nil {
		return fmt.Errorf("event data is not canonical CBOR: %v", err)
	}
	h.x.run.events = append(h.x.run.events, types.Event{Emitter: h.actor, Topic: topic, Data: append(types.Bytes(nil), data...)})
	return nil
}

func (h *actorHost) Send(to [20]byte, handler string, payload []byte, value *big.Int) ([32]byte, error) {
	x := h.x
	if len(x.records) >= x.ex.limits.FanoutPerTx {
		return [32]byte{}, fmt.Errorf("fanout cap: a transaction may enqueue at most %d messages", x.ex.limits.FanoutPerTx)
	}
	if h.depth+1 > x.ex.limits.MaxMessageDepth {
		return [32]byte{}, fmt.Errorf("message depth cap: at most %d nested sends", x.ex.limits.MaxMessageDepth)
	}
	dest := types.Address(to)
	if x.mailbox[dest]+len(payload) > x.ex.limits.MailboxBytes {
		return [32]byte{}, fmt.Errorf("mailbox of %s full: %d bytes per transaction", dest, x.ex.limits.MailboxBytes)
	}
	if value == nil {
		value = new(big.Int)
	}
	if value.Sign() > 0 {
		if err := x.o.SubBalance(h.actor, value); err != nil {
			return [32]byte{}, fmt.Errorf("cannot send %s: %v", value, err)
		}
	}
	meta, err := readMeta(x.o, h.actor)
	if err != nil {
		return [32]byte{}, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	nonce := meta.MsgNonce
	meta.MsgNonce++
	writeMeta(x.o, h.actor, meta)
	msgHash := types.Keccak256(codec.MustMarshal([]any{dest, handler, payload, value}))
	var nb [8]byte
	binary.BigEndian.PutUint64(nb[:], nonce)
	id := types.Keccak256(h.actor[:], nb[:], msgHash[:])
	x.mailbox[dest] += len(payload)
	x.records = append(x.records, types.MessageRecord{ID: id, From: h.actor, To: dest, Handler: handler,
		Value: new(big.Int).Set(value), Depth: uint64(h.depth + 1), Parent: int64(h.parent), Status: types.ReceiptFailed, Code: uint32(system.CodePending), Error: "pending"})
	x.queue = append(x.queue, &queuedMsg{rec: len(x.records) - 1, from: h.actor, to: dest, handler: handler,
		payload: append([]byte(nil), payload...), value: new(big.Int).Set(value), depth: h.depth + 1})
	return id, nil
}

func (h *actorHost) Transfer(to [20]byte, value *big.Int) error {
	if value == nil || value.Sign() <= 0 {
		return nil
	}
	if err := h.x.o.SubBalance(h.actor, value); err != nil {
		return fmt.Errorf("transfer: %v", err)
	}
	if err := h.x.o.AddBalance(types.Address(to), value); err != nil {
		return fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	return nil
}

func (h *actorHost) Balance(addr [20]byte) (*big.Int, error) {
	acc, err := h.x.o.Account(types.Address(addr))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	return acc.Balance, nil
}

func (h *actorHost) BlockInfo() pvm.BlockInfo {
	return pvm.BlockInfo{Height: h.x.env.Height, Timestamp: h.x.env.Timestamp,
		ChainID: fmt.Sprint(h.x.ex.cfg.ChainID), Proposer: h.x.env.Proposer}
}

// Randomness derives per-label randomness from the block's seed:
// HKDF-SHA256(seed, label) (vrf.Randomness). On a consensus network the
// seed is the parent's beacon value R_{n-1}, so a block's own VRF output
// is never usable inside it; on a --dev chain it is the parent block hash,
// which the single validator can influence.
func (h *actorHost) Randomness(label []byte) ([32]byte, error) {
	return vrf.Randomness(h.x.env.Seed, label), nil
}

// publishLibrary runs PublishLibrary (seed 000 §3.3).
func (x *txExec) publishLibrary(from types.Address, p *types.PublishLibrary) error {
	if !LibraryNameRE.MatchString(p.Name) {
		return failf(system.CodeInvalidLibraryName, "InvalidLibraryName: %q must match %s", p.Name, LibraryNameRE)
	}
	src, err := types.CanonicalSource(p.Code)
	if err != nil {
		return failf(system.CodeInvalidSource, "%v", err)
	}
	if _, err := x.ex.vm.Validate(x.ctx, src); err != nil {
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

func (x *txExec) removeLibrary(from types.Address, r *types.RemoveLibrary) error {
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
