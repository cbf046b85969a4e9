package smt

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
)

func TestMemStore(t *testing.T) {
	var s MemStore // zero value is usable
	h := [32]byte{1}
	if _, err := s.GetNode(h); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("missing node: %v", err)
	}
	data := []byte("node")
	if err := s.PutNode(h, data); err != nil {
		t.Fatal(err)
	}
	data[0] = 'X' // the store copied it
	got, err := s.GetNode(h)
	if err != nil || !bytes.Equal(got, []byte("node")) {
		t.Fatalf("GetNode = %q, %v", got, err)
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d", s.Len())
	}
}

func TestBoltStoreBasics(t *testing.T) {
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "b.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := NewBoltStore(nil, []byte("b")); err == nil {
		t.Fatal("nil tx accepted")
	}
	h := [32]byte{7}
	err = db.Update(func(tx *bbolt.Tx) error {
		if _, err := NewBoltStore(tx, nil); err == nil {
			t.Fatal("empty bucket name accepted")
		}
		s, err := NewBoltStore(tx, []byte("b"))
		if err != nil {
			return err
		}
		if _, err := s.GetNode(h); !errors.Is(err, ErrNodeNotFound) {
			t.Fatalf("missing node: %v", err)
		}
		data := []byte("payload")
		if err := s.PutNode(h, data); err != nil {
			return err
		}
		data[0] = 'X' // bbolt needs the bytes until commit; the store copied them
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bbolt.Tx) error {
		s, err := NewBoltStore(tx, []byte("b"))
		if err != nil {
			return err
		}
		got, err := s.GetNode(h)
		if err != nil || !bytes.Equal(got, []byte("payload")) {
			t.Fatalf("GetNode = %q, %v", got, err)
		}
		if err := s.PutNode(h, []byte("x")); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("put on read-only tx: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
