package wire

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
	"github.com/ethereum/go-ethereum/crypto"
)

// Head is one version of a volume's metadata as the relays hold it: a
// record signed by the writer (the holder of a write token without a path
// prefix) that links to the previous version by hash. Its body — the
// sealed full manifest (Full) or the sealed change set since the previous
// version — is opaque to relays; they check only its hash.
//
// The hash chain lets a reader check any head back to the root anchored on
// chain (the StorageCommitment checkpoint), and detect a relay that serves
// a stale or forked head.
type Head struct {
	Volume  [32]byte `cbor:"1,keyasint"`
	Version uint64   `cbor:"2,keyasint"`
	// Prev is the Hash of the head of Version-1 (for the first head written
	// after a volume committed by older clients: that version's manifest
	// root; zero for version 1).
	Prev [32]byte `cbor:"3,keyasint"`
	// Base is the version of the full manifest the reader starts from:
	// Version itself when Full, else the Base of the previous head.
	Base     uint64   `cbor:"4,keyasint"`
	Full     bool     `cbor:"5,keyasint"`
	Object   [32]byte `cbor:"6,keyasint"` // Full: object id of the sealed manifest
	BodyHash [32]byte `cbor:"7,keyasint"` // chunk-tree root of the sealed body
	BodySize uint64   `cbor:"8,keyasint"`
	Time     int64    `cbor:"9,keyasint"` // unix seconds, when signed
	Token    []byte   `cbor:"10,keyasint"`
	Sig      []byte   `cbor:"11,keyasint"`
}

// LogEntry is one element of an OpLog answer: a head record and, for a
// change set (not Full), its sealed body.
type LogEntry struct {
	Head []byte `cbor:"1,keyasint"`
	Body []byte `cbor:"2,keyasint,omitempty"`
}

// ErrHead reports a head record that is malformed or not validly signed.
var ErrHead = errors.New("wire: invalid head")

// SigningHash is what the writer signs: keccak256 of the encoding with Sig
// cleared.
func (h *Head) SigningHash() [32]byte {
	c := *h
	c.Sig = nil
	b, err := encMode.Marshal(&c)
	if err != nil {
		panic(err)
	}
	return crypto.Keccak256Hash([]byte("cbfs-head-v1"), b)
}

// Encode is the canonical encoding.
func (h *Head) Encode() []byte {
	b, err := encMode.Marshal(h)
	if err != nil {
		panic(err)
	}
	return b
}

// HeadHash is the hash a successor's Prev and an anchored checkpoint name
// a head by: keccak256 over its canonical encoding, signature included.
func HeadHash(enc []byte) [32]byte {
	return crypto.Keccak256Hash([]byte("cbfs-head-hash-v1"), enc)
}

// DecodeHead parses a canonical head encoding (structure only).
func DecodeHead(b []byte) (*Head, error) {
	var h Head
	if err := Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHead, err)
	}
	if !bytes.Equal(h.Encode(), b) {
		return nil, fmt.Errorf("%w: not canonical", ErrHead)
	}
	if h.Version == 0 || h.Base > h.Version || (h.Full && h.Base != h.Version) {
		return nil, fmt.Errorf("%w: version %d base %d full %v", ErrHead, h.Version, h.Base, h.Full)
	}
	return &h, nil
}

// Check verifies that h is a head of vol signed by the holder of a token
// that allowed writing the whole volume when h was signed. Revocation is
// the relays' concern at write time; a reader checks history.
func (h *Head) Check(vol [32]byte) error {
	if h.Volume != vol {
		return fmt.Errorf("%w: head of volume %x, want %x", ErrHead, h.Volume[:8], vol[:8])
	}
	tok, err := captoken.Decode(h.Token)
	if err != nil {
		return fmt.Errorf("%w: token: %v", ErrHead, err)
	}
	return h.CheckWith(vol, tok, true)
}

// CheckWith is Check with the head's token already decoded; verifyToken
// false skips verifying the token's own signature chain, for a caller that
// has just verified the very same token (a relay, for the request's).
func (h *Head) CheckWith(vol [32]byte, tok *captoken.Token, verifyToken bool) error {
	if h.Volume != vol {
		return fmt.Errorf("%w: head of volume %x, want %x", ErrHead, h.Volume[:8], vol[:8])
	}
	if tok.Volume != vol {
		return fmt.Errorf("%w: token for another volume", ErrHead)
	}
	c := tok.Caveats()
	if verifyToken {
		var err error
		if c, err = tok.Verify(time.Unix(h.Time, 0)); err != nil {
			return fmt.Errorf("%w: token at signing time: %v", ErrHead, err)
		}
	}
	if c.Perms&captoken.PermWrite == 0 || c.Prefix != "" {
		return fmt.Errorf("%w: token allows %s under %q, not writing the whole volume", ErrHead, c.Perms, c.Prefix)
	}
	if err := tok.VerifyHolder(h.SigningHash(), h.Sig); err != nil {
		return fmt.Errorf("%w: signature: %v", ErrHead, err)
	}
	return nil
}
