package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/relay/wire"
	bolt "go.etcd.io/bbolt"
)

// Volume heads (the relay side of CBFS metadata commits, wire.OpCommit):
// bucket "heads" maps a volume id to the encoding of its current head;
// bucket "headlog" maps volume id || big-endian version to the encoded
// wire.LogEntry of every head accepted (with its change-set body). A new
// head and its log entry are written in one bbolt transaction, which
// fsyncs before the commit is acknowledged.

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
// body, if check accepts the current head (nil when there is none). check
// runs inside the write transaction, so the compare-and-swap is atomic.
func (s *Store) CommitHead(vol [32]byte, version uint64, head, body []byte, check func(cur []byte) error) error {
	entry, err := wire.Marshal(&wire.LogEntry{Head: head, Body: body})
	if err != nil {
		return fmt.Errorf("store: encode log entry: %w", err)
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		hb, err := tx.CreateBucketIfNotExists(bucketHeads)
		if err != nil {
			return err
		}
		lb, err := tx.CreateBucketIfNotExists(bucketLog)
		if err != nil {
			return err
		}
		if err := check(hb.Get(vol[:])); err != nil {
			return err
		}
		if err := hb.Put(vol[:], head); err != nil {
			return err
		}
		return lb.Put(logKey(vol, version), entry)
	})
}

// Log returns the log entries of vol for versions from..to (inclusive), at
// most max of them, oldest first.
func (s *Store) Log(vol [32]byte, from, to uint64, max int) ([]wire.LogEntry, error) {
	var out []wire.LogEntry
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLog)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		end := logKey(vol, to)
		for k, v := c.Seek(logKey(vol, from)); k != nil && len(k) == 40 && string(k[:32]) == string(vol[:]) && string(k) <= string(end); k, v = c.Next() {
			var e wire.LogEntry
			if err := wire.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("store: log entry %x: %w", k, err)
			}
			out = append(out, e)
			if len(out) >= max {
				break
			}
		}
		return nil
	})
	return out, err
}
