// Package wire defines the CBFS relay protocol: one request/response exchange
// per QUIC stream, ALPN "cbfs/1".
//
// A message is a frame: a 4-byte big-endian length followed by that many
// bytes of canonical CBOR (at most MaxFrame). A request frame may be followed
// by exactly Request.Size raw body bytes (PUT); a response frame may be
// followed by exactly Response.Size raw body bytes (GET). The client closes
// its send side after the request body; the server closes after the response
// body.
//
// Every request except STAT carries a capability token (package captoken)
// and a signature by the token holder over SigningHash, which covers every
// field including the addressed relay, a timestamp and a random nonce; relays
// reject stale timestamps and replayed nonces.
package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cowboy-foundation/cowboy/chain/storage/merkle"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/fxamacker/cbor/v2"
)

// ALPN is the TLS application protocol.
const ALPN = "cbfs/1"

// MaxFrame bounds a CBOR frame.
const MaxFrame = 64 << 10

// MaxChallenge bounds the byte range of one CHALLENGE.
const MaxChallenge = 64 << 10

// ErrFrame reports a malformed frame.
var ErrFrame = errors.New("wire: malformed frame")

// Op is a request operation.
type Op uint8

// Operations.
const (
	OpPut Op = iota + 1
	OpGet
	OpHas
	OpDelete
	OpList
	OpChallenge
	OpStat
	// OpCommit stores a signed metadata update (Request.Head, a Head) with
	// its sealed body as the volume's new head, compare-and-swap: the relay
	// accepts only Version == head.Version+1 and Prev == hash of its head
	// (any version when it has no head yet) and answers StatusConflict
	// otherwise. Needs write permission and a token without a path prefix.
	OpCommit
	// OpHead returns the volume's head (Response.Head), no body.
	OpHead
	// OpLog returns the head records (and delta bodies) of versions
	// Request.Offset..Request.Version (0: up to the head) as a body: the
	// canonical CBOR of []LogEntry, at most MaxLog entries.
	OpLog
)

// MaxLog bounds the entries of one OpLog answer.
const MaxLog = 4096

func (o Op) String() string {
	switch o {
	case OpPut:
		return "put"
	case OpGet:
		return "get"
	case OpHas:
		return "has"
	case OpDelete:
		return "delete"
	case OpList:
		return "list"
	case OpChallenge:
		return "challenge"
	case OpStat:
		return "stat"
	case OpCommit:
		return "commit"
	case OpHead:
		return "head"
	case OpLog:
		return "log"
	}
	return fmt.Sprintf("op%d", uint8(o))
}

// Kind distinguishes object types stored for a volume.
type Kind uint8

// Kinds.
const (
	KindShard Kind = iota
	// KindManifest objects hold an encrypted volume manifest; writing one
	// requires a token without a path prefix.
	KindManifest
	// KindPending objects hold an encrypted file entry written by a
	// path-prefix-restricted writer, waiting to be merged into the manifest
	// by a whole-volume writer. Their id must be PendingID(token prefix,
	// Request.Suffix), which the relay checks: the object is bound to the
	// writer's prefix without revealing the path.
	KindPending
	// KindPlacement objects hold a relay's placement leaves for one
	// commitment version (canonical CBOR []challenge.Leaf, sorted by shard
	// id): what the relay needs to answer the Storage Manager's challenges.
	// Writing one requires a token without a path prefix.
	KindPlacement
)

// PlacementID is the object id of a relay's placement leaves for version
// of a volume with the given shards_root.
func PlacementID(vol [32]byte, version uint64, shardsRoot [32]byte) [32]byte {
	return crypto.Keccak256Hash([]byte("cbfs-placement-v1"), vol[:], binary.BigEndian.AppendUint64(nil, version), shardsRoot[:])
}

// PendingID is the object id of a pending entry for a path prefix ("" for
// the whole volume) and a 32-byte suffix chosen by the writer.
func PendingID(prefix string, suffix []byte) [32]byte {
	return crypto.Keccak256Hash([]byte("cbfs-pending-v1"), crypto.Keccak256([]byte(prefix)), suffix)
}

// Request is a request header.
type Request struct {
	Op      Op       `cbor:"1,keyasint"`
	Volume  [32]byte `cbor:"2,keyasint"`
	ID      [32]byte `cbor:"3,keyasint"`
	Kind    Kind     `cbor:"4,keyasint"`
	Hash    [32]byte `cbor:"5,keyasint"` // PUT: chunk-tree root of the body
	Size    uint64   `cbor:"6,keyasint"` // PUT: body length
	Offset  uint64   `cbor:"7,keyasint"` // GET/CHALLENGE range start
	Length  uint64   `cbor:"8,keyasint"` // GET range length (0 = to end) / CHALLENGE length
	Version uint64   `cbor:"9,keyasint"` // PUT manifest: manifest version
	Relay   [20]byte `cbor:"10,keyasint"`
	Time    int64    `cbor:"11,keyasint"` // unix seconds
	Nonce   [16]byte `cbor:"12,keyasint"`
	Token   []byte   `cbor:"13,keyasint"`
	Sig     []byte   `cbor:"14,keyasint"`
	Suffix  []byte   `cbor:"15,keyasint,omitempty"` // PUT KindPending: see PendingID
	Head    []byte   `cbor:"16,keyasint,omitempty"` // COMMIT: canonical CBOR of a signed Head
	// COMMIT of a full manifest: the relay is behind (missed versions, or
	// holds a minority fork); accept any version above its head. Writers
	// send it only when their base head is held by a relay majority.
	Catchup bool `cbor:"17,keyasint,omitempty"`
}

// SigningHash is the hash the token holder signs: keccak256 of the canonical
// encoding with Sig cleared.
func (r *Request) SigningHash() [32]byte {
	c := *r
	c.Sig = nil
	b, err := encMode.Marshal(&c)
	if err != nil {
		panic(err)
	}
	return crypto.Keccak256Hash([]byte("cbfs-wire-v1"), b)
}

// Status is a response status.
type Status uint16

// Statuses.
const (
	StatusOK Status = iota
	StatusNotFound
	StatusUnauthorized
	StatusExpired
	StatusFull
	StatusCorrupt
	StatusBadRequest
	StatusInternal
	StatusUnavailable
	// StatusConflict: a COMMIT whose version does not follow the head.
	StatusConflict
)

func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusNotFound:
		return "not found"
	case StatusUnauthorized:
		return "unauthorized"
	case StatusExpired:
		return "token expired"
	case StatusFull:
		return "relay full"
	case StatusCorrupt:
		return "corrupt"
	case StatusBadRequest:
		return "bad request"
	case StatusInternal:
		return "internal error"
	case StatusUnavailable:
		return "unavailable"
	case StatusConflict:
		return "conflict"
	}
	return fmt.Sprintf("status%d", uint16(s))
}

// ObjectInfo describes one stored object.
type ObjectInfo struct {
	ID      [32]byte `cbor:"1,keyasint"`
	Kind    Kind     `cbor:"2,keyasint"`
	Version uint64   `cbor:"3,keyasint"`
	Size    uint64   `cbor:"4,keyasint"`
	Hash    [32]byte `cbor:"5,keyasint"`
}

// Stat describes a relay.
type Stat struct {
	Address  [20]byte `cbor:"1,keyasint"`
	Capacity uint64   `cbor:"2,keyasint"`
	Used     uint64   `cbor:"3,keyasint"`
	Objects  uint64   `cbor:"4,keyasint"`
	Version  string   `cbor:"5,keyasint"`
}

// Challenge is the answer to a CHALLENGE: the chunks covering the asked
// range and their proofs against the shard hash.
type Challenge struct {
	First  uint64         `cbor:"1,keyasint"` // index of the first chunk
	Chunks [][]byte       `cbor:"2,keyasint"`
	Proofs []merkle.Proof `cbor:"3,keyasint"`
}

// Verify checks a challenge answer against the shard hash and that it covers
// [off, off+n).
func (c *Challenge) Verify(root [32]byte, off, n uint64) error {
	if len(c.Chunks) != len(c.Proofs) || len(c.Chunks) == 0 {
		return merkle.ErrBadProof
	}
	if c.First != off/merkle.ChunkSize || c.First+uint64(len(c.Chunks)) < (off+max(n, 1)+merkle.ChunkSize-1)/merkle.ChunkSize {
		return fmt.Errorf("challenge does not cover range: %w", merkle.ErrBadProof)
	}
	for i, ch := range c.Chunks {
		if c.Proofs[i].Index != c.First+uint64(i) {
			return merkle.ErrBadProof
		}
		if err := merkle.VerifyChunk(root, ch, c.Proofs[i]); err != nil {
			return err
		}
	}
	return nil
}

// Response is a response header.
type Response struct {
	Status    Status       `cbor:"1,keyasint"`
	Error     string       `cbor:"2,keyasint,omitempty"`
	Size      uint64       `cbor:"3,keyasint,omitempty"` // body bytes following
	Hash      [32]byte     `cbor:"4,keyasint"`
	Exists    bool         `cbor:"5,keyasint,omitempty"`
	Objects   []ObjectInfo `cbor:"6,keyasint,omitempty"`
	Challenge *Challenge   `cbor:"7,keyasint,omitempty"`
	Stat      *Stat        `cbor:"8,keyasint,omitempty"`
	Head      []byte       `cbor:"9,keyasint,omitempty"` // HEAD, and COMMIT conflicts: the current head
}

var (
	encMode = must(cbor.CoreDetEncOptions().EncMode())
	decMode = must(cbor.DecOptions{
		DupMapKey:         cbor.DupMapKeyEnforcedAPF,
		MaxArrayElements:  1 << 16,
		MaxMapPairs:       64,
		MaxNestedLevels:   8,
		IndefLength:       cbor.IndefLengthForbidden,
		ExtraReturnErrors: cbor.ExtraDecErrorUnknownField,
	}.DecMode())
)

// WriteFrame encodes v as one frame.
func WriteFrame(w io.Writer, v any) error {
	b, err := encMode.Marshal(v)
	if err != nil {
		return fmt.Errorf("wire: encode: %w", err)
	}
	if len(b) > MaxFrame {
		return fmt.Errorf("%w: %d bytes", ErrFrame, len(b))
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("wire: write frame: %w", err)
	}
	return nil
}

// ReadFrame reads one frame into v.
func ReadFrame(r io.Reader, v any) error {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return fmt.Errorf("wire: read frame length: %w", err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return fmt.Errorf("%w: length %d", ErrFrame, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return fmt.Errorf("wire: read frame: %w", err)
	}
	return Unmarshal(b, v)
}

// Unmarshal decodes a frame payload strictly.
func Unmarshal(b []byte, v any) error {
	if err := decMode.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %v", ErrFrame, err)
	}
	return nil
}

// Marshal encodes canonically.
func Marshal(v any) ([]byte, error) { return encMode.Marshal(v) }

// ReadRequest reads and validates a request header.
func ReadRequest(r io.Reader) (*Request, error) {
	var req Request
	if err := ReadFrame(r, &req); err != nil {
		return nil, err
	}
	if req.Op < OpPut || req.Op > OpLog {
		return nil, fmt.Errorf("%w: unknown op %d", ErrFrame, req.Op)
	}
	if req.Kind > KindStripes {
		return nil, fmt.Errorf("%w: unknown kind %d", ErrFrame, req.Kind)
	}
	return &req, nil
}

// Equal reports whether two requests encode identically (for tests).
func Equal(a, b *Request) bool {
	x, _ := encMode.Marshal(a)
	y, _ := encMode.Marshal(b)
	return bytes.Equal(x, y)
}

// must panics on a codec configuration error (a programming error caught by
// any test, never by input).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
