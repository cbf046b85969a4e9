package fuse

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckErrors(t *testing.T) {
	if err := checkFUSE(filepath.Join(t.TempDir(), "no-fuse")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("missing device: %v", err)
	}
	if err := checkMountPoint(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing dir: %v", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if err := checkMountPoint(f); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("file as mount point: %v", err)
	}
	if err := checkMountPoint("/proc"); !errors.Is(err, ErrBusy) {
		t.Fatalf("/proc: %v", err)
	}
	if got := unescapeMount(`/tmp/a\040b`); got != "/tmp/a b" {
		t.Fatalf("unescape: %q", got)
	}
}

func TestBlockStoreEncrypted(t *testing.T) {
	s, err := newSealer([32]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := newBlockStore(dir, s, 7, 1)
	blk := make([]byte, blockSize)
	copy(blk, "secret plaintext marker")
	if err := b.put(3, blk); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(b.path)
	if strings.Contains(string(raw), "secret plaintext marker") {
		t.Fatal("cache block stored in the clear")
	}
	got := make([]byte, blockSize)
	if ok, err := b.get(3, got); !ok || err != nil || string(got[:23]) != "secret plaintext marker" {
		t.Fatalf("get: %v %v", ok, err)
	}
	// A block moved to another slot does not decrypt.
	other := newBlockStore(dir, s, 8, 2)
	other.put(0, make([]byte, blockSize))
	copy(raw, raw[3*slotSize:])
	os.WriteFile(b.path, raw, 0o600)
	b.present[0] = true
	if _, err := b.get(0, got); err == nil {
		t.Fatal("swapped block decrypted")
	}
	b.close()
	if _, err := os.Stat(b.path); !os.IsNotExist(err) {
		t.Fatal("cache file left after close")
	}
}

// TestBlockStoreSealsUsedBytes: a block is sealed only up to its last
// non-zero byte (a 1 KiB file writes ~1 KiB to the cache, not 64 KiB) and
// reads back zero-padded, whatever the destination held before.
func TestBlockStoreSealsUsedBytes(t *testing.T) {
	s, err := newSealer([32]byte{2})
	if err != nil {
		t.Fatal(err)
	}
	b := newBlockStore(t.TempDir(), s, 9, 1)
	t.Cleanup(b.close)
	for _, used := range []int{0, 1, 63, 64, 65, 1000, 4095, 4096, 4097, blockSize - 1, blockSize} {
		blk := make([]byte, blockSize)
		for i := range used {
			blk[i] = byte(i%251 + 1)
		}
		if err := b.put(0, blk); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(b.path); st.Size() != int64(slotHeader+used+16) {
			t.Fatalf("used %d: cache file of %d bytes, want %d", used, st.Size(), slotHeader+used+16)
		}
		got := bytes.Repeat([]byte{0xee}, blockSize)
		if ok, err := b.get(0, got); !ok || err != nil || !bytes.Equal(got, blk) {
			t.Fatalf("used %d: get %v %v, equal %v", used, ok, err, bytes.Equal(got, blk))
		}
		b.drop(0)
	}
}

// TestUpgradeStoreV1: a block store left in a format-1 journal (whole
// 64 KiB slots) is rewritten in the current layout with the same content,
// so an older mount's unflushed writes are not lost.
func TestUpgradeStoreV1(t *testing.T) {
	s, err := newSealer([32]byte{4})
	if err != nil {
		t.Fatal(err)
	}
	st := &blockStore{s: s, ino: 5, seq: 6, path: filepath.Join(t.TempDir(), "0.blk"), present: map[int64]bool{}}
	const oldSlot = 12 + blockSize + 16
	want := map[int64][]byte{}
	var file []byte
	for _, blk := range []int64{0, 2} {
		data := make([]byte, blockSize)
		copy(data, fmt.Sprintf("block %d content", blk))
		want[blk] = data
		slot := make([]byte, 12, oldSlot)
		slot[0] = byte(blk + 1)
		slot = s.aead.Seal(slot, slot[:12], data, st.aad(blk))
		file = append(file, make([]byte, blk*oldSlot-int64(len(file)))...)
		file = append(file, slot...)
	}
	if err := os.WriteFile(st.path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := upgradeStoreV1(st, []int64{0, 2}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(st.path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st.f = f
	t.Cleanup(st.close)
	for blk, data := range want {
		st.present[blk] = true
		got := make([]byte, blockSize)
		if ok, err := st.get(blk, got); !ok || err != nil || !bytes.Equal(got, data) {
			t.Fatalf("block %d after upgrade: %v %v", blk, ok, err)
		}
	}
}
