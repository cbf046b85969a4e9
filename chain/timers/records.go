package timers

import (
	"encoding/binary"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The queue's records in the KV: its header, owner rows, height counters and timer records.

func (q *Queue) loadMeta(kv KV) (meta, bool, error) {
	b, ok, err := kv.Get(metaKey())
	if err != nil {
		return meta{}, false, fmt.Errorf("timers: read meta: %w", err)
	}
	if !ok {
		return meta{Basefee: q.p.InitialBasefee}, false, nil
	}
	var m meta
	if err := codec.Unmarshal(b, &m); err != nil {
		return meta{}, false, fmt.Errorf("%w: meta: %v", ErrCorrupt, err)
	}
	return m, true, nil
}

func saveMeta(kv KV, m *meta) { kv.Set(metaKey(), codec.MustMarshal(m)) }

func getOwner(kv KV, owner types.Address) (ownerRecord, error) {
	b, ok, err := kv.Get(ownerKey(owner))
	if err != nil {
		return ownerRecord{}, fmt.Errorf("timers: read owner %s: %w", owner, err)
	}
	var r ownerRecord
	if !ok {
		return r, nil
	}
	if err := codec.Unmarshal(b, &r); err != nil {
		return ownerRecord{}, fmt.Errorf("%w: owner %s: %v", ErrCorrupt, owner, err)
	}
	return r, nil
}

func putOwner(kv KV, owner types.Address, r ownerRecord) {
	kv.Set(ownerKey(owner), codec.MustMarshal(&r))
}

func getU64(kv KV, k []byte) (uint64, error) {
	b, ok, err := kv.Get(k)
	if err != nil {
		return 0, fmt.Errorf("timers: read counter: %w", err)
	}
	if !ok {
		return 0, nil
	}
	if len(b) != 8 {
		return 0, fmt.Errorf("%w: counter of %d bytes", ErrCorrupt, len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

func setU64(kv KV, k []byte, v uint64) {
	if v == 0 {
		kv.Delete(k)
		return
	}
	kv.Set(k, be8(v))
}

func addHeight(kv KV, h uint64, d int) error {
	n, err := getU64(kv, heightKey(h))
	if err != nil {
		return err
	}
	if d < 0 && n == 0 {
		return fmt.Errorf("%w: height %d count underflow", ErrCorrupt, h)
	}
	setU64(kv, heightKey(h), uint64(int64(n)+int64(d)))
	return nil
}

func (q *Queue) getRecord(kv KV, id types.Hash) (Timer, bool, error) {
	b, ok, err := kv.Get(RecordKey(id))
	if err != nil {
		return Timer{}, false, fmt.Errorf("timers: read timer %s: %w", id, err)
	}
	if !ok {
		return Timer{}, false, nil
	}
	t, err := DecodeTimer(b)
	if err != nil {
		return Timer{}, false, fmt.Errorf("timer %s: %w", id, err)
	}
	if t.ID != id {
		return Timer{}, false, fmt.Errorf("%w: record under %s has id %s", ErrCorrupt, id, t.ID)
	}
	return t, true, nil
}

func putRecord(kv KV, t *Timer) error {
	b, err := t.Encode()
	if err != nil {
		return err
	}
	kv.Set(RecordKey(t.ID), b)
	return nil
}

// collectKeys returns copies of every key under prefix, in order.
func collectKeys(kv KV, prefix []byte) ([][]byte, error) {
	var out [][]byte
	err := kv.Scan(prefix, func(k, _ []byte) error {
		out = append(out, append([]byte(nil), k...))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("timers: scan %x: %w", prefix, err)
	}
	return out, nil
}

// mustHave checks that an index key exists.
func mustHave(kv KV, k []byte, id types.Hash) error {
	_, ok, err := kv.Get(k)
	if err != nil {
		return fmt.Errorf("timers: read index of %s: %w", id, err)
	}
	if !ok {
		return fmt.Errorf("%w: timer %s missing from its queue", ErrCorrupt, id)
	}
	return nil
}
