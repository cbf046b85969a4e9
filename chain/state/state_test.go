package state

import (
	"bytes"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

func TestOverlaySnapshotRevert(t *testing.T) {
	base := MapReader{"\x07a": []byte{1}, "\x07b": []byte{2}}
	o := NewOverlay(base)
	o.Set([]byte("\x07a"), []byte{10})
	s := o.Snapshot()
	o.Set([]byte("\x07a"), []byte{11})
	o.Delete([]byte("\x07b"))
	o.Set([]byte("\x07c"), []byte{3})
	if v, ok, _ := o.Get([]byte("\x07b")); ok || v != nil {
		t.Fatal("deleted key visible")
	}
	o.RevertTo(s)
	if v, _, _ := o.Get([]byte("\x07a")); !bytes.Equal(v, []byte{10}) {
		t.Fatalf("a = %v after revert", v)
	}
	if v, ok, _ := o.Get([]byte("\x07b")); !ok || !bytes.Equal(v, []byte{2}) {
		t.Fatal("b not restored from base")
	}
	if _, ok, _ := o.Get([]byte("\x07c")); ok {
		t.Fatal("c survived revert")
	}
	w := o.Writes()
	if len(w) != 1 || string(w[0].Key) != "\x07a" {
		t.Fatalf("writes %v", w)
	}
}

func TestWritesSortedAndEmptyAccountsVanish(t *testing.T) {
	o := NewOverlay(MapReader{})
	a, b := types.Address{2}, types.Address{1}
	if err := o.AddBalance(a, big.NewInt(5)); err != nil {
		t.Fatal(err)
	}
	if err := o.AddBalance(b, big.NewInt(5)); err != nil {
		t.Fatal(err)
	}
	w := o.Writes()
	if len(w) != 2 || bytes.Compare(w[0].Key, w[1].Key) >= 0 {
		t.Fatal("writes not sorted")
	}
	if err := o.SubBalance(a, big.NewInt(6)); err == nil {
		t.Fatal("overdraft allowed")
	}
	if err := o.SubBalance(a, big.NewInt(5)); err != nil {
		t.Fatal(err)
	}
	for _, x := range o.Writes() {
		if bytes.Equal(x.Key, AccountKey(a)) && x.Value != nil {
			t.Fatal("empty account kept in state")
		}
	}
}

func TestOverlayScanMerges(t *testing.T) {
	base := MapReader{"\x03a1": []byte{1}, "\x03a3": []byte{3}, "\x03b1": []byte{9}}
	o := NewOverlay(base)
	o.Set([]byte("\x03a2"), []byte{2})
	o.Delete([]byte("\x03a3"))
	o.Set([]byte("\x03a1"), []byte{11})
	var got []string
	o.Scan([]byte("\x03a"), func(k, v []byte) error { got = append(got, string(k[1:])+":"+string(rune('0'+v[0]%10))); return nil })
	if len(got) != 2 || got[0] != "a1:1" || got[1] != "a2:2" {
		t.Fatalf("scan %v", got)
	}
}

func TestOverlayKeepsEmptyValues(t *testing.T) {
	o := NewOverlay(MapReader{})
	o.Set([]byte("\x07e"), []byte{})
	v, ok, _ := o.Get([]byte("\x07e"))
	if !ok || v == nil || len(v) != 0 {
		t.Fatalf("empty value read back as %v, %v", v, ok)
	}
	w := o.Writes()
	if len(w) != 1 || w[0].Value == nil {
		t.Fatal("empty value written as a deletion")
	}
}
