package actors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus/vrf"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
)

// Host serves one invocation's host calls over the transaction's overlay.
type Host struct {
	x      *Exec
	actor  types.Address
	depth  int
	parent int
}

var _ pvm.Host = (*Host)(nil)

func (h *Host) StorageGet(key []byte) ([]byte, bool, error) {
	v, ok, err := h.x.o.Get(state.StorageKey(h.actor, key))
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	return v, ok, nil
}

func reservedKey(key []byte) bool {
	return string(key) == string(KeyOwner) || string(key) == string(KeyInitialized)
}

func (h *Host) adjustUsage(key []byte, newLen int) error {
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
	quota := h.x.rt.limits.StorageQuota
	if hook := h.x.rt.storageHook; hook != nil {
		if quota, err = hook.Quota(h.x.o, h.actor); err != nil {
			return fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
		}
	}
	if used > quota {
		return fmt.Errorf("storage quota exceeded: %d bytes > %d for this actor", used, quota)
	}
	if hook := h.x.rt.storageHook; hook != nil && used != meta.StorageBytes {
		if err := hook.Used(h.x, h.actor, meta.StorageBytes, used); err != nil {
			return fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
		}
	}
	meta.StorageBytes = used
	writeMeta(h.x.o, h.actor, meta)
	return nil
}

func (h *Host) StorageSet(key, value []byte) error {
	if reservedKey(key) {
		return fmt.Errorf("storage key %q is reserved", key)
	}
	if err := h.adjustUsage(key, len(value)); err != nil {
		return err
	}
	h.x.o.Set(state.StorageKey(h.actor, key), value)
	return nil
}

func (h *Host) StorageDelete(key []byte) error {
	if reservedKey(key) {
		return fmt.Errorf("storage key %q is reserved", key)
	}
	if err := h.adjustUsage(key, -1); err != nil {
		return err
	}
	h.x.o.Delete(state.StorageKey(h.actor, key))
	return nil
}

func (h *Host) EmitEvent(topic string, data []byte) error {
	if len(data) == 0 {
		data = []byte{0xf6} // CBOR null
	}
	if err := codec.Valid(data); err != nil {
		return fmt.Errorf("event data is not canonical CBOR: %v", err)
	}
	h.x.run.Events = append(h.x.run.Events, types.Event{Emitter: h.actor, Topic: topic, Data: append(types.Bytes(nil), data...)})
	return nil
}

func (h *Host) Send(to [20]byte, handler string, payload []byte, value *big.Int) ([32]byte, error) {
	x := h.x
	if len(x.records) >= x.rt.limits.FanoutPerTx {
		return [32]byte{}, fmt.Errorf("fanout cap: a transaction may enqueue at most %d messages", x.rt.limits.FanoutPerTx)
	}
	if h.depth+1 > x.rt.limits.MaxMessageDepth {
		return [32]byte{}, fmt.Errorf("message depth cap: at most %d nested sends", x.rt.limits.MaxMessageDepth)
	}
	dest := types.Address(to)
	if x.mailbox[dest]+len(payload) > x.rt.limits.MailboxBytes {
		return [32]byte{}, fmt.Errorf("mailbox of %s full: %d bytes per transaction", dest, x.rt.limits.MailboxBytes)
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

func (h *Host) Transfer(to [20]byte, value *big.Int) error {
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

func (h *Host) Balance(addr [20]byte) (*big.Int, error) {
	acc, err := h.x.o.Account(types.Address(addr))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", pvm.ErrHostFailure, err)
	}
	return acc.Balance, nil
}

func (h *Host) BlockInfo() pvm.BlockInfo {
	return pvm.BlockInfo{Height: h.x.env.Height, Timestamp: h.x.env.Timestamp,
		ChainID: fmt.Sprint(h.x.rt.chainID), Proposer: h.x.env.Proposer}
}

// Randomness derives per-label randomness from the block's seed:
// HKDF-SHA256(seed, label) (vrf.Randomness). On a consensus network the
// seed is the parent's beacon value R_{n-1}, so a block's own VRF output
// is never usable inside it; on a --dev chain it is the parent block hash,
// which the single validator can influence.
func (h *Host) Randomness(label []byte) ([32]byte, error) {
	return vrf.Randomness(h.x.env.Seed, label), nil
}

// HostCall routes an actor's extension ops (pvm.ExtendedHost) to the ops
// registered on the Runtime. Errors are shown to the actor as a catchable
// HostError; they leave no state change behind.
func (h *Host) HostCall(req *pvm.HostRequest) (*pvm.HostResponse, error) {
	if op, ok := h.x.rt.ops[req.Op]; ok {
		return op(h, req)
	}
	return nil, fmt.Errorf("unsupported host call: %s", req.Op)
}

// Exec returns the execution the host call runs in.
func (h *Host) Exec() *Exec { return h.x }

// Actor returns the calling actor.
func (h *Host) Actor() types.Address { return h.actor }

// HostArgs decodes a host call's keyword arguments: a CBOR map with text keys.
func HostArgs(raw any) (map[string]any, error) { return hostArgs(raw) }

// hostArgs is a host call's keyword arguments: a CBOR map with text keys.
func hostArgs(raw any) (map[string]any, error) {
	switch v := raw.(type) {
	case map[string]any:
		return v, nil
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			ks, ok := k.(string)
			if !ok {
				return nil, errors.New("bad arguments: non-string key")
			}
			m[ks] = x
		}
		return m, nil
	}
	return nil, errors.New("bad arguments: not a map")
}
