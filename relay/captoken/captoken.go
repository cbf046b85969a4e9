// Package captoken implements CBFS capability tokens.
//
// A token is a chain of signed links over one volume. Link 0 is signed by
// the volume owner (whose address is the first 20 bytes of the volume id, so
// the root signature is verifiable offline without the chain); every later
// link is signed by the grantee of the link before it and may only narrow:
// fewer permissions, an earlier or equal expiry, and a path prefix inside the
// parent's prefix. The holder of a token is the grantee of its last link; on
// each request the holder signs the request digest with its key
// (SignRequest / VerifyHolder) so a stolen token alone is useless.
//
// Tokens encode to canonical CBOR (RFC 8949 core deterministic encoding);
// Decode rejects any byte string that does not re-encode identically.
//
// What a relay can enforce: the volume id, the permission bits, expiry,
// grantee possession, revocation of any link, and - for manifest objects
// only - that a path-prefix-restricted token cannot replace the volume
// manifest and can only write pending entries whose object id is derived
// from its own prefix (see relay/wire.PendingID). Shards are opaque ids, so
// a relay cannot tell which path a shard belongs to: path prefixes are
// enforced for shard data by the client and manifest layer, and readers
// with the volume key can decrypt anything they can fetch.
package captoken

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/fxamacker/cbor/v2"
)

// Stable errors. Verification failures wrap one of these.
var (
	ErrMalformed     = errors.New("captoken: malformed token")
	ErrExpired       = errors.New("captoken: token expired")
	ErrBadSignature  = errors.New("captoken: bad signature")
	ErrWidened       = errors.New("captoken: delegation widens its parent")
	ErrWrongVolume   = errors.New("captoken: token is for another volume")
	ErrWrongGrantee  = errors.New("captoken: request not signed by the token holder")
	ErrRevoked       = errors.New("captoken: token revoked")
	ErrPermission    = errors.New("captoken: permission denied")
	ErrPrefixEscaped = errors.New("captoken: path outside the token prefix")
)

// Perm is a permission bit set.
type Perm uint8

// Permissions.
const (
	PermRead Perm = 1 << iota
	PermWrite
	PermList
	PermDelete

	PermAll = PermRead | PermWrite | PermList | PermDelete
)

// String renders perms as e.g. "rwld".
func (p Perm) String() string {
	var b strings.Builder
	for i, c := range "rwld" {
		if p&(1<<i) != 0 {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// ParsePerm parses "rwld" style strings (any subset, any order).
func ParsePerm(s string) (Perm, error) {
	var p Perm
	for _, c := range s {
		switch c {
		case 'r':
			p |= PermRead
		case 'w':
			p |= PermWrite
		case 'l':
			p |= PermList
		case 'd':
			p |= PermDelete
		case '-':
		default:
			return 0, fmt.Errorf("captoken: unknown permission %q", c)
		}
	}
	return p, nil
}

// VolumeID identifies a volume: owner address (20 bytes) || salt (12 bytes).
type VolumeID [32]byte

// NewVolumeID builds a volume id for owner with the given salt.
func NewVolumeID(owner common.Address, salt [12]byte) VolumeID {
	var v VolumeID
	copy(v[:20], owner[:])
	copy(v[20:], salt[:])
	return v
}

// Owner is the address allowed to sign root links for this volume.
func (v VolumeID) Owner() common.Address { return common.BytesToAddress(v[:20]) }

// String is the lowercase hex form.
func (v VolumeID) String() string { return hex.EncodeToString(v[:]) }

// ParseVolumeID parses the hex form (with or without 0x).
func ParseVolumeID(s string) (VolumeID, error) {
	var v VolumeID
	b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
	if err != nil || len(b) != len(v) {
		return v, fmt.Errorf("captoken: bad volume id %q", s)
	}
	copy(v[:], b)
	return v, nil
}

// Caveats are the restrictions carried by one link.
type Caveats struct {
	Perms  Perm   `cbor:"1,keyasint"`
	Prefix string `cbor:"2,keyasint,omitempty"` // "" or a clean absolute path
	Expiry int64  `cbor:"3,keyasint"`           // unix seconds, required
	// Grantee is the 33-byte compressed secp256k1 key of the holder.
	Grantee []byte `cbor:"4,keyasint"`
	// WrappedKey optionally carries the volume key encrypted (ECIES) to the
	// grantee. Relays cannot read it.
	WrappedKey []byte `cbor:"5,keyasint,omitempty"`
}

// Link is one signed step of the chain.
type Link struct {
	Caveats Caveats `cbor:"1,keyasint"`
	Sig     []byte  `cbor:"2,keyasint"` // 65-byte [R||S||V]
}

// Token is a capability token.
type Token struct {
	Version uint8    `cbor:"1,keyasint"`
	Volume  VolumeID `cbor:"2,keyasint"`
	Links   []Link   `cbor:"3,keyasint"`
}

const (
	version  = 1
	maxLinks = 16
	maxSize  = 16 << 10
)

var (
	encMode = must(cbor.CoreDetEncOptions().EncMode())
	decMode = must(cbor.DecOptions{
		DupMapKey:         cbor.DupMapKeyEnforcedAPF,
		MaxArrayElements:  1024,
		MaxMapPairs:       64,
		MaxNestedLevels:   8,
		IndefLength:       cbor.IndefLengthForbidden,
		ExtraReturnErrors: cbor.ExtraDecErrorUnknownField,
	}.DecMode())
)

// Encode returns the canonical CBOR encoding.
func (t *Token) Encode() []byte {
	b, err := encMode.Marshal(t)
	if err != nil {
		panic(fmt.Sprintf("captoken: encode: %v", err)) // only plain types inside
	}
	return b
}

// Decode parses a canonical token encoding. It checks structure only; use
// Verify for signatures and caveats.
func Decode(b []byte) (*Token, error) {
	if len(b) > maxSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrMalformed, len(b))
	}
	var t Token
	if err := decMode.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if t.Version != version || len(t.Links) == 0 || len(t.Links) > maxLinks {
		return nil, fmt.Errorf("%w: version %d, %d links", ErrMalformed, t.Version, len(t.Links))
	}
	if !bytes.Equal(t.Encode(), b) {
		return nil, fmt.Errorf("%w: not canonical", ErrMalformed)
	}
	return &t, nil
}

// ParseHex decodes the hex text form (as printed by Hex).
func ParseHex(s string) (*Token, error) {
	b, err := hex.DecodeString(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "0x")))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return Decode(b)
}

// Hex is the text form of the token.
func (t *Token) Hex() string { return hex.EncodeToString(t.Encode()) }

func linkDigest(vol VolumeID, prev [32]byte, c *Caveats) [32]byte {
	cb, err := encMode.Marshal(c)
	if err != nil {
		panic(err)
	}
	return crypto.Keccak256Hash([]byte("cbfs-captoken-v1"), vol[:], prev[:], cb)
}

func linkID(digest [32]byte, sig []byte) [32]byte {
	return crypto.Keccak256Hash(digest[:], sig)
}

// LinkIDs returns the revocation id of every link, root first. Revoking any
// of them revokes the token and everything delegated from that link.
func (t *Token) LinkIDs() [][32]byte {
	ids := make([][32]byte, 0, len(t.Links))
	var prev [32]byte
	for i := range t.Links {
		d := linkDigest(t.Volume, prev, &t.Links[i].Caveats)
		prev = linkID(d, t.Links[i].Sig)
		ids = append(ids, prev)
	}
	return ids
}

// ID is the id of the last link.
func (t *Token) ID() [32]byte {
	ids := t.LinkIDs()
	return ids[len(ids)-1]
}

// Caveats returns the effective (last) caveats.
func (t *Token) Caveats() Caveats { return t.Links[len(t.Links)-1].Caveats }

// Holder returns the compressed key of the holder.
func (t *Token) Holder() []byte { return t.Caveats().Grantee }

// CleanPrefix validates and normalises a prefix ("" means whole volume).
func CleanPrefix(p string) (string, error) {
	if p == "" || p == "/" {
		return "", nil
	}
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("captoken: prefix %q must be absolute", p)
	}
	return path.Clean(p), nil
}

// within reports whether p is prefix itself or below it.
func within(prefix, p string) bool {
	if prefix == "" {
		return true
	}
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

func sign(key *ecdsa.PrivateKey, d [32]byte) ([]byte, error) {
	sig, err := crypto.Sign(d[:], key)
	if err != nil {
		return nil, fmt.Errorf("captoken: sign: %w", err)
	}
	return sig, nil
}

func checkCaveats(c *Caveats) error {
	if c.Perms == 0 || c.Perms&^PermAll != 0 {
		return fmt.Errorf("%w: perms %d", ErrMalformed, c.Perms)
	}
	if c.Expiry <= 0 {
		return fmt.Errorf("%w: no expiry", ErrMalformed)
	}
	if len(c.Grantee) != 33 {
		return fmt.Errorf("%w: grantee must be a 33-byte compressed key", ErrMalformed)
	}
	if p, err := CleanPrefix(c.Prefix); err != nil || p != c.Prefix {
		return fmt.Errorf("%w: prefix %q not clean", ErrMalformed, c.Prefix)
	}
	return nil
}

// Issue creates a root token. owner must own vol.
func Issue(owner *ecdsa.PrivateKey, vol VolumeID, c Caveats) (*Token, error) {
	if crypto.PubkeyToAddress(owner.PublicKey) != vol.Owner() {
		return nil, fmt.Errorf("%w: signer does not own volume %s", ErrWrongVolume, vol)
	}
	if err := checkCaveats(&c); err != nil {
		return nil, err
	}
	sig, err := sign(owner, linkDigest(vol, [32]byte{}, &c))
	if err != nil {
		return nil, err
	}
	return &Token{Version: version, Volume: vol, Links: []Link{{Caveats: c, Sig: sig}}}, nil
}

// Delegate appends a narrower link signed by holder (the current grantee).
// The receiver is not modified.
func (t *Token) Delegate(holder *ecdsa.PrivateKey, c Caveats) (*Token, error) {
	if !bytes.Equal(crypto.CompressPubkey(&holder.PublicKey), t.Holder()) {
		return nil, fmt.Errorf("%w: only the holder may delegate", ErrWrongGrantee)
	}
	if len(t.Links) >= maxLinks {
		return nil, fmt.Errorf("%w: chain too long", ErrMalformed)
	}
	if err := checkCaveats(&c); err != nil {
		return nil, err
	}
	if err := narrows(t.Caveats(), c); err != nil {
		return nil, err
	}
	ids := t.LinkIDs()
	sig, err := sign(holder, linkDigest(t.Volume, ids[len(ids)-1], &c))
	if err != nil {
		return nil, err
	}
	out := &Token{Version: t.Version, Volume: t.Volume, Links: append(append([]Link(nil), t.Links...), Link{Caveats: c, Sig: sig})}
	return out, nil
}

func narrows(parent, child Caveats) error {
	if child.Perms&^parent.Perms != 0 {
		return fmt.Errorf("%w: perms %s not within %s", ErrWidened, child.Perms, parent.Perms)
	}
	if child.Expiry > parent.Expiry {
		return fmt.Errorf("%w: expiry extended", ErrWidened)
	}
	if parent.Prefix != "" && (child.Prefix == "" || !within(parent.Prefix, child.Prefix)) {
		return fmt.Errorf("%w: prefix %q outside %q", ErrWidened, child.Prefix, parent.Prefix)
	}
	return nil
}

// Verify checks the whole chain offline at time now and returns the
// effective caveats. It does not consult revocation (see Check).
func (t *Token) Verify(now time.Time) (Caveats, error) {
	if t.Version != version || len(t.Links) == 0 || len(t.Links) > maxLinks {
		return Caveats{}, ErrMalformed
	}
	var prev [32]byte
	var prevGrantee []byte
	for i := range t.Links {
		l := &t.Links[i]
		if err := checkCaveats(&l.Caveats); err != nil {
			return Caveats{}, fmt.Errorf("link %d: %w", i, err)
		}
		if len(l.Sig) != 65 {
			return Caveats{}, fmt.Errorf("link %d: %w", i, ErrBadSignature)
		}
		d := linkDigest(t.Volume, prev, &l.Caveats)
		pub, err := crypto.SigToPub(d[:], l.Sig)
		if err != nil {
			return Caveats{}, fmt.Errorf("link %d: %w", i, ErrBadSignature)
		}
		if i == 0 {
			if crypto.PubkeyToAddress(*pub) != t.Volume.Owner() {
				return Caveats{}, fmt.Errorf("link 0 not signed by volume owner: %w", ErrBadSignature)
			}
		} else {
			if !bytes.Equal(crypto.CompressPubkey(pub), prevGrantee) {
				return Caveats{}, fmt.Errorf("link %d not signed by previous grantee: %w", i, ErrBadSignature)
			}
			if err := narrows(t.Links[i-1].Caveats, l.Caveats); err != nil {
				return Caveats{}, fmt.Errorf("link %d: %w", i, err)
			}
		}
		if now.Unix() >= l.Caveats.Expiry {
			return Caveats{}, fmt.Errorf("link %d expired at %s: %w", i, time.Unix(l.Caveats.Expiry, 0).UTC().Format(time.RFC3339), ErrExpired)
		}
		prev = linkID(d, l.Sig)
		prevGrantee = l.Caveats.Grantee
	}
	return t.Caveats(), nil
}

// RevocationList tells whether a link id has been revoked. The local
// implementations live in this package; a chain-anchored one will follow.
type RevocationList interface {
	Revoked(ctx context.Context, id [32]byte) (bool, error)
}

// Check verifies the token, checks revocation of every link, that it is for
// vol, and that it grants perm.
func (t *Token) Check(ctx context.Context, now time.Time, vol VolumeID, perm Perm, rl RevocationList) (Caveats, error) {
	if t.Volume != vol {
		return Caveats{}, ErrWrongVolume
	}
	c, err := t.Verify(now)
	if err != nil {
		return Caveats{}, err
	}
	return c, grants(ctx, c, t.LinkIDs(), perm, rl)
}

// grants checks, for a verified chain with effective caveats c and link
// ids, that no link is revoked and that c grants perm.
func grants(ctx context.Context, c Caveats, ids [][32]byte, perm Perm, rl RevocationList) error {
	if rl != nil {
		for _, id := range ids {
			r, err := rl.Revoked(ctx, id)
			if err != nil {
				return fmt.Errorf("captoken: revocation lookup: %w", err)
			}
			if r {
				return fmt.Errorf("link %x: %w", id[:6], ErrRevoked)
			}
		}
	}
	if c.Perms&perm != perm {
		return fmt.Errorf("%w: need %s, have %s", ErrPermission, perm, c.Perms)
	}
	return nil
}

// AllowsPath reports whether c covers the absolute path p (cleaned first, so
// "/a/../b" is judged as "/b").
func (c Caveats) AllowsPath(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("%w: %q not absolute", ErrPrefixEscaped, p)
	}
	if !within(c.Prefix, path.Clean(p)) {
		return fmt.Errorf("%w: %q not under %q", ErrPrefixEscaped, p, c.Prefix)
	}
	return nil
}

// RequestDigest is what a holder signs for one request: a domain tag plus the
// caller supplied request hash.
func RequestDigest(req [32]byte) [32]byte {
	return crypto.Keccak256Hash([]byte("cbfs-request-v1"), req[:])
}

// SignRequest signs a request hash with the holder key.
func SignRequest(key *ecdsa.PrivateKey, req [32]byte) ([]byte, error) {
	return sign(key, RequestDigest(req))
}

// VerifyHolder checks that sig over req was made by the token holder.
func (t *Token) VerifyHolder(req [32]byte, sig []byte) error {
	if len(sig) != 65 {
		return ErrWrongGrantee
	}
	d := RequestDigest(req)
	pub, err := crypto.SigToPub(d[:], sig)
	if err != nil || !bytes.Equal(crypto.CompressPubkey(pub), t.Holder()) {
		return ErrWrongGrantee
	}
	return nil
}

// must panics on a codec configuration error (a programming error caught by
// any test, never by input).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
