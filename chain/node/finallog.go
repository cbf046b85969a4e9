package node

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
)

// ConsensusDBPath is the node's log of finalized consensus blocks.
func ConsensusDBPath(home string) string { return filepath.Join(home, "data", "consensus.db") }

// WALPath is the consensus write-ahead log (votes, timeouts and proposals
// this validator signed). Never copy a validator home without it.
func WALPath(home string) string { return filepath.Join(home, "data", "consensus.wal") }

// finalRecord is a finalized consensus block as the node keeps it: the
// block with its payload, the QC certifying it and, for blocks the
// finality rule fired for, the proof (the certified child in the next
// round) that lets a syncing peer check finality.
type finalRecord struct {
	_     struct{} `cbor:",toarray"`
	Block consensus.Block
	QC    consensus.QC
	Proof *consensus.FinalityProof
}

var bucketFinal = []byte("finalized") // big-endian height → finalRecord

// finalLog stores finalized consensus blocks, one bbolt transaction per
// batch. A record is written before its block is executed and committed to
// the chain store, so the log's tip is never behind the store's head: on
// restart the node executes whatever the log holds past the head.
type finalLog struct {
	db *bbolt.DB
}

func openFinalLog(path string) (*finalLog, error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("node: open %s: %w", path, err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketFinal)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("node: init %s: %w", path, err)
	}
	return &finalLog{db: db}, nil
}

func (l *finalLog) Close() error { return l.db.Close() }

func be8(h uint64) []byte { return binary.BigEndian.AppendUint64(nil, h) }

// Put appends records, which must continue the log in height order.
func (l *finalLog) Put(recs ...finalRecord) error {
	if len(recs) == 0 {
		return nil
	}
	return l.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketFinal)
		k, _ := b.Cursor().Last()
		for _, r := range recs {
			if k != nil && binary.BigEndian.Uint64(k)+1 != r.Block.Height {
				return fmt.Errorf("node: finalized block %d does not follow %d", r.Block.Height, binary.BigEndian.Uint64(k))
			}
			if k == nil && r.Block.Height != 1 {
				return fmt.Errorf("node: first finalized block has height %d", r.Block.Height)
			}
			k = be8(r.Block.Height)
			if err := b.Put(k, codec.MustMarshal(&r)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Get returns the record at height.
func (l *finalLog) Get(height uint64) (*finalRecord, error) {
	var r *finalRecord
	err := l.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketFinal).Get(be8(height))
		if v == nil {
			return errNoRecord
		}
		r = new(finalRecord)
		return codec.Unmarshal(v, r)
	})
	return r, err
}

var errNoRecord = errors.New("node: no finalized record at that height")

// Last returns the highest record, or nil when the log is empty.
func (l *finalLog) Last() (*finalRecord, error) {
	var r *finalRecord
	err := l.db.View(func(tx *bbolt.Tx) error {
		_, v := tx.Bucket(bucketFinal).Cursor().Last()
		if v == nil {
			return nil
		}
		r = new(finalRecord)
		return codec.Unmarshal(v, r)
	})
	return r, err
}

// Range returns records from height on, up to max of them and about
// maxBytes of payload, ending at the first record with a finality proof
// (so a peer can check the batch); nil if the log has nothing there.
func (l *finalLog) Range(from uint64, max, maxBytes int) ([]finalRecord, error) {
	var out []finalRecord
	err := l.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketFinal).Cursor()
		size := 0
		for k, v := c.Seek(be8(from)); k != nil; k, v = c.Next() {
			var r finalRecord
			if err := codec.Unmarshal(v, &r); err != nil {
				return err
			}
			out = append(out, r)
			size += len(v)
			if r.Proof != nil && (len(out) >= max || size >= maxBytes) {
				return nil
			}
		}
		// The tip always carries a proof; a log without one is cut back
		// to its last proven record.
		for len(out) > 0 && out[len(out)-1].Proof == nil {
			out = out[:len(out)-1]
		}
		return nil
	})
	return out, err
}

var bucketMeta = []byte("meta")

func minRoundKey(epoch uint64) []byte { return append([]byte("min_round/"), be8(epoch)...) }

// MinRound returns the first round recorded for an epoch's core (0: none).
func (l *finalLog) MinRound(epoch uint64) (uint64, error) {
	var r uint64
	err := l.db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket(bucketMeta); b != nil {
			if v := b.Get(minRoundKey(epoch)); len(v) == 8 {
				r = binary.BigEndian.Uint64(v)
			}
		}
		return nil
	})
	return r, err
}

// SetMinRound records the first round of an epoch's core.
func (l *finalLog) SetMinRound(epoch, round uint64) error {
	return l.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		return b.Put(minRoundKey(epoch), be8(round))
	})
}

// PutBase starts an empty log at a record of any height: the block a
// state-synced node's chain starts from (statesync.go).
func (l *finalLog) PutBase(r finalRecord) error {
	return l.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketFinal)
		if k, _ := b.Cursor().Last(); k != nil {
			return fmt.Errorf("node: the finalized log is not empty (block %d)", binary.BigEndian.Uint64(k))
		}
		return b.Put(be8(r.Block.Height), codec.MustMarshal(&r))
	})
}
