package cbfs

import (
	"bytes"
	"testing"
)

func TestSealManifestDeterministic(t *testing.T) {
	var key [32]byte
	key[0] = 1
	var vol VolumeID
	vol[0] = 2
	a := sealManifest(key, vol, 3, []byte("manifest"))
	b := sealManifest(key, vol, 3, []byte("manifest"))
	if !bytes.Equal(a, b) {
		t.Fatal("sealing the same version twice differs: a retried commit would be refused")
	}
	if c := sealManifest(key, vol, 3, []byte("manifesT")); bytes.Equal(a[:12], c[:12]) {
		t.Fatal("different plaintexts share a nonce")
	}
	if d := sealManifest(key, vol, 4, []byte("manifest")); bytes.Equal(a, d) {
		t.Fatal("different versions seal the same")
	}
	p, err := openManifest(key, vol, 3, a)
	if err != nil || string(p) != "manifest" {
		t.Fatalf("open: %q %v", p, err)
	}
}
