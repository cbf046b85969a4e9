package timers

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

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
