package bls

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A key file holds one secret key as hex (an optional 0x prefix and
// surrounding whitespace are ignored), mode 0600: the file `cowboyd
// --validator-key` reads and `cowboy validator keygen` writes.

// LoadKeyFile reads a validator's secret key from a key file.
func LoadKeyFile(path string) (*SecretKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"))
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	k, err := SecretKeyFromBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return k, nil
}

// WriteKeyFile stores key as hex with mode 0600, atomically.
func WriteKeyFile(path string, key *SecretKey) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(key.Bytes())+"\n"), 0o600); err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	return os.Rename(tmp, path)
}
