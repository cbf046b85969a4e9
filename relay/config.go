package relay

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/cowboy-foundation/cowboy/relay/internal/store"
	"github.com/ethereum/go-ethereum/crypto"
)

// Version is the relay software version.
const Version = "0.1.0"

// Config configures a Node. An empty Config with only Key and DataDir set
// works; defaults are filled in by withDefaults.
type Config struct {
	Key            *ecdsa.PrivateKey // node identity (secp256k1), required
	DataDir        string            // required
	Listen         string            // UDP address, default 127.0.0.1:0
	Metrics        string            // HTTP address for /metrics, "" = off
	Capacity       uint64            // bytes, 0 = unlimited
	MaxObjectSize  uint64            // bytes, default 256 MiB
	RevocationFile string            // revoked token link ids, "" = none
	// Revocations, if set, returns an additional revocation list for a
	// volume (e.g. the one anchored by the Storage Manager on chain). A
	// lookup error refuses the request.
	Revocations func(vol captoken.VolumeID) captoken.RevocationList
	ClockSkew   time.Duration // accepted request time skew, default 2m
	// Peers reports whether addr is an active registered relay: relay-signed
	// peer requests (wire.PeerToken, sent by relay/heal) are accepted only
	// from them. nil refuses every peer request.
	Peers  func(ctx context.Context, addr [20]byte) (bool, error)
	Logger *slog.Logger
	Now    func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:0"
	}
	if c.MaxObjectSize == 0 {
		c.MaxObjectSize = 256 << 20
	}
	if c.ClockSkew == 0 {
		c.ClockSkew = 2 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// FileConfig is the on-disk config (HOME/config.json).
type FileConfig struct {
	Listen         string `json:"listen"`
	Metrics        string `json:"metrics,omitempty"`
	CapacityBytes  uint64 `json:"capacity_bytes"`
	MaxObjectBytes uint64 `json:"max_object_bytes,omitempty"`
	RevocationFile string `json:"revocation_file,omitempty"`
	LogLevel       string `json:"log_level,omitempty"`
}

// Home file names.
const (
	KeyFile    = "node.key"
	ConfigFile = "config.json"
	DataDir    = "data"
)

// ErrHomeExists is returned by InitHome when the home already has a key.
var ErrHomeExists = errors.New("relay: home already initialised")

// InitHome creates home with a fresh node key and a default config.
func InitHome(home string, fc FileConfig) (*ecdsa.PrivateKey, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("relay: mkdir home: %w", err)
	}
	kp := filepath.Join(home, KeyFile)
	if _, err := os.Stat(kp); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrHomeExists, kp)
	}
	key, err := crypto.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("relay: generate key: %w", err)
	}
	if err := writeFileSync(kp, []byte(hex.EncodeToString(crypto.FromECDSA(key))+"\n"), 0o600); err != nil {
		return nil, err
	}
	if fc.Listen == "" {
		fc.Listen = "127.0.0.1:7400"
	}
	if fc.RevocationFile == "" {
		fc.RevocationFile = "revoked.txt"
	}
	b, _ := json.MarshalIndent(fc, "", "  ")
	if err := writeFileSync(filepath.Join(home, ConfigFile), append(b, '\n'), 0o600); err != nil {
		return nil, err
	}
	return key, nil
}

// LoadHome reads the key and config of an initialised home.
func LoadHome(home string) (*ecdsa.PrivateKey, FileConfig, error) {
	var fc FileConfig
	kb, err := os.ReadFile(filepath.Join(home, KeyFile))
	if err != nil {
		return nil, fc, fmt.Errorf("relay: read node key (run init first): %w", err)
	}
	key, err := crypto.HexToECDSA(strings.TrimSpace(string(kb)))
	if err != nil {
		return nil, fc, fmt.Errorf("relay: parse node key: %w", err)
	}
	cb, err := os.ReadFile(filepath.Join(home, ConfigFile))
	if err != nil {
		return nil, fc, fmt.Errorf("relay: read config: %w", err)
	}
	if err := json.Unmarshal(cb, &fc); err != nil {
		return nil, fc, fmt.Errorf("relay: parse config: %w", err)
	}
	if fc.RevocationFile != "" && !filepath.IsAbs(fc.RevocationFile) {
		fc.RevocationFile = filepath.Join(home, fc.RevocationFile)
	}
	return key, fc, nil
}

func writeFileSync(path string, b []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return fmt.Errorf("relay: write %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("relay: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("relay: fsync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("relay: close %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("relay: rename %s: %w", path, err)
	}
	return nil
}

// DiskUsage reads the store index of a relay that is not running.
func DiskUsage(dataDir string) (used, objects uint64, err error) {
	s, err := store.OpenReadOnly(dataDir)
	if err != nil {
		return 0, 0, err
	}
	defer s.Close()
	used, _, objects = s.Usage()
	return used, objects, nil
}
