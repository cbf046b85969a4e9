package timers

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"math/bits"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Due advances the queue to height and returns every timer due at or
// before height that has not fired, including those deferred in earlier
// blocks, ordered by (target height, id). Call it once per block, at the
// block's height, before selecting timers; heights must not be skipped
// (a gap of g heights costs O(g)). Advancing also updates the timer
// basefee once per height and moves the timers of one height from tier 2
// to the ring and those of one height from tier 3 to tier 2.
//
// Per height the cost is one counter read, plus, if timers target that
// height, one scan of its ring slot; once per EpochLength heights, one
// scan of a tier-2 and of a tier-3 bucket. Returning the due set is one
// scan of it.
func (q *Queue) Due(kv KV, height uint64) ([]Timer, error) {
	return q.DueLimit(kv, height, 0)
}

// DueLimit is Due returning at most limit timers (0: no limit), the oldest
// first by (target, id). It bounds the GBA calls a block producer makes
// when a long backlog has built up; the rest stay due, untouched.
func (q *Queue) DueLimit(kv KV, height uint64, limit int) ([]Timer, error) {
	m, found, err := q.loadMeta(kv)
	if err != nil {
		return nil, err
	}
	if !found {
		m.Cursor = height - min(height, 1)
	}
	for x := m.Cursor + 1; x <= height && x > m.Cursor; x++ {
		if err := q.advance(kv, &m, x); err != nil {
			return nil, err
		}
	}
	saveMeta(kv, &m)
	keys, err := q.dueKeys(kv, &m, height, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Timer, 0, len(keys))
	for _, k := range keys {
		id, _ := idFromKeyTail(k)
		t, ok, err := q.getRecord(kv, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: due timer %s has no record", ErrCorrupt, id)
		}
		if t.Target > height {
			break // due set is ordered by target
		}
		out = append(out, t)
	}
	return out, nil
}

// dueSpan is how many target heights one due-set scan covers: the due
// set is read in aligned blocks of 256 heights (one byte of the be8
// target), oldest first.
const dueSpan = 256

// dueKeys returns the due set's index keys in (target, id) order, at most
// limit of them (0: all). A scan through a state.Overlay reads the whole
// range under its prefix whatever the callback does, so the due set is
// not scanned in one go: it is read block by block from the floor (a lower
// bound of its targets, 0A 0A) until limit keys are found. Blocks found
// empty at the floor raise it for good — entries only ever join the due set
// at the cursor — so under a long backlog a block reads the oldest
// ~limit entries, not the whole backlog.
func (q *Queue) dueKeys(kv KV, m *meta, height uint64, limit int) ([][]byte, error) {
	floor, err := getU64(kv, floorKey())
	if err != nil {
		return nil, err
	}
	newFloor := floor
	var keys [][]byte
	if m.Due > 0 {
		empty := true
		for b := floor / dueSpan; b <= height/dueSpan && (limit == 0 || len(keys) < limit); b++ {
			n0 := len(keys)
			err := kv.Scan(key(tableDue, be8(b * dueSpan)[:7]), func(k, _ []byte) error {
				if limit > 0 && len(keys) == limit {
					return errStop
				}
				keys = append(keys, append([]byte(nil), k...))
				return nil
			})
			if err != nil && !errors.Is(err, errStop) {
				return nil, fmt.Errorf("timers: scan due set: %w", err)
			}
			if empty && len(keys) == n0 {
				newFloor = (b + 1) * dueSpan
			} else {
				empty = false
			}
		}
	}
	// Entries join at the cursor, so the floor never passes the block of
	// the height the queue stands at.
	if m.Due == 0 || newFloor > height/dueSpan*dueSpan {
		newFloor = height / dueSpan * dueSpan
	}
	if newFloor > floor {
		setU64(kv, floorKey(), newFloor)
	}
	return keys, nil
}

// errStop ends a Scan early; it never leaves the package.
var errStop = errors.New("stop")

// advance moves the queue from x−1 to x: ring slot x → due set, the
// timers targeting x+RingSlots tier 2 → ring, those targeting the new
// first height of tier 3's range tier 3 → tier 2, and the basefee update.
// Each move is guarded by the height counter, so a height nobody targets
// costs one counter read per tier boundary and no scan: per-block work is
// flat, with no epoch-boundary burst.
func (q *Queue) advance(kv KV, m *meta, x uint64) error {
	n, err := getU64(kv, heightKey(x))
	if err != nil {
		return err
	}
	if n > 0 {
		keys, err := q.heightKeys(kv, ringSlotPrefix(byte(x%RingSlots)), x, n)
		if err != nil {
			return fmt.Errorf("timers: dequeue height %d: %w", x, err)
		}
		for _, k := range keys {
			id, _ := idFromKeyTail(k)
			kv.Delete(k)
			kv.Set(dueKey(x, id), be8(x))
		}
		if m.Tier1 < n {
			return fmt.Errorf("%w: tier 1 count underflow", ErrCorrupt)
		}
		m.Tier1 -= n
		m.Due += n
		kv.Delete(heightKey(x))
	}
	prevRing, prevFar := ringEnd(m.Cursor), farStart(m.Cursor)
	m.Cursor = x
	// Tier 2 → ring: the height the ring's window just reached.
	if h := ringEnd(x); h > prevRing {
		if err := q.promote(kv, m, h, key(tableEpoch, be8(h/EpochLength), be8(h)), func(k []byte, id types.Hash) {
			kv.Set(ringKey(byte(h%RingSlots), id), be8(h))
		}, &m.Tier2, &m.Tier1); err != nil {
			return err
		}
	}
	// Tier 3 → tier 2: the height tier 2's window just reached.
	if h := farStart(x); h > prevFar {
		if err := q.promote(kv, m, h, key(tableFar, be8(h/EpochLength), be8(h)), func(k []byte, id types.Hash) {
			nk := append([]byte(nil), k...)
			nk[1] = tableEpoch
			kv.Set(nk, be8(h))
		}, &m.Tier3, &m.Tier2); err != nil {
			return err
		}
	}
	m.Basefee = q.p.NextBasefee(m.Basefee, m.depth())
	return nil
}

// promote moves every timer targeting height h out of the index under
// prefix (put writes its new index entry) and moves the count from one
// tier to the other.
func (q *Queue) promote(kv KV, m *meta, h uint64, prefix []byte, put func(k []byte, id types.Hash), from, to *uint64) error {
	n, err := getU64(kv, heightKey(h))
	if err != nil || n == 0 {
		return err
	}
	keys, err := q.heightKeys(kv, prefix, h, n)
	if err != nil {
		return fmt.Errorf("timers: promote height %d: %w", h, err)
	}
	for _, k := range keys {
		id, _ := idFromKeyTail(k)
		kv.Delete(k)
		put(k, id)
	}
	if *from < n {
		return fmt.Errorf("%w: tier count underflow promoting height %d", ErrCorrupt, h)
	}
	*from -= n
	*to += n
	return nil
}

// heightKeys returns the n index keys under prefix, all of which must hold
// target h.
func (q *Queue) heightKeys(kv KV, prefix []byte, h, n uint64) ([][]byte, error) {
	var keys [][]byte
	err := kv.Scan(prefix, func(k, v []byte) error {
		if len(v) != 8 || binary.BigEndian.Uint64(v) != h {
			return fmt.Errorf("%w: index %x holds a timer for another height", ErrCorrupt, prefix)
		}
		keys = append(keys, append([]byte(nil), k...))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if uint64(len(keys)) != n {
		return nil, fmt.Errorf("%w: height %d counts %d timers, index %x holds %d", ErrCorrupt, h, n, prefix, len(keys))
	}
	return keys, nil
}

func (q *Queue) dueTimer(kv KV, id types.Hash, height uint64) (Timer, meta, error) {
	t, ok, err := q.getRecord(kv, id)
	if err != nil {
		return Timer{}, meta{}, err
	}
	if !ok {
		return Timer{}, meta{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	m, _, err := q.loadMeta(kv)
	if err != nil {
		return Timer{}, meta{}, err
	}
	if height != m.Cursor {
		return Timer{}, meta{}, fmt.Errorf("%w: height %d, queue is at %d", ErrInvalid, height, m.Cursor)
	}
	if t.Target > m.Cursor {
		return Timer{}, meta{}, fmt.Errorf("%w: %s targets %d, queue at %d", ErrNotDue, id, t.Target, m.Cursor)
	}
	return t, m, nil
}

// MarkFired records that due timer id ran (or was attempted) in the block
// at height, which must be the height Due last advanced to. A one-shot
// timer is deleted and its deposit returned for refund. An interval timer
// is re-enqueued at the first T + j×Interval (j ≥ 1) above height, T being
// the target it fired for: missed occurrences are skipped, the phase is
// kept; refund is zero. An interval that would overflow uint64 ends like a
// one-shot.
func (q *Queue) MarkFired(kv KV, id types.Hash, height uint64) (refund *big.Int, err error) {
	t, m, err := q.dueTimer(kv, id, height)
	if err != nil {
		return nil, err
	}
	next, ok := nextOccurrence(t.Target, t.Interval, height)
	if !ok {
		if err := q.finish(kv, &m, &t); err != nil {
			return nil, err
		}
		saveMeta(kv, &m)
		return t.Deposit, nil
	}
	if err := q.unlink(kv, &m, &t); err != nil {
		return nil, err
	}
	t.Target, t.Deferrals = next, 0
	if err := q.insert(kv, &m, &t); err != nil {
		return nil, err
	}
	if err := putRecord(kv, &t); err != nil {
		return nil, err
	}
	saveMeta(kv, &m)
	return new(big.Int), nil
}

// nextOccurrence is the smallest target + j×interval > height, j ≥ 1.
func nextOccurrence(target, interval, height uint64) (uint64, bool) {
	if interval == 0 {
		return 0, false
	}
	j := uint64(1)
	if height >= target {
		j = (height-target)/interval + 1
	}
	hi, lo := bits.Mul64(j, interval)
	if hi != 0 {
		return 0, false
	}
	next, carry := bits.Add64(target, lo, 0)
	if carry != 0 {
		return 0, false
	}
	return next, true
}

// Defer records that due timer id was not run in the block at height; it
// stays due and its deferral count (the anti-starvation boost) grows.
func (q *Queue) Defer(kv KV, id types.Hash, height uint64) error {
	t, _, err := q.dueTimer(kv, id, height)
	if err != nil {
		return err
	}
	t.Deferrals++
	return putRecord(kv, &t)
}
