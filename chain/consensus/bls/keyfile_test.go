package bls_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
)

func TestKeyFileRoundTrip(t *testing.T) {
	k, err := bls.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sub", "consensus.key")
	if err := bls.WriteKeyFile(path, k); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	got, err := bls.LoadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !got.PublicKey().Equal(k.PublicKey()) {
		t.Fatal("loaded key differs from the written one")
	}
	// A 0x prefix and surrounding whitespace are accepted.
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append([]byte(" 0x"), b...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := bls.LoadKeyFile(path); err != nil {
		t.Fatalf("0x-prefixed key file: %v", err)
	}
	if err := os.WriteFile(path, []byte("zz\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := bls.LoadKeyFile(path); err == nil {
		t.Fatal("a non-hex key file loaded")
	}
}
