package node

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/ethereum/go-ethereum/crypto"
)

// LoadKeyFile reads a node-local secp256k1 key stored as hex (validator and
// devnet faucet keys, which the node must use unattended). User keys belong
// in the encrypted keystore, not here.
func LoadKeyFile(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := crypto.HexToECDSA(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x")))
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return key, nil
}

// WriteKeyFile stores key as hex with mode 0600, atomically.
func WriteKeyFile(path string, key *ecdsa.PrivateKey) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%x\n", crypto.FromECDSA(key))), 0o600); err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	return os.Rename(tmp, path)
}

// ConsensusKeyPath is a validator's BLS key in its home.
func ConsensusKeyPath(home string) string { return filepath.Join(home, "consensus.key") }

// NodeKeyPath is a full node's p2p identity key (BLS, like a validator's,
// but in no validator set) in its home.
func NodeKeyPath(home string) string { return filepath.Join(home, "node.key") }

// LoadOrCreateNodeKey reads a full node's key, writing a fresh one the
// first time.
func LoadOrCreateNodeKey(path string) (*bls.SecretKey, error) {
	k, err := bls.LoadKeyFile(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return k, err
	}
	if k, err = bls.GenerateKey(nil); err != nil {
		return nil, err
	}
	if err := bls.WriteKeyFile(path, k); err != nil {
		return nil, err
	}
	return k, nil
}
