// Package types owns Cowboy's consensus data types — addresses, hashes,
// transactions, blocks, receipts and events — and their canonical CBOR
// encodings and hashes (spec 002 §1, §2). Every type here encodes itself; no
// other package decides how these bytes look.
package types

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/fxamacker/cbor/v2"
)

// AddressLength is the size of an account or actor address in bytes.
const AddressLength = 20

// HashLength is the size of a keccak256 hash in bytes.
const HashLength = 32

// Address identifies an external account, an actor or a system actor.
type Address [AddressLength]byte

// Hash is a keccak256 digest.
type Hash [HashLength]byte

// ErrBadAddress is returned for text or bytes that are not a 20-byte address.
var ErrBadAddress = errors.New("invalid address")

// ErrBadHash is returned for text or bytes that are not a 32-byte hash.
var ErrBadHash = errors.New("invalid hash")

// System actor addresses (spec 002 §9). The range 0x00…0000–0x00…0100 is
// reserved (§1.3): no external key or derived actor may live there.
var (
	RunnerRegistryAddress      = SystemAddress(0x01)
	JobDispatcherAddress       = SystemAddress(0x02)
	ResultVerifierAddress      = SystemAddress(0x03)
	SecretsManagerAddress      = SystemAddress(0x04)
	TEEVerifierAddress         = SystemAddress(0x05)
	DualBasefeeAddress         = SystemAddress(0x06)
	EntitlementRegistryAddress = SystemAddress(0x07)
	TreasuryAddress            = SystemAddress(0x08)
	GovernanceAddress          = SystemAddress(0x09)
	StorageManagerAddress      = SystemAddress(0x0A)
	RelayRegistryAddress       = SystemAddress(0x0B)
	// ModelRegistryAddress is the Model Registry (spec 002 §5.1), which the
	// spec's actor table does not number; it takes the next free address (0x…0C is the Validator Registry).
	ModelRegistryAddress = SystemAddress(0x0D)
	// TokenModuleAddress is the CIP-20 platform token module (spec 002
	// §17.3): token_* instructions go to it and it emits the token events.
	TokenModuleAddress = SystemAddress(0x0E)
	// RentModuleAddress is the state rent and storage bond module (spec
	// 002 §4.4, §17.5): it holds prepaid rent and storage bonds.
	RentModuleAddress = SystemAddress(0x0F)
	// TimerEscrowAddress holds the deposits of pending timers (chain/timers)
	// and is the caller of timer messages.
	TimerEscrowAddress = SystemAddress(0x10)
	// EthBridgeAddress is the Ethereum bridge hooks module (spec 002
	// §16.2–§16.4, chain/system/ethbridge): bridge_* instructions go to
	// it, it holds subscription balances and administers wrapped tokens.
	EthBridgeAddress = SystemAddress(0x11)
)

// SystemAddress returns the reserved address whose last two bytes are n.
func SystemAddress(n uint16) Address {
	var a Address
	a[AddressLength-2] = byte(n >> 8)
	a[AddressLength-1] = byte(n)
	return a
}

// IsReserved reports whether a lies in the system range 0x0…0000–0x0…0100.
func (a Address) IsReserved() bool {
	for _, b := range a[:AddressLength-2] {
		if b != 0 {
			return false
		}
	}
	return uint16(a[AddressLength-2])<<8|uint16(a[AddressLength-1]) <= 0x0100
}

// BytesToAddress converts a 20-byte slice to an Address.
func BytesToAddress(b []byte) (Address, error) {
	var a Address
	if len(b) != AddressLength {
		return a, fmt.Errorf("%w: %d bytes, want %d", ErrBadAddress, len(b), AddressLength)
	}
	copy(a[:], b)
	return a, nil
}

// ParseAddress parses a 0x-prefixed (or bare) 40-digit hex address.
func ParseAddress(s string) (Address, error) {
	b, err := decodeHex(s)
	if err != nil {
		return Address{}, fmt.Errorf("%w %q: %v", ErrBadAddress, s, err)
	}
	a, err := BytesToAddress(b)
	if err != nil {
		return Address{}, fmt.Errorf("%w %q: %d bytes", ErrBadAddress, s, len(b))
	}
	return a, nil
}

// String renders the address as lowercase 0x-hex.
func (a Address) String() string { return "0x" + hex.EncodeToString(a[:]) }

// IsZero reports whether a is the all-zero address.
func (a Address) IsZero() bool { return a == Address{} }

// MarshalText implements encoding.TextMarshaler (JSON uses it).
func (a Address) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Address) UnmarshalText(b []byte) error {
	v, err := ParseAddress(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// MarshalCBOR encodes the address as a 20-byte CBOR byte string.
func (a Address) MarshalCBOR() ([]byte, error) { return cbor.Marshal(a[:]) }

// UnmarshalCBOR decodes a byte string of exactly 20 bytes.
func (a *Address) UnmarshalCBOR(data []byte) error {
	var b []byte
	if err := cbor.Unmarshal(data, &b); err != nil {
		return fmt.Errorf("%w: %v", ErrBadAddress, err)
	}
	v, err := BytesToAddress(b)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// Keccak256 hashes the concatenation of its arguments.
func Keccak256(data ...[]byte) Hash {
	return Hash(crypto.Keccak256Hash(data...))
}

// BytesToHash converts a 32-byte slice to a Hash.
func BytesToHash(b []byte) (Hash, error) {
	var h Hash
	if len(b) != HashLength {
		return h, fmt.Errorf("%w: %d bytes, want %d", ErrBadHash, len(b), HashLength)
	}
	copy(h[:], b)
	return h, nil
}

// ParseHash parses a 0x-prefixed (or bare) 64-digit hex hash.
func ParseHash(s string) (Hash, error) {
	b, err := decodeHex(s)
	if err != nil {
		return Hash{}, fmt.Errorf("%w %q: %v", ErrBadHash, s, err)
	}
	h, err := BytesToHash(b)
	if err != nil {
		return Hash{}, fmt.Errorf("%w %q: %d bytes", ErrBadHash, s, len(b))
	}
	return h, nil
}

// String renders the hash as lowercase 0x-hex.
func (h Hash) String() string { return "0x" + hex.EncodeToString(h[:]) }

// IsZero reports whether h is all zeros.
func (h Hash) IsZero() bool { return h == Hash{} }

// MarshalText implements encoding.TextMarshaler.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// MarshalCBOR encodes the hash as a 32-byte CBOR byte string.
func (h Hash) MarshalCBOR() ([]byte, error) { return cbor.Marshal(h[:]) }

// UnmarshalCBOR decodes a byte string of exactly 32 bytes.
func (h *Hash) UnmarshalCBOR(data []byte) error {
	var b []byte
	if err := cbor.Unmarshal(data, &b); err != nil {
		return fmt.Errorf("%w: %v", ErrBadHash, err)
	}
	v, err := BytesToHash(b)
	if err != nil {
		return err
	}
	*h = v
	return nil
}

func decodeHex(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	return hex.DecodeString(s)
}

// HexBytes is a byte slice that renders as 0x-hex in JSON.
type HexBytes []byte

// MarshalText implements encoding.TextMarshaler.
func (b HexBytes) MarshalText() ([]byte, error) { return []byte("0x" + hex.EncodeToString(b)), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *HexBytes) UnmarshalText(t []byte) error {
	v, err := decodeHex(string(t))
	if err != nil {
		return fmt.Errorf("invalid hex %q: %w", t, err)
	}
	*b = v
	return nil
}

// String renders the bytes as 0x-hex.
func (b HexBytes) String() string { return "0x" + hex.EncodeToString(b) }
