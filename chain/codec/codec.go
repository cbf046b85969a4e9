// Package codec owns Cowboy's canonical CBOR encoding (RFC 8949 §4.2.1 core
// deterministic encoding). Everything that feeds a hash, a signature or the
// state root is encoded through this package, and everything decoded from the
// outside world is checked to be in canonical form: a value decodes only if
// re-encoding it reproduces the input byte for byte.
package codec

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/fxamacker/cbor/v2"
)

// ErrNonCanonical is returned when input decodes but is not the canonical
// encoding of the decoded value (for example a non-minimal integer, an
// unsorted map or an indefinite-length item).
var ErrNonCanonical = errors.New("non-canonical CBOR encoding")

// Codec holds configured encoding and decoding modes. The zero value is not
// usable; use New or the package-level Default.
type Codec struct {
	enc cbor.EncMode
	dec cbor.DecMode
}

// New builds a Codec with core deterministic encoding and strict decoding
// limits suitable for untrusted input.
func New() (*Codec, error) {
	encOpts := cbor.CoreDetEncOptions()
	encOpts.BigIntConvert = cbor.BigIntConvertShortest
	enc, err := encOpts.EncMode()
	if err != nil {
		return nil, fmt.Errorf("codec: encoder mode: %w", err)
	}
	dec, err := cbor.DecOptions{
		DupMapKey:        cbor.DupMapKeyEnforcedAPF,
		IndefLength:      cbor.IndefLengthForbidden,
		MaxNestedLevels:  32,
		MaxArrayElements: 1 << 20,
		MaxMapPairs:      1 << 20,
		UTF8:             cbor.UTF8RejectInvalid,
		NaN:              cbor.NaNDecodeForbidden,
		Inf:              cbor.InfDecodeForbidden,
	}.DecMode()
	if err != nil {
		return nil, fmt.Errorf("codec: decoder mode: %w", err)
	}
	return &Codec{enc: enc, dec: dec}, nil
}

// std is immutable after initialisation; it carries configuration only.
var std = mustNew()

func mustNew() *Codec {
	c, err := New()
	if err != nil {
		panic(err)
	}
	return c
}

// Marshal encodes v canonically.
func Marshal(v any) ([]byte, error) { return std.Marshal(v) }

// Unmarshal decodes canonical data into v; see Codec.Unmarshal.
func Unmarshal(data []byte, v any) error { return std.Unmarshal(data, v) }

// MustMarshal encodes v and panics on failure. Use only for values whose
// types are known to encode (fixed structs of the chain's own types).
func MustMarshal(v any) []byte {
	b, err := std.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("codec: marshal %T: %v", v, err))
	}
	return b
}

// Marshal encodes v canonically.
func (c *Codec) Marshal(v any) ([]byte, error) {
	b, err := c.enc.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cbor encode %T: %w", v, err)
	}
	return b, nil
}

// Unmarshal decodes data into v and rejects trailing bytes and any encoding
// that is not the canonical encoding of the decoded value.
func (c *Codec) Unmarshal(data []byte, v any) error {
	rest, err := c.dec.UnmarshalFirst(data, v)
	if err != nil {
		return fmt.Errorf("cbor decode %T: %w", v, err)
	}
	if len(rest) != 0 {
		return fmt.Errorf("cbor decode %T: %d trailing bytes", v, len(rest))
	}
	again, err := c.enc.Marshal(v)
	if err != nil {
		return fmt.Errorf("cbor re-encode %T: %w", v, err)
	}
	if !bytes.Equal(again, data) {
		return fmt.Errorf("cbor decode %T: %w", v, ErrNonCanonical)
	}
	return nil
}

// UnmarshalStored decodes data this node encoded itself with Marshal and
// stored (state values, stored headers and receipts, its own logs): it
// rejects trailing bytes but skips Unmarshal's canonical re-encoding, which
// cannot fail for such data and was half of all decoding time under load.
// Everything received from outside goes through Unmarshal.
func UnmarshalStored(data []byte, v any) error {
	rest, err := std.dec.UnmarshalFirst(data, v)
	if err != nil {
		return fmt.Errorf("cbor decode %T: %w", v, err)
	}
	if len(rest) != 0 {
		return fmt.Errorf("cbor decode %T: %d trailing bytes", v, len(rest))
	}
	return nil
}

// Valid reports whether data is one well-formed canonical CBOR item of any
// shape (used for opaque payloads such as event data).
func Valid(data []byte) error {
	var v any
	return std.Unmarshal(data, &v)
}
