package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/cowboy-foundation/cowboy/relay/wire"
	bolt "go.etcd.io/bbolt"
)

// benchHead is a stand-in head record of a realistic size (~300 bytes)
// carrying its version, so checks can follow it.
func benchHead(v uint64) []byte {
	h := bytes.Repeat([]byte{0xab}, 300)
	binary.BigEndian.PutUint64(h, v)
	return h
}

// BenchmarkCommitHead measures one durable head write (head + ~1.5 KiB
// change set) as the relay makes it for every close on a mount, with
// `writers` volumes committing concurrently (six relays on one disk each
// commit the same head; one relay sees one writer per volume).
func BenchmarkCommitHead(b *testing.B) {
	body := bytes.Repeat([]byte{0xcd}, 1500)
	for _, writers := range []int{1, 6} {
		b.Run(fmt.Sprintf("store/writers=%d", writers), func(b *testing.B) {
			s, err := Open(b.TempDir(), 0, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			benchWriters(b, writers, func(vol [32]byte, v uint64) error {
				return s.CommitHead(vol, v, benchHead(v), body, func([]byte) error { return nil })
			})
		})
		// The bbolt-only write of the previous design (one Update, two
		// syncs, per head), and the alternative measured for the record:
		// bbolt group commit.
		b.Run(fmt.Sprintf("boltupdate/writers=%d", writers), func(b *testing.B) {
			s, err := Open(b.TempDir(), 0, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			benchWriters(b, writers, func(vol [32]byte, v uint64) error {
				return s.applyHeads([]headRecord{{vol: vol, version: v, head: benchHead(v), entry: body}})
			})
		})
		b.Run(fmt.Sprintf("boltbatch/writers=%d", writers), func(b *testing.B) {
			s, err := Open(b.TempDir(), 0, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			benchWriters(b, writers, func(vol [32]byte, v uint64) error {
				entry, err := wire.Marshal(&wire.LogEntry{Head: benchHead(v), Body: body})
				if err != nil {
					return err
				}
				return s.db.Batch(func(tx *bolt.Tx) error {
					hb, err := tx.CreateBucketIfNotExists(bucketHeads)
					if err != nil {
						return err
					}
					lb, err := tx.CreateBucketIfNotExists(bucketLog)
					if err != nil {
						return err
					}
					if err := hb.Put(vol[:], benchHead(v)); err != nil {
						return err
					}
					return lb.Put(logKey(vol, v), entry)
				})
			})
		})
	}
}

func benchWriters(b *testing.B, writers int, commit func(vol [32]byte, v uint64) error) {
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := (b.N + writers - 1) / writers
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			vol := [32]byte{byte(w + 1)}
			for v := uint64(1); v <= uint64(per); v++ {
				if err := commit(vol, v); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
