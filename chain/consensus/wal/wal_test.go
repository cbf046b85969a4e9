package wal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func vote(round uint64) consensus.Record {
	return consensus.Record{
		Vote:    &consensus.Vote{BlockHash: types.Hash{byte(round)}, Height: round, Round: round, Voter: 1, Signature: []byte{1, 2, 3}},
		Justify: &consensus.QC{BlockHash: types.Hash{9}, Height: round - 1, Round: round - 1},
	}
}

func TestAppendReopenTornTailCompact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "consensus.wal")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for r := uint64(1); r <= 5; r++ {
		if err := w.Append(vote(r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Append(consensus.Record{Timeout: &consensus.NewView{Round: 6, Voter: 1}}, vote(7)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if err := w.Append(vote(8)); err == nil {
		t.Fatal("append after close succeeded")
	}

	// Simulate a crash in the middle of an append: a partial frame.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	full := frame(ptr(vote(8)))
	f.Write(full[:len(full)-3])
	f.Close()

	w, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := w.Records()
	if len(recs) != 7 || recs[5].Timeout == nil || recs[6].Vote.Round != 7 {
		t.Fatalf("reopened %d records", len(recs))
	}
	// The torn tail was cut; new appends follow the last good record.
	if err := w.Append(vote(8)); err != nil {
		t.Fatal(err)
	}
	if err := w.Compact(5); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(vote(9)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var rounds []uint64
	for _, r := range w.Records() {
		rounds = append(rounds, r.Round())
	}
	if len(rounds) != 4 || rounds[0] != 6 || rounds[3] != 9 {
		t.Fatalf("after compaction: rounds %v", rounds)
	}

	// A flipped bit in the middle ends the log at the last good frame.
	data, _ := os.ReadFile(path)
	data[len(frame(ptr(consensus.Record{Timeout: &consensus.NewView{Round: 6, Voter: 1}})))+10] ^= 0xff
	os.WriteFile(path, data, 0o600)
	w2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if n := len(w2.Records()); n != 1 {
		t.Fatalf("corrupt log: %d records, want 1", n)
	}
}

func ptr(r consensus.Record) *consensus.Record { return &r }
