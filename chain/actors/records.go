package actors

import (
	"fmt"
	"regexp"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
)

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

// SetStorageBytes sets the storage use recorded for actor a (the rent
// module's eviction and restore, which write the storage directly).
func SetStorageBytes(o *state.Overlay, a types.Address, n uint64) error {
	m, err := readMeta(o, a)
	if err != nil {
		return err
	}
	m.StorageBytes = n
	writeMeta(o, a, m)
	return nil
}

func writeMeta(o *state.Overlay, a types.Address, m *ActorMeta) {
	o.Set(actorMetaKey(a), codec.MustMarshal(m))
}

// Reads of the actor host's own records (owner, pins, libraries) for the
// node's API, so that the state layout stays in this package.

// ReadActorOwner returns the account that deployed actor a, or nil when
// the record is absent or unreadable.
func ReadActorOwner(r state.Reader, a types.Address) (*types.Address, error) {
	raw, ok, err := r.Get(state.StorageKey(a, KeyOwner))
	if err != nil || !ok {
		return nil, err
	}
	var owner []byte
	if codec.Unmarshal(raw, &owner) != nil {
		return nil, nil
	}
	o, err := types.BytesToAddress(owner)
	if err != nil {
		return nil, nil
	}
	return &o, nil
}

// ReadPins returns actor a's library pins: import name → code hash.
func ReadPins(r state.Reader, a types.Address) (map[string]types.Hash, error) {
	out := map[string]types.Hash{}
	prefix := state.Key(state.PrefixLibPin, a[:])
	err := r.Scan(prefix, func(k, val []byte) error {
		h, err := types.BytesToHash(val)
		if err != nil {
			return err
		}
		out[string(k[len(prefix):])] = h
		return nil
	})
	return out, err
}

// ReadLibraries returns the libraries published under publisher, in key
// (name) order.
func ReadLibraries(r state.Reader, publisher types.Address) ([]Library, error) {
	var out []Library
	err := r.Scan(state.Key(state.PrefixLibrary, publisher[:]), func(_, val []byte) error {
		var l Library
		if err := codec.Unmarshal(val, &l); err != nil {
			return err
		}
		out = append(out, l)
		return nil
	})
	return out, err
}

// Actor entitlements (spec 002 §15). The deployment manifest of a Deploy
// instruction is validated and stored, write-once, in the actor's metadata
// row under the actor prefix (0x08 || address || "requires"); the syscall
// gate reads it on every privileged host call. An actor without a manifest
// gets none of them: set_timer / set_interval need "timers", submit_job
// needs "jobs" listing the job type and "http" covering every required
// domain. cancel_timer is not gated: it only releases the actor's own timers.

var requiresSuffix = []byte("requires")

// RequiresKey is the state key of an actor's stored manifest.
func RequiresKey(a types.Address) []byte {
	return state.Key(state.PrefixActor, a[:], requiresSuffix)
}

// ReadActorRequires returns an actor's deployment manifest (nil: none).
func ReadActorRequires(r state.Reader, a types.Address) (entitlement.Manifest, error) {
	b, ok, err := r.Get(RequiresKey(a))
	if err != nil || !ok {
		return nil, err
	}
	m, err := entitlement.DecodeManifest(b)
	if err != nil {
		return nil, fmt.Errorf("actor %s: stored %w", a, err)
	}
	return m, nil
}

// storeRequires validates a Deploy's manifest and writes it for addr,
// charging one cell per stored byte. Invalid manifests fail the deploy.
func (x *Exec) storeRequires(addr types.Address, raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	if _, err := entitlement.DecodeManifest(raw); err != nil {
		return failf(system.CodeInvalidManifest, "InvalidManifest: %v", err)
	}
	if err := x.charge(0, uint64(len(raw))); err != nil {
		return err
	}
	x.o.Set(RequiresKey(addr), append([]byte(nil), raw...))
	return nil
}

// Requires returns the calling actor's deployment manifest (nil: none), for
// the syscall gate of a privileged op (spec 002 §15).
func (h *Host) Requires() (entitlement.Manifest, error) {
	m, err := ReadActorRequires(h.x.o, h.actor)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	return m, nil
}
