package store

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"go.etcd.io/bbolt"
)

// eventPos orders events: height, then transaction index, then event index.
type eventPos struct {
	Height uint64
	Tx     uint32
	Event  uint32
}

func (p eventPos) bytes() []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, p.Height)
	binary.BigEndian.PutUint32(b[8:], p.Tx)
	binary.BigEndian.PutUint32(b[12:], p.Event)
	return b
}

func parsePos(b []byte) eventPos {
	return eventPos{Height: binary.BigEndian.Uint64(b), Tx: binary.BigEndian.Uint32(b[8:]), Event: binary.BigEndian.Uint32(b[12:])}
}

// EventQuery selects events. Zero values mean "any"; ToHeight 0 means the
// head. Cursor resumes a previous page.
type EventQuery struct {
	Emitter    *types.Address
	Topic      string
	FromHeight uint64
	ToHeight   uint64
	Limit      int
	Cursor     string
}

// EventRecord is one event with its position in the ledger.
type EventRecord struct {
	Height  uint64      `json:"height"`
	TxIndex uint32      `json:"tx_index"`
	Index   uint32      `json:"index"`
	TxHash  types.Hash  `json:"tx_hash"`
	Event   types.Event `json:"event"`
}

// MaxEventPage caps the page size of an event query.
const MaxEventPage = 1000

// ErrBadCursor is returned for a cursor this store did not produce.
var ErrBadCursor = fmt.Errorf("invalid cursor")

// Events returns one page of matching events in ledger order and the cursor
// of the next page ("" when there is none).
func (v *View) Events(q EventQuery) ([]EventRecord, string, error) {
	if q.Limit <= 0 || q.Limit > MaxEventPage {
		q.Limit = 100
	}
	to := q.ToHeight
	if to == 0 || to > v.head.Height {
		to = v.head.Height
	}
	start := eventPos{Height: q.FromHeight}
	if q.Cursor != "" {
		b, err := hex.DecodeString(q.Cursor)
		if err != nil || len(b) != 16 {
			return nil, "", fmt.Errorf("%w %q", ErrBadCursor, q.Cursor)
		}
		start = parsePos(b)
	}
	var (
		bucket *bbolt.Bucket
		prefix []byte
	)
	switch {
	case q.Emitter != nil:
		bucket, prefix = v.tx.Bucket(bucketEvEmit), append([]byte(nil), q.Emitter[:]...)
	case q.Topic != "":
		th := topicHash(q.Topic)
		bucket, prefix = v.tx.Bucket(bucketEvTopic), th[:]
	}
	var (
		out       []EventRecord
		receipts  = map[uint64][]*types.Receipt{}
		nextAfter *eventPos
	)
	load := func(p eventPos) (*types.Receipt, error) {
		rs, ok := receipts[p.Height]
		if !ok {
			var err error
			if rs, err = v.Receipts(p.Height); err != nil {
				return nil, err
			}
			receipts[p.Height] = rs
		}
		if int(p.Tx) >= len(rs) {
			return nil, fmt.Errorf("event index points past receipts at height %d", p.Height)
		}
		return rs[p.Tx], nil
	}
	add := func(p eventPos, r *types.Receipt) bool {
		if int(p.Event) >= len(r.Events) {
			return true
		}
		ev := r.Events[p.Event]
		if q.Emitter != nil && ev.Emitter != *q.Emitter {
			return true
		}
		if q.Topic != "" && ev.Topic != q.Topic {
			return true
		}
		if len(out) == q.Limit {
			nextAfter = &p
			return false
		}
		out = append(out, EventRecord{Height: p.Height, TxIndex: p.Tx, Index: p.Event, TxHash: r.TxHash, Event: ev})
		return true
	}
	if bucket != nil {
		c := bucket.Cursor()
		for k, _ := c.Seek(append(append([]byte(nil), prefix...), start.bytes()...)); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			p := parsePos(k[len(prefix):])
			if p.Height > to {
				break
			}
			r, err := load(p)
			if err != nil {
				return nil, "", err
			}
			if !add(p, r) {
				break
			}
		}
	} else {
	scan:
		for h := start.Height; h <= to; h++ {
			rs, err := v.Receipts(h)
			if err != nil {
				return nil, "", err
			}
			for i, r := range rs {
				for j := range r.Events {
					p := eventPos{Height: h, Tx: uint32(i), Event: uint32(j)}
					if h == start.Height && (p.Tx < start.Tx || (p.Tx == start.Tx && p.Event < start.Event)) {
						continue
					}
					if !add(p, r) {
						break scan
					}
				}
			}
		}
	}
	next := ""
	if nextAfter != nil {
		next = hex.EncodeToString(nextAfter.bytes())
	}
	return out, next, nil
}

// RebuildIndexes drops the auxiliary indexes and rebuilds them from the
// ledger (blocks and receipts), which is the source of truth.
func (s *Store) RebuildIndexes() error {
	return s.db.Update(func(tx *bbolt.Tx) error {
		for _, b := range [][]byte{bucketHashes, bucketTxIndex, bucketEvEmit, bucketEvTopic} {
			if err := tx.DeleteBucket(b); err != nil {
				return fmt.Errorf("store: drop %s: %w", b, err)
			}
			if _, err := tx.CreateBucket(b); err != nil {
				return fmt.Errorf("store: create %s: %w", b, err)
			}
		}
		head, err := readHead(tx)
		if err != nil {
			return err
		}
		v := &View{tx: tx, head: head}
		for h := uint64(0); h <= head.Height; h++ {
			blk, err := v.Block(h)
			if err != nil {
				return err
			}
			rs, err := v.Receipts(h)
			if err != nil {
				return err
			}
			if err := indexBlock(tx, blk, rs); err != nil {
				return fmt.Errorf("store: index block %d: %w", h, err)
			}
		}
		return nil
	})
}
