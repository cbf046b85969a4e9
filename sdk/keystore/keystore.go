// Package keystore keeps named secp256k1 account keys as go-ethereum
// keystore v3 files (scrypt + AES-128-CTR), one file per key under a
// directory, so the same key file works with Ethereum tooling.
package keystore

import (
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/types"
	gethks "github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
)

// Errors callers match with errors.Is.
var (
	ErrNotFound    = errors.New("no such key")
	ErrExists      = errors.New("a key with this name already exists")
	ErrBadName     = errors.New("key names are 1-64 characters of letters, digits, '-', '_' and '.'")
	ErrBadPassword = errors.New("wrong password for key")
	nameRE         = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
)

// KDF strength. Light is for tests and throwaway devnet keys only.
type KDF int

const (
	Standard KDF = iota // scrypt N=2^18, P=1 (go-ethereum's standard)
	Light               // scrypt N=2^12, P=6
)

// Store is a directory of named keys.
type Store struct {
	dir string
}

// Open returns the store in dir, creating it with mode 0700.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	return &Store{dir: dir}, nil
}

// Entry names a stored key.
type Entry struct {
	Name    string        `json:"name"`
	Address types.Address `json:"address"`
	Path    string        `json:"path"`
}

func (s *Store) path(name string) string { return filepath.Join(s.dir, name+".json") }

func checkName(name string) error {
	if !nameRE.MatchString(name) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("%w: %q", ErrBadName, name)
	}
	return nil
}

// New generates a key, stores it under name and returns its entry.
func (s *Store) New(name, password string, kdf KDF) (*Entry, error) {
	key, err := crypto.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("keystore: generate: %w", err)
	}
	return s.Import(name, key, password, kdf)
}

// Import stores an existing private key under name.
func (s *Store) Import(name string, key *ecdsa.PrivateKey, password string, kdf KDF) (*Entry, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if _, err := os.Stat(s.path(name)); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrExists, name)
	}
	id, err := uuid.NewRandom()
	if err != nil {
		return nil, err
	}
	n, p := gethks.StandardScryptN, gethks.StandardScryptP
	if kdf == Light {
		n, p = gethks.LightScryptN, gethks.LightScryptP
	}
	k := &gethks.Key{Id: id, Address: crypto.PubkeyToAddress(key.PublicKey), PrivateKey: key}
	blob, err := gethks.EncryptKey(k, password, n, p)
	if err != nil {
		return nil, fmt.Errorf("keystore: encrypt %s: %w", name, err)
	}
	tmp := s.path(name) + ".tmp"
	if err := os.WriteFile(tmp, blob, 0o600); err != nil {
		return nil, fmt.Errorf("keystore: write %s: %w", name, err)
	}
	// Link, not rename: never replace a key that appeared meanwhile.
	if err := os.Link(tmp, s.path(name)); err != nil {
		os.Remove(tmp)
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%w: %s", ErrExists, name)
		}
		return nil, fmt.Errorf("keystore: store %s: %w", name, err)
	}
	os.Remove(tmp)
	return &Entry{Name: name, Address: types.Address(k.Address), Path: s.path(name)}, nil
}

// ImportHex stores a hex-encoded private key under name.
func (s *Store) ImportHex(name, hexKey, password string, kdf KDF) (*Entry, error) {
	key, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(hexKey), "0x"))
	if err != nil {
		return nil, fmt.Errorf("keystore: invalid private key: %w", err)
	}
	return s.Import(name, key, password, kdf)
}

// Get returns the entry of name without decrypting it.
func (s *Store) Get(name string) (*Entry, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	blob, err := os.ReadFile(s.path(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (in %s)", ErrNotFound, name, s.dir)
	}
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	var hdr struct {
		Address string `json:"address"`
	}
	if err := json.Unmarshal(blob, &hdr); err != nil {
		return nil, fmt.Errorf("keystore: %s is not a keystore file: %w", s.path(name), err)
	}
	a, err := types.ParseAddress(hdr.Address)
	if err != nil {
		return nil, fmt.Errorf("keystore: %s: %w", s.path(name), err)
	}
	return &Entry{Name: name, Address: a, Path: s.path(name)}, nil
}

// List returns all keys sorted by name.
func (s *Store) List() ([]Entry, error) {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	var out []Entry
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok || de.IsDir() || checkName(name) != nil {
			continue
		}
		e, err := s.Get(name)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Unlock decrypts the key stored under name.
func (s *Store) Unlock(name, password string) (*ecdsa.PrivateKey, error) {
	e, err := s.Get(name)
	if err != nil {
		return nil, err
	}
	blob, err := os.ReadFile(e.Path)
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	k, err := gethks.DecryptKey(blob, password)
	if errors.Is(err, gethks.ErrDecrypt) {
		return nil, fmt.Errorf("%w %s", ErrBadPassword, name)
	}
	if err != nil {
		return nil, fmt.Errorf("keystore: decrypt %s: %w", name, err)
	}
	return k.PrivateKey, nil
}

// ExportHex decrypts name and returns its private key as hex.
func (s *Store) ExportHex(name, password string) (string, error) {
	k, err := s.Unlock(name, password)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(crypto.FromECDSA(k)), nil
}
