package timers

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Get returns timer id.
func (q *Queue) Get(kv KV, id types.Hash) (Timer, error) {
	t, ok, err := q.getRecord(kv, id)
	if err != nil {
		return Timer{}, err
	}
	if !ok {
		return Timer{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return t, nil
}

// ListByOwner returns owner's timers ordered by id.
func (q *Queue) ListByOwner(kv KV, owner types.Address) ([]Timer, error) {
	keys, err := collectKeys(kv, key(tableOwned, owner[:]))
	if err != nil {
		return nil, err
	}
	out := make([]Timer, 0, len(keys))
	for _, k := range keys {
		id, _ := idFromKeyTail(k)
		t, err := q.Get(kv, id)
		if err != nil {
			return nil, fmt.Errorf("owner %s: %w", owner, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// PendingCount is the number of owner's timers (the n of the progressive
// deposit).
func (q *Queue) PendingCount(kv KV, owner types.Address) (uint64, error) {
	o, err := getOwner(kv, owner)
	return o.Pending, err
}

// DropOwner cancels every timer of owner (for eviction, spec §State Rent)
// and returns the sum of their deposits; the caller decides whether they
// are refunded or forfeited.
func (q *Queue) DropOwner(kv KV, owner types.Address) (*big.Int, int, error) {
	ts, err := q.ListByOwner(kv, owner)
	if err != nil {
		return nil, 0, err
	}
	total := new(big.Int)
	for _, t := range ts {
		d, err := q.Cancel(kv, owner, t.ID)
		if err != nil {
			return nil, 0, err
		}
		total.Add(total, d)
	}
	return total, len(ts), nil
}

// Active reports whether the queue has ever been used, i.e. whether its
// header (the meta key 0x0A 0x08) exists. Until the first Schedule or Due
// there is no timer state at all, so a chain that never uses timers can
// skip the timer phase and keep its state root unchanged.
func Active(kv KV) (bool, error) {
	_, ok, err := kv.Get(metaKey())
	if err != nil {
		return false, fmt.Errorf("timers: read meta: %w", err)
	}
	return ok, nil
}

// Stats returns the queue's counters.
func (q *Queue) Stats(kv KV) (Stats, error) {
	m, _, err := q.loadMeta(kv)
	if err != nil {
		return Stats{}, err
	}
	return Stats{Height: m.Cursor, Basefee: m.Basefee, Tier1: m.Tier1, Tier2: m.Tier2, Tier3: m.Tier3, Due: m.Due}, nil
}

// LastUsage returns the cycles the previous block used, as recorded by
// SetLastUsage (0 if never recorded): the last_block_cycle_usage a Gas
// Bidding Agent is shown, which the state transition cannot otherwise see.
func LastUsage(kv KV) (uint64, error) { return getU64(kv, usageKey()) }

// SetLastUsage records the cycles the executing block used, for the next
// block's bids. The block executor calls it once per block on chains with
// timer state.
func SetLastUsage(kv KV, cycles uint64) { setU64(kv, usageKey(), cycles) }
