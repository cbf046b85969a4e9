package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/cowboy-foundation/cowboy/relay/wire"
	bolt "go.etcd.io/bbolt"
)

// Volume heads (the relay side of CBFS metadata commits, wire.OpCommit).
//
// A head is durable once it is appended to the head log (heads.log, one
// checksummed record per head, see headlog.go) and that append is
// fdatasynced: one disk sync per head. The bbolt index keeps the same data
// for reading and is updated lazily, a batch of logged heads in one
// transaction (every flushRecords heads or flushBytes of log, and at Close
// and Open), after which the log is emptied. Until then the heads and log
// entries not yet in bbolt are served from memory. At Open the log is
// replayed into bbolt up to its first record that fails its checksum (a torn
// tail: never acknowledged).
//
// bbolt layout: bucket "heads" maps a volume id to the encoding of its
// current head; bucket "headlog" maps volume id || big-endian version to the
// encoded wire.LogEntry of every head accepted (with its change-set body).

var (
	bucketHeads = []byte("heads")
	bucketLog   = []byte("headlog")
)

// ErrHeadConflict: a head update does not follow the stored head.
var ErrHeadConflict = errors.New("store: head changed (version conflict)")

func logKey(vol [32]byte, version uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), vol[:]...), version)
}

// Head returns the encoding of vol's current head.
func (s *Store) Head(vol [32]byte) ([]byte, error) {
	if s.heads != nil {
		s.heads.state.RLock()
		p := s.heads.pending[vol]
		var head []byte
		if p != nil {
			head = slices.Clone(p.head)
		}
		s.heads.state.RUnlock()
		if p != nil {
			return head, nil
		}
		// Not in memory: in bbolt (a flush writes bbolt before it empties
		// the memory).
	}
	return s.boltHead(vol)
}

func (s *Store) boltHead(vol [32]byte) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketHeads)
		if b == nil {
			return ErrNotFound
		}
		v := b.Get(vol[:])
		if v == nil {
			return ErrNotFound
		}
		out = append([]byte(nil), v...)
		return nil
	})
	return out, err
}

// CommitHead makes head (of the given version) vol's head and logs it with
// body, if check accepts the current head (nil when there is none). Check,
// append and sync happen under one lock, so the compare-and-swap is atomic;
// the head is durable when CommitHead returns nil.
func (s *Store) CommitHead(vol [32]byte, version uint64, head, body []byte, check func(cur []byte) error) error {
	entry, err := wire.Marshal(&wire.LogEntry{Head: head, Body: body})
	if err != nil {
		return fmt.Errorf("store: encode log entry: %w", err)
	}
	hl := s.heads
	if hl == nil {
		return errors.New("store: opened read-only")
	}
	hl.mu.Lock()
	defer hl.mu.Unlock()
	if hl.f == nil {
		return errors.New("store: closed")
	}
	hl.state.RLock()
	p := hl.pending[vol]
	hl.state.RUnlock()
	var cur []byte
	if p != nil {
		cur = p.head // changes only under hl.mu, which we hold
	} else if cur, err = s.boltHead(vol); errors.Is(err, ErrNotFound) {
		cur = nil
	} else if err != nil {
		return err
	}
	if err := check(cur); err != nil {
		return err
	}
	rec := headRecord{vol: vol, version: version, head: head, entry: entry}
	if err := hl.append(rec); err != nil {
		return err
	}
	hl.add(rec)
	if hl.due() {
		if err := s.flushHeads(); err != nil {
			// The head is durable in the log; bbolt catches up on the
			// next flush or at Open.
			slog.Warn("store: head index flush failed", "err", err)
		}
	}
	return nil
}

// Log returns the log entries of vol for versions from..to (inclusive), at
// most max of them, oldest first.
func (s *Store) Log(vol [32]byte, from, to uint64, max int) ([]wire.LogEntry, error) {
	var pend []headRecord
	if s.heads != nil {
		// Held while both sources are read: the records in memory are not
		// changed meanwhile, and a flush (which writes bbolt first) cannot
		// empty them.
		s.heads.state.RLock()
		defer s.heads.state.RUnlock()
		if p := s.heads.pending[vol]; p != nil {
			pend = p.log
		}
	}
	type versioned struct {
		version uint64
		entry   []byte
	}
	var stored []versioned
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLog)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		end := logKey(vol, to)
		for k, v := c.Seek(logKey(vol, from)); k != nil && len(k) == 40 && string(k[:32]) == string(vol[:]) && string(k) <= string(end); k, v = c.Next() {
			if len(stored) >= max {
				break
			}
			stored = append(stored, versioned{binary.BigEndian.Uint64(k[32:]), slices.Clone(v)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Merge with the entries not yet in bbolt (usually all newer); on the
	// same version the newer record wins.
	merged := make([]versioned, 0, len(stored)+len(pend))
	i := 0
	for _, r := range pend {
		if r.version < from || r.version > to {
			continue
		}
		for i < len(stored) && stored[i].version < r.version {
			merged = append(merged, stored[i])
			i++
		}
		if i < len(stored) && stored[i].version == r.version {
			i++
		}
		merged = append(merged, versioned{r.version, r.entry})
	}
	merged = append(merged, stored[i:]...)
	out := make([]wire.LogEntry, 0, min(len(merged), max))
	for _, m := range merged[:min(len(merged), max)] {
		var e wire.LogEntry
		if err := wire.Unmarshal(m.entry, &e); err != nil {
			return nil, fmt.Errorf("store: log entry %x v%d: %w", vol[:8], m.version, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// flushHeads writes the heads and log entries held in memory to bbolt in one
// transaction, then empties the head log. Caller holds s.heads.mu (not
// state).
func (s *Store) flushHeads() error {
	hl := s.heads
	if len(hl.pending) == 0 && hl.size == 0 {
		return nil
	}
	if err := s.applyHeads(hl.pendingRecords()); err != nil {
		return err
	}
	hl.reset()
	return hl.truncate()
}

// applyHeads writes records, in order, to bbolt in one transaction.
// Re-applying records already applied is harmless: the last record of a
// volume sets its head.
func (s *Store) applyHeads(recs []headRecord) error {
	if len(recs) == 0 {
		return nil
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		hb, err := tx.CreateBucketIfNotExists(bucketHeads)
		if err != nil {
			return err
		}
		lb, err := tx.CreateBucketIfNotExists(bucketLog)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := hb.Put(r.vol[:], r.head); err != nil {
				return err
			}
			if err := lb.Put(logKey(r.vol, r.version), r.entry); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: index heads: %w", err)
	}
	return nil
}
