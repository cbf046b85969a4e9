// Package blob is the chain's view of data availability (spec 002 §7):
// outputs of at most InlineMax bytes travel inline and pay cells; larger
// ones are content-addressed blobs stored off chain (in CBFS) and
// referenced on chain by a multihash. The package holds the pure parts:
// the multihash encoding, the reference and record types, the state key
// and the cost of host: blob commit. The host op lives in
// chain/actors/blobops, the CBFS side in relay/cbfs (blob.go).
package blob

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strings"

	"lukechampine.com/blake3"
)

// Multihash codes (the multicodec table). SHA2_256 is the default: it is
// what IPFS CIDv0 and most tools use.
const (
	SHA2_256 uint64 = 0x12
	BLAKE3   uint64 = 0x1e
)

// DigestLen is the digest length of both supported functions.
const DigestLen = 32

// Errors. ErrMismatch is a content that does not hash to its multihash:
// a tampered or substituted blob.
var (
	ErrMalformed   = errors.New("blob: malformed multihash")
	ErrUnsupported = errors.New("blob: unsupported multihash function")
	ErrMismatch    = errors.New("blob: content does not match its multihash")
)

// Multihash is a self-describing digest: varint(code) ‖ varint(len) ‖
// digest (multiformats.io/multihash).
type Multihash []byte

// New returns the multihash of a digest computed with code.
func New(code uint64, digest []byte) Multihash {
	m := binary.AppendUvarint(nil, code)
	m = binary.AppendUvarint(m, uint64(len(digest)))
	return append(m, digest...)
}

// Sum hashes data with code (SHA2_256 or BLAKE3).
func Sum(code uint64, data []byte) (Multihash, error) {
	h, err := NewHasher(code)
	if err != nil {
		return nil, err
	}
	h.Write(data)
	return New(code, h.Sum(nil)), nil
}

// NewHasher returns a hash.Hash for code.
func NewHasher(code uint64) (hash.Hash, error) {
	switch code {
	case SHA2_256:
		return sha256.New(), nil
	case BLAKE3:
		return blake3.New(DigestLen, nil), nil
	}
	return nil, fmt.Errorf("%w: code 0x%x (0x12 sha2-256 or 0x1e blake3)", ErrUnsupported, code)
}

// uvarint reads a minimally encoded unsigned varint (at most 9 bytes, as
// the multiformats unsigned-varint spec requires).
func uvarint(b []byte) (uint64, int, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 || n > 9 {
		return 0, 0, fmt.Errorf("%w: bad varint", ErrMalformed)
	}
	if n > 1 && b[n-1] == 0 {
		return 0, 0, fmt.Errorf("%w: varint not minimally encoded", ErrMalformed)
	}
	return v, n, nil
}

// Decode splits a multihash into its code and digest.
func Decode(b []byte) (code uint64, digest []byte, err error) {
	code, n, err := uvarint(b)
	if err != nil {
		return 0, nil, err
	}
	l, m, err := uvarint(b[n:])
	if err != nil {
		return 0, nil, err
	}
	digest = b[n+m:]
	if uint64(len(digest)) != l {
		return 0, nil, fmt.Errorf("%w: digest is %d bytes, header says %d", ErrMalformed, len(digest), l)
	}
	return code, digest, nil
}

// Parse checks that b is a multihash of a supported function with its
// full-length digest and returns it.
func Parse(b []byte) (Multihash, error) {
	code, digest, err := Decode(b)
	if err != nil {
		return nil, err
	}
	if _, err := NewHasher(code); err != nil {
		return nil, err
	}
	if len(digest) != DigestLen {
		return nil, fmt.Errorf("%w: a %d-byte digest, want %d", ErrMalformed, len(digest), DigestLen)
	}
	return Multihash(append([]byte(nil), b...)), nil
}

// ParseHex parses a hex multihash ("1220…", an optional 0x or multibase
// "f" prefix).
func ParseHex(s string) (Multihash, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "f")
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return Parse(b)
}

// Code is the hash function's code (m must be valid).
func (m Multihash) Code() uint64 {
	c, _, _ := Decode(m)
	return c
}

// Hex is the multihash in lowercase hex.
func (m Multihash) Hex() string { return hex.EncodeToString(m) }

// String is Hex.
func (m Multihash) String() string { return m.Hex() }

// Verify checks data against m; a mismatch is ErrMismatch.
func (m Multihash) Verify(data []byte) error {
	v, err := m.Verifier()
	if err != nil {
		return err
	}
	v.Write(data)
	return v.Check()
}

// Verifier hashes streamed content; Check compares it with the multihash.
type Verifier struct {
	m Multihash
	h hash.Hash
	n uint64
}

// Verifier returns a streaming verifier for m.
func (m Multihash) Verifier() (*Verifier, error) {
	if _, err := Parse(m); err != nil {
		return nil, err
	}
	h, _ := NewHasher(m.Code())
	return &Verifier{m: m, h: h}, nil
}

// Write implements io.Writer.
func (v *Verifier) Write(p []byte) (int, error) {
	v.n += uint64(len(p))
	return v.h.Write(p)
}

// Size is the number of bytes written.
func (v *Verifier) Size() uint64 { return v.n }

// Check reports ErrMismatch unless the content written hashes to the multihash.
func (v *Verifier) Check() error {
	got := New(v.m.Code(), v.h.Sum(nil))
	if string(got) != string(v.m) {
		return fmt.Errorf("%w: want %s, content hashes to %s", ErrMismatch, v.m.Hex(), got.Hex())
	}
	return nil
}

// MarshalJSON writes the multihash as a hex string.
func (m Multihash) MarshalJSON() ([]byte, error) { return []byte(`"` + m.Hex() + `"`), nil }

// UnmarshalJSON reads a hex string (any supported multihash).
func (m *Multihash) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("%w: not a JSON string", ErrMalformed)
	}
	p, err := ParseHex(string(b[1 : len(b)-1]))
	if err != nil {
		return err
	}
	*m = p
	return nil
}
