package smt

import (
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

func BenchmarkZZFill(b *testing.B) {
	for b.Loop() {
		db, _ := bbolt.Open(filepath.Join(b.TempDir(), "x.db"), 0o600, nil)
		t0 := time.Now()
		tx, _ := db.Begin(true)
		s, _ := NewBoltStore(tx, []byte("smt"))
		fillTree(b, s)
		b.Logf("fill %v", time.Since(t0))
		tx.Commit()
		b.Logf("commit %v", time.Since(t0))
		db.Close()
	}
}
