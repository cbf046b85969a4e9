package store

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// The head log: an append-only file of records
//
//	u32 payload length | u32 CRC-32C of payload | payload
//	payload = volume (32) | version (u64) | u32 head length | head | log entry
//
// all integers big-endian. Each append is followed by one fdatasync before
// the head is acknowledged. A crash can leave only the last record torn
// (nothing after it was acknowledged), so replay stops at the first record
// whose length or checksum does not hold.

const (
	headLogName  = "heads.log"
	flushRecords = 1024    // heads kept in memory before the bbolt index is updated
	flushBytes   = 4 << 20 // or log bytes
	maxRecord    = 64 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

type headRecord struct {
	vol     [32]byte
	version uint64
	head    []byte
	entry   []byte // encoded wire.LogEntry
}

func (r headRecord) marshal() []byte {
	n := 32 + 8 + 4 + len(r.head) + len(r.entry)
	b := make([]byte, 8, 8+n)
	b = append(b, r.vol[:]...)
	b = binary.BigEndian.AppendUint64(b, r.version)
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.head)))
	b = append(b, r.head...)
	b = append(b, r.entry...)
	binary.BigEndian.PutUint32(b[0:], uint32(n))
	binary.BigEndian.PutUint32(b[4:], crc32.Checksum(b[8:], crcTable))
	return b
}

func unmarshalHeadRecord(p []byte) (headRecord, bool) {
	if len(p) < 44 {
		return headRecord{}, false
	}
	var r headRecord
	copy(r.vol[:], p)
	r.version = binary.BigEndian.Uint64(p[32:])
	hn := binary.BigEndian.Uint32(p[40:])
	if uint64(hn) > uint64(len(p)-44) {
		return headRecord{}, false
	}
	r.head = p[44 : 44+hn]
	r.entry = p[44+hn:]
	return r, true
}

// parseHeadLog returns the valid records of a head log and the length of
// the valid prefix.
func parseHeadLog(b []byte) ([]headRecord, int) {
	var out []headRecord
	off := 0
	for len(b)-off >= 8 {
		n := binary.BigEndian.Uint32(b[off:])
		sum := binary.BigEndian.Uint32(b[off+4:])
		if n == 0 || n > maxRecord || uint64(n) > uint64(len(b)-off-8) {
			break
		}
		p := b[off+8 : off+8+int(n)]
		if crc32.Checksum(p, crcTable) != sum {
			break
		}
		r, ok := unmarshalHeadRecord(p)
		if !ok {
			break
		}
		out = append(out, r)
		off += 8 + int(n)
	}
	return out, off
}

// pendingHeads is what one volume has in the log but not yet in bbolt.
type pendingHeads struct {
	head []byte
	log  []headRecord // by version, one record per version (the last logged)
}

// headLog: mu serialises commits, flushes and the file (it is held across
// a commit's fdatasync); state guards the records held in memory, which
// change only under mu too, so readers never wait for a disk sync.
type headLog struct {
	mu   sync.Mutex
	f    *os.File
	size int64

	state   sync.RWMutex
	records int
	order   []headRecord // every record not yet in bbolt, in log order
	pending map[[32]byte]*pendingHeads
}

// openHeadLog opens (creating) the head log in dir and returns it with the
// records it holds, after cutting off a torn tail.
func openHeadLog(dir string) (*headLog, []headRecord, error) {
	f, err := os.OpenFile(dir+string(os.PathSeparator)+headLogName, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("store: open head log: %w", err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("store: read head log: %w", err)
	}
	recs, valid := parseHeadLog(b)
	if valid != len(b) {
		if err := f.Truncate(int64(valid)); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("store: cut torn head log tail: %w", err)
		}
	}
	if _, err := f.Seek(int64(valid), io.SeekStart); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("store: seek head log: %w", err)
	}
	hl := &headLog{f: f, size: int64(valid), pending: map[[32]byte]*pendingHeads{}}
	for _, r := range recs {
		hl.add(r)
	}
	return hl, recs, nil
}

// append writes one record and syncs it. On failure the log is cut back,
// so a failed append leaves no record behind.
func (hl *headLog) append(r headRecord) error {
	b := r.marshal()
	if _, err := hl.f.WriteAt(b, hl.size); err != nil {
		hl.f.Truncate(hl.size)
		return fmt.Errorf("store: append head log: %w", err)
	}
	if err := unix.Fdatasync(int(hl.f.Fd())); err != nil {
		hl.f.Truncate(hl.size)
		return fmt.Errorf("store: sync head log: %w", err)
	}
	hl.size += int64(len(b))
	return nil
}

// add records r as held in the log but not yet in bbolt. Caller holds mu.
func (hl *headLog) add(r headRecord) {
	hl.state.Lock()
	defer hl.state.Unlock()
	p := hl.pending[r.vol]
	if p == nil {
		p = &pendingHeads{}
		hl.pending[r.vol] = p
	}
	p.head = r.head
	// A later record of a version already held replaces it, as a bbolt
	// Put of its key would.
	i, found := slices.BinarySearchFunc(p.log, r.version, func(e headRecord, v uint64) int { return cmp.Compare(e.version, v) })
	if found {
		p.log[i] = r
	} else {
		p.log = slices.Insert(p.log, i, r)
	}
	hl.order = append(hl.order, r)
	hl.records++
}

func (hl *headLog) due() bool { return hl.records >= flushRecords || hl.size >= flushBytes }

func (hl *headLog) pendingRecords() []headRecord { return hl.order }

func (hl *headLog) reset() {
	hl.state.Lock()
	defer hl.state.Unlock()
	hl.order = nil
	hl.records = 0
	hl.pending = map[[32]byte]*pendingHeads{}
}

// truncate empties the log once its records are in bbolt.
func (hl *headLog) truncate() error {
	if err := hl.f.Truncate(0); err != nil {
		return fmt.Errorf("store: empty head log: %w", err)
	}
	if err := hl.f.Sync(); err != nil {
		return fmt.Errorf("store: sync head log: %w", err)
	}
	hl.size = 0
	return nil
}

func (hl *headLog) close() error {
	if hl == nil || hl.f == nil {
		return nil
	}
	err := hl.f.Close()
	hl.f = nil
	if err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("store: close head log: %w", err)
	}
	return nil
}
