package fuse

import (
	"errors"
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
	copy(raw[:slotSize], raw[3*slotSize:4*slotSize])
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
