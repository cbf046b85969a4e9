package store

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"go.etcd.io/bbolt"
)

// transferLoad builds blocks shaped like issue 14's load generator: every
// transaction a transfer from one of senders accounts (round robin) to an
// account of its own, with one "transfer" event emitted by the sender, the
// sender's and recipient's accounts and a few chain-wide records written.
type transferLoad struct {
	senders int
	perTx   int // bytes of an encoded transaction
	next    uint64
}

func (l *transferLoad) addr(tag byte, i uint64) types.Address {
	var a types.Address
	a[0] = tag
	binary.BigEndian.PutUint64(a[4:], i)
	return a
}

// block returns the writes, transactions and encoded receipts of one block
// of n transfers at height.
func (l *transferLoad) block(height uint64, n int) ([]state.Write, []types.Bytes, []*types.Receipt, [][]byte) {
	var writes []state.Write
	txs := make([]types.Bytes, n)
	receipts := make([]*types.Receipt, n)
	encoded := make([][]byte, n)
	val := func(i uint64) []byte { return binary.BigEndian.AppendUint64([]byte{0x83, 0x1b}, i) }
	for i := range n {
		seq := l.next
		l.next++
		from := l.addr(0xaa, seq%uint64(l.senders))
		// The generator's recipients: {0xbe, s, s>>8, j}, j counting the
		// sender's transfers (mod 256).
		s := seq % uint64(l.senders)
		to := types.Address{0xbe, byte(s), byte(s >> 8), byte(seq / uint64(l.senders))}
		raw := make([]byte, l.perTx)
		binary.BigEndian.PutUint64(raw, seq)
		binary.BigEndian.PutUint64(raw[8:], height)
		txs[i] = raw
		writes = append(writes,
			state.Write{Key: state.AccountKey(from), Value: val(seq)},
			state.Write{Key: state.AccountKey(to), Value: val(1)})
		ev := types.Event{Emitter: from, Topic: "transfer", Data: codec.MustMarshal([]any{from, to, 1})}
		r := &types.Receipt{TxHash: types.Keccak256(raw), Status: types.ReceiptSuccess, CyclesUsed: 21_000,
			FeePaid: big.NewInt(21_000), Burned: big.NewInt(20_000), Tip: big.NewInt(1_000), Events: []types.Event{ev},
			Return: types.Bytes{}, Messages: []types.MessageRecord{}}
		receipts[i] = r
		encoded[i] = codec.MustMarshal(r)
	}
	writes = append(writes,
		state.Write{Key: state.ChainKey("burned"), Value: val(height)},
		state.Write{Key: state.AccountKey(l.addr(0xcc, 0)), Value: val(height)})
	return writes, txs, receipts, encoded
}

// commitStats is one block commit's cost in bbolt terms.
type commitStats struct {
	Height    uint64
	Took      time.Duration
	Written   int // pages written by the commit
	Allocated int // page allocations (tx.Stats().PageCount)
	Spilled   int
	Split     int
	FreePages int // free + pending pages after the commit
	FileBytes int64
}

// commitLoad commits n blocks of txs transfers each onto s (which holds a
// genesis block) and calls each with every block's stats.
func commitLoad(tb testing.TB, s *Store, l *transferLoad, n, txs int, each func(commitStats)) {
	tb.Helper()
	for range n {
		head, err := s.Head()
		if err != nil {
			tb.Fatal(err)
		}
		writes, raw, receipts, encoded := l.block(head.Height+1, txs)
		before := s.db.Stats()
		start := time.Now()
		if _, err := s.CommitEncoded(writes, func(root types.Hash) (*types.Block, []*types.Receipt, [][]byte, error) {
			return block(head, root, raw), receipts, encoded, nil
		}); err != nil {
			tb.Fatal(err)
		}
		took := time.Since(start)
		after := s.db.Stats()
		d := after.TxStats.Sub(&before.TxStats)
		st := commitStats{Height: head.Height + 1, Took: took, Written: int(d.GetWrite()), Allocated: int(d.GetPageCount()),
			Spilled: int(d.GetSpill()), Split: int(d.GetSplit()), FreePages: after.FreePageN + after.PendingPageN}
		if fi, err := os.Stat(s.db.Path()); err == nil {
			st.FileBytes = fi.Size()
		}
		each(st)
	}
}

func openGenesis(tb testing.TB, dir string) *Store {
	tb.Helper()
	s, err := Open(filepath.Join(dir, "chain.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	if _, err := s.Commit([]state.Write{{Key: state.ChainKey("genesis_supply"), Value: []byte{1}}}, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		return block(nil, root, nil), nil, nil
	}); err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkCommitGrowth commits COMMIT_BENCH_BLOCKS (default 400) blocks
// of 2,000 transfers from 1,024 senders and logs, for each window of 50
// blocks, the mean commit time per block and per transaction, pages
// written per block, bbolt spills and splits, the free pages and the file
// size: how the commit cost moves as the chain grows.
func BenchmarkCommitGrowth(b *testing.B) {
	blocks := 400
	if v, err := strconv.Atoi(os.Getenv("COMMIT_BENCH_BLOCKS")); err == nil && v > 0 {
		blocks = v
	}
	const txs, window = 2_000, 50
	for range b.N {
		s := openGenesis(b, b.TempDir())
		l := &transferLoad{senders: 1024, perTx: 130}
		var sum commitStats
		var k int
		var first, last time.Duration
		cpu0 := processCPU()
		commitLoad(b, s, l, blocks, txs, func(st commitStats) {
			sum.Took += st.Took
			sum.Written += st.Written
			sum.Spilled += st.Spilled
			sum.Split += st.Split
			if k++; k == window {
				per := sum.Took / window
				cpu := processCPU()
				cpuPer := (cpu - cpu0) / (window * txs)
				cpu0 = cpu
				b.Logf("height %5d: commit %6.1f ms/block %5.0f µs/tx (cpu %4.0f µs/tx, block building included)  pages written %6d/block  spill %5d split %5d  free pages %6d  file %5d MiB",
					st.Height, float64(per)/1e6, float64(per)/1e3/txs, float64(cpuPer)/1e3, sum.Written/window, sum.Spilled/window, sum.Split/window, st.FreePages, st.FileBytes>>20)
				if first == 0 {
					first = per
				}
				last = per
				sum, k = commitStats{}, 0
			}
		})
		logBuckets(b, s)
		b.ReportMetric(float64(first)/1e3/txs, "first-µs/tx")
		b.ReportMetric(float64(last)/1e3/txs, "last-µs/tx")
	}
}

// logBuckets logs every bucket's keys, pages and bytes in use.
func logBuckets(tb testing.TB, s *Store) {
	_ = s.db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			st := b.Stats()
			fmt.Fprintf(os.Stderr, "bucket %-12s keys %9d  leaf pages %7d (+%7d overflow)  branch pages %6d  in use %7.1f MiB of %7.1f MiB  depth %d\n",
				name, st.KeyN, st.LeafPageN, st.LeafOverflowN, st.BranchPageN, float64(st.LeafInuse+st.BranchInuse)/(1<<20),
				float64(st.LeafAlloc+st.BranchAlloc)/(1<<20), st.Depth)
			return nil
		})
	})
}

// Buckets a block appends to in key order fill their pages: with bbolt's
// default fill (half, for random keys) every appended page stayed half
// empty, so the block's ledger and orphan records cost twice the pages
// written and fsynced, and twice the file.
func TestAppendedBucketsFillPages(t *testing.T) {
	s := openGenesis(t, t.TempDir())
	l := &transferLoad{senders: 64, perTx: 130}
	commitLoad(t, s, l, 20, 300, func(commitStats) {})
	err := s.db.View(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketTxs, bucketReceipts, bucketSMT, bucketSMTOrphans, bucketEvTopic} {
			st := tx.Bucket(name).Stats()
			if st.LeafPageN < 20 {
				t.Fatalf("bucket %s: %d leaf pages, too few to judge", name, st.LeafPageN)
			}
			if fill := float64(st.LeafInuse) / float64(st.LeafAlloc); fill < 0.8 {
				t.Errorf("bucket %s: leaf pages %.0f%% full (%d pages, %d keys); want >= 80%%", name, 100*fill, st.LeafPageN, st.KeyN)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
