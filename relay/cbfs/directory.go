package cbfs

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"
)

// RelayID is a relay's address: keccak256 of its node key, last 20 bytes.
type RelayID [20]byte

// String is the 0x-less hex form.
func (r RelayID) String() string { return hex.EncodeToString(r[:]) }

// MarshalText implements encoding.TextMarshaler.
func (r RelayID) MarshalText() ([]byte, error) { return []byte("0x" + r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *RelayID) UnmarshalText(b []byte) error {
	d, err := hex.DecodeString(strings.TrimPrefix(string(b), "0x"))
	if err != nil || len(d) != 20 {
		return fmt.Errorf("cbfs: bad relay id %q", b)
	}
	copy(r[:], d)
	return nil
}

// HexBytes is a byte slice written as hex in JSON.
type HexBytes []byte

// MarshalText implements encoding.TextMarshaler.
func (h HexBytes) MarshalText() ([]byte, error) { return []byte(hex.EncodeToString(h)), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (h *HexBytes) UnmarshalText(b []byte) error {
	d, err := hex.DecodeString(strings.TrimPrefix(string(b), "0x"))
	if err != nil {
		return fmt.Errorf("cbfs: bad hex: %w", err)
	}
	*h = d
	return nil
}

// RelayInfo describes one relay as listed by a Directory.
type RelayInfo struct {
	ID       RelayID  `json:"id"`
	Addr     string   `json:"addr"`   // QUIC host:port
	PubKey   HexBytes `json:"pubkey"` // 33-byte compressed secp256k1 node key
	Healthy  bool     `json:"healthy"`
	Capacity uint64   `json:"capacity,omitempty"`
	Used     uint64   `json:"used,omitempty"`
}

// Validate checks that ID matches PubKey.
func (r RelayInfo) Validate() error {
	pub, err := crypto.DecompressPubkey(r.PubKey)
	if err != nil {
		return fmt.Errorf("cbfs: relay %s: bad pubkey: %w", r.ID, err)
	}
	if RelayID(crypto.PubkeyToAddress(*pub)) != r.ID {
		return fmt.Errorf("cbfs: relay %s: id does not match pubkey", r.ID)
	}
	if r.Addr == "" {
		return fmt.Errorf("cbfs: relay %s: no address", r.ID)
	}
	return nil
}

// Directory lists relays. The on-chain Relay Registry (0x0B) will implement
// it; StaticDirectory reads a JSON file.
type Directory interface {
	Relays(ctx context.Context) ([]RelayInfo, error)
}

// StaticDirectory reads {"relays":[RelayInfo...]} from a JSON file on every
// call, so editing the file (e.g. healthy=false) takes effect immediately.
type StaticDirectory struct{ Path string }

// DirectoryFile is the JSON document read by StaticDirectory.
type DirectoryFile struct {
	Relays []RelayInfo `json:"relays"`
}

// Relays implements Directory.
func (d StaticDirectory) Relays(ctx context.Context) ([]RelayInfo, error) {
	b, err := os.ReadFile(d.Path)
	if err != nil {
		return nil, fmt.Errorf("cbfs: read directory: %w", err)
	}
	var f DirectoryFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("cbfs: parse directory %s: %w", d.Path, err)
	}
	for _, r := range f.Relays {
		if err := r.Validate(); err != nil {
			return nil, err
		}
	}
	return f.Relays, nil
}

// WriteDirectoryFile writes relays to path atomically.
func WriteDirectoryFile(path string, relays []RelayInfo) error {
	b, err := json.MarshalIndent(DirectoryFile{Relays: relays}, "", "  ")
	if err != nil {
		return fmt.Errorf("cbfs: encode directory: %w", err)
	}
	return writeAtomic(path, b)
}

// MemDirectory is a fixed in-memory Directory.
type MemDirectory []RelayInfo

// Relays implements Directory.
func (m MemDirectory) Relays(context.Context) ([]RelayInfo, error) {
	return append([]RelayInfo(nil), m...), nil
}
