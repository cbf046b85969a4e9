package timers

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"math/bits"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// KV is the slice of chain state the queue needs; *state.Overlay satisfies
// it. Get returns found=false for a missing key. Scan calls fn for every key
// starting with prefix in ascending byte order; fn must not keep key or
// value. The queue never writes from inside a Scan callback.
type KV interface {
	Get(key []byte) (value []byte, found bool, err error)
	Set(key, value []byte)
	Delete(key []byte)
	Scan(prefix []byte, fn func(key, value []byte) error) error
}

// Queue is the timer scheduler. It holds only its parameters; all state is
// in the KV passed to each call, so one Queue serves every block. Methods
// are deterministic functions of (KV contents, arguments, Params).
type Queue struct {
	p Params
}

// New returns a queue with parameters p.
func New(p Params) (*Queue, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Queue{p: p}, nil
}

// Params returns the queue's parameters.
func (q *Queue) Params() Params { return q.p }

// Charge is what scheduling costs the owner: Deposit is held by the
// protocol and refunded on cancel (or when a one-shot timer fires); Burn is
// burned and never refunded. The caller moves the funds.
type Charge struct {
	Deposit *big.Int `json:"deposit"`
	Burn    *big.Int `json:"burn"`
}

// Stats are the queue's counters.
type Stats struct {
	// Height is the last height Due has advanced to.
	Height uint64 `json:"height"`
	// Basefee is the current timer basefee.
	Basefee uint64 `json:"basefee"`
	// Pending timers per tier, and due timers not yet fired.
	Tier1 uint64 `json:"tier1"`
	Tier2 uint64 `json:"tier2"`
	Tier3 uint64 `json:"tier3"`
	Due   uint64 `json:"due"`
}

// Depth is the number of pending timers in all tiers and the due set.
func (s Stats) Depth() uint64 { return s.Tier1 + s.Tier2 + s.Tier3 + s.Due }

// meta is the queue's one header record.
type meta struct {
	_       struct{} `cbor:",toarray"`
	Cursor  uint64   // last height advanced to
	Basefee uint64
	Tier1   uint64
	Tier2   uint64
	Tier3   uint64
	Due     uint64
}

type ownerRecord struct {
	_       struct{} `cbor:",toarray"`
	Pending uint64   // timers of this owner not yet finished
	Nonce   uint64   // next timer nonce; never decreases
}

type tier uint8

const (
	tierDue tier = iota
	tierRing
	tierEpoch
	tierFar
)

func (m *meta) count(t tier) *uint64 {
	switch t {
	case tierRing:
		return &m.Tier1
	case tierEpoch:
		return &m.Tier2
	case tierFar:
		return &m.Tier3
	}
	return &m.Due
}

func (m *meta) depth() uint64 { return m.Tier1 + m.Tier2 + m.Tier3 + m.Due }

// ringEnd and farStart bound the tiers when the queue has advanced to
// cursor: the ring holds targets in (cursor, ringEnd], tier 2 those in
// (ringEnd, farStart], tier 3 the rest. Both saturate at 2^64−1.
func ringEnd(cursor uint64) uint64 { return satAdd(cursor, RingSlots) }
func farStart(cursor uint64) uint64 {
	return satAdd(cursor, RingSlots+EpochBuckets*EpochLength)
}

func satAdd(a, b uint64) uint64 {
	if s, carry := bits.Add64(a, b, 0); carry == 0 {
		return s
	}
	return ^uint64(0)
}

// locate returns where a timer with this target lives when the queue has
// advanced to cursor: targets ≤ cursor are due; the next RingSlots heights
// are in the ring (so ring slots target mod RingSlots never collide); the
// EpochBuckets×EpochLength heights after them in tier 2; the rest in tier 3.
// Tier 2 and 3 keys lead with the target's scheduler epoch, then the target.
func locate(target, cursor uint64, id types.Hash) (tier, []byte) {
	switch {
	case target <= cursor:
		return tierDue, dueKey(target, id)
	case target <= ringEnd(cursor):
		return tierRing, ringKey(byte(target%RingSlots), id)
	case target <= farStart(cursor):
		return tierEpoch, epochKey(target/EpochLength, target, id)
	default:
		return tierFar, farKey(target/EpochLength, target, id)
	}
}

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

// Quote returns what owner would pay to schedule a timer at target now,
// without changing state.
func (q *Queue) Quote(kv KV, owner types.Address, target uint64) (Charge, error) {
	m, _, err := q.loadMeta(kv)
	if err != nil {
		return Charge{}, err
	}
	o, err := getOwner(kv, owner)
	if err != nil {
		return Charge{}, err
	}
	if !q.p.CanAdd(o.Pending) {
		return Charge{}, fmt.Errorf("%w: %s has %d", ErrCapReached, owner, o.Pending)
	}
	return q.quote(kv, &m, o.Pending, target)
}

func (q *Queue) quote(kv KV, m *meta, pending, target uint64) (Charge, error) {
	k, err := getU64(kv, heightKey(target))
	if err != nil {
		return Charge{}, err
	}
	burn, ok := q.p.Surcharge(m.Basefee, k+1)
	if !ok {
		return Charge{}, fmt.Errorf("%w: %d timers already target height %d", ErrHeightFull, k, target)
	}
	return Charge{Deposit: q.p.Deposit(pending), Burn: burn}, nil
}

// Schedule enqueues a timer. The caller fills Owner, Handler, Data, Target,
// Interval, GBA and CreatedAt (the height of the executing block); Schedule
// derives ID and Deposit and zeroes Deferrals. Target must be above
// CreatedAt, and CreatedAt must not be below the height the queue has
// advanced to. For set_interval(every), pass Target = CreatedAt + every
// and Interval = every.
//
// It returns the id and the Charge the caller must collect from the owner
// (deposit held, burn burned). Cost: a constant number of KV operations in
// every tier.
func (q *Queue) Schedule(kv KV, t Timer) (types.Hash, Charge, error) {
	t = t.Clone()
	if len(t.Data) == 0 {
		t.Data = nil
	}
	t.Deferrals = 0
	if err := checkLimits(&t, q.p); err != nil {
		return types.Hash{}, Charge{}, err
	}
	if t.Target <= t.CreatedAt {
		return types.Hash{}, Charge{}, fmt.Errorf("%w: target %d not after current height %d", ErrInvalid, t.Target, t.CreatedAt)
	}
	m, found, err := q.loadMeta(kv)
	if err != nil {
		return types.Hash{}, Charge{}, err
	}
	if !found {
		m.Cursor = t.CreatedAt - min(t.CreatedAt, 1)
	}
	if t.CreatedAt < m.Cursor {
		return types.Hash{}, Charge{}, fmt.Errorf("%w: created at %d, queue is at %d", ErrInvalid, t.CreatedAt, m.Cursor)
	}
	o, err := getOwner(kv, t.Owner)
	if err != nil {
		return types.Hash{}, Charge{}, err
	}
	if !q.p.CanAdd(o.Pending) {
		return types.Hash{}, Charge{}, fmt.Errorf("%w: %s has %d", ErrCapReached, t.Owner, o.Pending)
	}
	c, err := q.quote(kv, &m, o.Pending, t.Target)
	if err != nil {
		return types.Hash{}, Charge{}, err
	}
	t.ID = TimerID(t.Owner, o.Nonce, t.Target, t.Handler)
	t.Deposit = new(big.Int).Set(c.Deposit)
	if err := checkRecord(&t); err != nil {
		return types.Hash{}, Charge{}, err
	}
	if _, exists, err := kv.Get(RecordKey(t.ID)); err != nil {
		return types.Hash{}, Charge{}, fmt.Errorf("timers: read timer %s: %w", t.ID, err)
	} else if exists {
		return types.Hash{}, Charge{}, fmt.Errorf("%w: id %s already in use", ErrCorrupt, t.ID)
	}
	if err := putRecord(kv, &t); err != nil {
		return types.Hash{}, Charge{}, err
	}
	if err := q.insert(kv, &m, &t); err != nil {
		return types.Hash{}, Charge{}, err
	}
	kv.Set(ownedKey(t.Owner, t.ID), ownedMarker())
	o.Pending++
	o.Nonce++
	putOwner(kv, t.Owner, o)
	saveMeta(kv, &m)
	return t.ID, c, nil
}

// insert adds the index entry of a not-yet-due timer and counts it.
func (q *Queue) insert(kv KV, m *meta, t *Timer) error {
	tr, k := locate(t.Target, m.Cursor, t.ID)
	if tr == tierDue {
		return fmt.Errorf("%w: target %d is not after queue height %d", ErrInvalid, t.Target, m.Cursor)
	}
	kv.Set(k, be8(t.Target))
	*m.count(tr)++
	return addHeight(kv, t.Target, +1)
}

// unlink removes the index entry of a timer (wherever it is) and uncounts it.
func (q *Queue) unlink(kv KV, m *meta, t *Timer) error {
	tr, k := locate(t.Target, m.Cursor, t.ID)
	if err := mustHave(kv, k, t.ID); err != nil {
		return err
	}
	kv.Delete(k)
	c := m.count(tr)
	if *c == 0 {
		return fmt.Errorf("%w: tier %d count underflow", ErrCorrupt, tr)
	}
	*c--
	if tr != tierDue {
		return addHeight(kv, t.Target, -1)
	}
	return nil
}

// finish deletes a timer for good: record, index, owner index and count.
func (q *Queue) finish(kv KV, m *meta, t *Timer) error {
	if err := q.unlink(kv, m, t); err != nil {
		return err
	}
	kv.Delete(RecordKey(t.ID))
	kv.Delete(ownedKey(t.Owner, t.ID))
	o, err := getOwner(kv, t.Owner)
	if err != nil {
		return err
	}
	if o.Pending == 0 {
		return fmt.Errorf("%w: owner %s pending underflow", ErrCorrupt, t.Owner)
	}
	o.Pending--
	putOwner(kv, t.Owner, o)
	return nil
}

func (q *Queue) owned(kv KV, owner types.Address, id types.Hash) (Timer, meta, error) {
	t, ok, err := q.getRecord(kv, id)
	if err != nil {
		return Timer{}, meta{}, err
	}
	if !ok {
		return Timer{}, meta{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if t.Owner != owner {
		return Timer{}, meta{}, fmt.Errorf("%w: %s", ErrNotOwner, id)
	}
	m, _, err := q.loadMeta(kv)
	return t, m, err
}

// Cancel removes owner's timer id, pending or due, one-shot or interval, and
// returns its deposit for the caller to refund. Burned surcharges are not
// refunded.
func (q *Queue) Cancel(kv KV, owner types.Address, id types.Hash) (*big.Int, error) {
	t, m, err := q.owned(kv, owner, id)
	if err != nil {
		return nil, err
	}
	if err := q.finish(kv, &m, &t); err != nil {
		return nil, err
	}
	saveMeta(kv, &m)
	return t.Deposit, nil
}

// Reschedule moves owner's timer id to a new target height (keeping its id
// and deposit; deferrals reset). now is the executing block's height. It
// returns the Charge: no deposit, and the same-height surcharge at the new
// target, to be burned.
func (q *Queue) Reschedule(kv KV, owner types.Address, id types.Hash, target, now uint64) (Charge, error) {
	t, m, err := q.owned(kv, owner, id)
	if err != nil {
		return Charge{}, err
	}
	if target <= now || now < m.Cursor {
		return Charge{}, fmt.Errorf("%w: reschedule to %d at height %d (queue at %d)", ErrInvalid, target, now, m.Cursor)
	}
	if err := q.unlink(kv, &m, &t); err != nil {
		return Charge{}, err
	}
	c, err := q.quote(kv, &m, 0, target)
	if err != nil {
		return Charge{}, err
	}
	c.Deposit = new(big.Int)
	t.Target, t.Deferrals = target, 0
	if err := q.insert(kv, &m, &t); err != nil {
		return Charge{}, err
	}
	if err := putRecord(kv, &t); err != nil {
		return Charge{}, err
	}
	saveMeta(kv, &m)
	return c, nil
}

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
