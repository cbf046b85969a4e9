package smt

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/fxamacker/cbor/v2"
)

// ErrInvalidProof is wrapped by every error VerifyProof returns.
var ErrInvalidProof = errors.New("smt: invalid proof")

// ErrMalformedProof is wrapped by errors for structurally invalid proofs and
// for proof encodings that are not canonical.
var ErrMalformedProof = errors.New("smt: malformed proof")

// Proof is a compressed Merkle proof of inclusion or exclusion of one key.
// See the package documentation for the exact semantics and encodings.
type Proof struct {
	// Depth is the depth (0..256) of the node at which the lookup of the
	// key's path terminates: the key's leaf, an empty subtree, or another leaf.
	Depth int
	// Bitmap has ceil(Depth/8) bytes; bit i (MSB-first) is set iff the
	// sibling at level i is non-empty. Padding bits are zero.
	Bitmap []byte
	// Siblings are the non-empty sibling hashes, level 0 (just below the
	// root) first. len(Siblings) equals the number of set bits in Bitmap.
	Siblings [][32]byte
	// Leaf is set only for an exclusion proof that terminates at a leaf of a
	// different key.
	Leaf *ProofLeaf
}

// ProofLeaf is the leaf an exclusion proof terminates at: a different key
// whose path shares the first Depth bits of the proven key's path.
type ProofLeaf struct {
	Path      [32]byte
	ValueHash [32]byte
}

// Prove returns a proof for key against the current root (uncommitted
// changes included): an inclusion proof if key is present, otherwise an
// exclusion proof.
func (t *Tree) Prove(key []byte) (*Proof, error) {
	p, err := t.provePath(t.keccak(key))
	if err != nil {
		return nil, fmt.Errorf("smt: prove %x: %w", key, err)
	}
	return p, nil
}

func (t *Tree) provePath(path [32]byte) (*Proof, error) {
	t.hashNode(t.root)
	var bitmap [32]byte
	p := &Proof{}
	n := t.root
	depth := 0
	for n != nil {
		if err := t.resolve(n, depth); err != nil {
			return nil, err
		}
		if n.kind == kindLeaf {
			if n.path != path {
				p.Leaf = &ProofLeaf{Path: n.path, ValueHash: t.keccak(n.value)}
			}
			break
		}
		b := bitAt(&path, depth)
		if sib := n.children[1-b]; sib != nil {
			bitmap[depth>>3] |= 0x80 >> uint(depth&7)
			p.Siblings = append(p.Siblings, t.hashNode(sib))
		}
		n = n.children[b]
		depth++
	}
	p.Depth = depth
	p.Bitmap = bytes.Clone(bitmap[:(depth+7)/8])
	return p, nil
}

// VerifyProof checks proof against root for key. A non-empty value asserts
// that key maps to value (inclusion); a nil or empty value asserts that key
// is absent (exclusion). It returns nil if the proof establishes the claim,
// and otherwise an error wrapping ErrInvalidProof that says why.
func VerifyProof(root [32]byte, key []byte, value []byte, proof *Proof) error {
	return verifyPath(root, crypto.Keccak256Hash(key), key, value, proof)
}

// verifyPath is VerifyProof for a given path; key is used only in messages.
func verifyPath(root [32]byte, path [32]byte, key []byte, value []byte, proof *Proof) error {
	if proof == nil {
		return fmt.Errorf("%w: nil proof", ErrInvalidProof)
	}
	if err := proof.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidProof, err)
	}
	h := crypto.NewKeccakState()
	var buf [innerEncLen]byte
	sum := func(data []byte) (out [32]byte) {
		h.Reset()
		h.Write(data)
		h.Read(out[:])
		return out
	}
	hash65 := func(prefix byte, a, b *[32]byte) [32]byte {
		buf[0] = prefix
		copy(buf[1:33], a[:])
		copy(buf[33:65], b[:])
		return sum(buf[:])
	}

	var cur [32]byte
	switch {
	case len(value) > 0:
		if proof.Leaf != nil {
			return fmt.Errorf("%w: inclusion claimed for key %x but the proof shows a different leaf %x", ErrInvalidProof, key, proof.Leaf.Path)
		}
		vh := sum(value)
		cur = hash65(leafPrefix, &path, &vh)
	case proof.Leaf != nil:
		if proof.Leaf.Path == path {
			return fmt.Errorf("%w: exclusion claimed for key %x but the proof leaf is that key's own leaf", ErrInvalidProof, key)
		}
		if cpl := commonPrefixLen(&proof.Leaf.Path, &path); cpl < proof.Depth {
			return fmt.Errorf("%w: proof leaf %x shares %d path bits with key %x, need %d", ErrInvalidProof, proof.Leaf.Path, cpl, key, proof.Depth)
		}
		cur = hash65(leafPrefix, &proof.Leaf.Path, &proof.Leaf.ValueHash)
	default:
		cur = EmptyRoot
	}

	next := len(proof.Siblings)
	for level := proof.Depth - 1; level >= 0; level-- {
		var sib [32]byte
		if proof.Bitmap[level>>3]&(0x80>>uint(level&7)) != 0 {
			next--
			sib = proof.Siblings[next]
		}
		if bitAt(&path, level) == 0 {
			cur = hash65(innerPrefix, &cur, &sib)
		} else {
			cur = hash65(innerPrefix, &sib, &cur)
		}
	}
	if cur != root {
		kind := "inclusion"
		if len(value) == 0 {
			kind = "exclusion"
		}
		return fmt.Errorf("%w: %s proof for key %x computes root %x, want %x", ErrInvalidProof, kind, key, cur, root)
	}
	return nil
}

// Validate checks the structural rules of a proof (sizes, bitmap padding,
// sibling count, no zero siblings). It does not check it against any root.
// Errors wrap ErrMalformedProof.
func (p Proof) Validate() error {
	if p.Depth < 0 || p.Depth > MaxDepth {
		return fmt.Errorf("%w: depth %d out of range [0,%d]", ErrMalformedProof, p.Depth, MaxDepth)
	}
	if want := (p.Depth + 7) / 8; len(p.Bitmap) != want {
		return fmt.Errorf("%w: bitmap has %d bytes, want %d for depth %d", ErrMalformedProof, len(p.Bitmap), want, p.Depth)
	}
	if r := p.Depth % 8; r != 0 && p.Bitmap[len(p.Bitmap)-1]&(0xff>>uint(r)) != 0 {
		return fmt.Errorf("%w: bitmap padding bits are not zero", ErrMalformedProof)
	}
	set := 0
	for _, b := range p.Bitmap {
		set += bits.OnesCount8(b)
	}
	if set != len(p.Siblings) {
		return fmt.Errorf("%w: bitmap marks %d siblings, proof has %d", ErrMalformedProof, set, len(p.Siblings))
	}
	for i, s := range p.Siblings {
		if s == EmptyRoot {
			return fmt.Errorf("%w: sibling %d is the empty hash (must be omitted via the bitmap)", ErrMalformedProof, i)
		}
	}
	return nil
}

// proofWire is the CBOR shape of a Proof (a 4-element array).
type proofWire struct {
	_        struct{} `cbor:",toarray"`
	Depth    uint64
	Bitmap   []byte
	Siblings [][]byte
	Leaf     *proofLeafWire
}

type proofLeafWire struct {
	_         struct{} `cbor:",toarray"`
	Path      []byte
	ValueHash []byte
}

// The CBOR modes are built once and never modified.
var (
	proofEncMode = mustEncMode()
	proofDecMode = mustDecMode()
)

func mustEncMode() cbor.EncMode {
	em, err := cbor.CoreDetEncOptions().EncMode()
	if err != nil {
		panic(fmt.Sprintf("smt: cbor enc mode: %v", err))
	}
	return em
}

func mustDecMode() cbor.DecMode {
	dm, err := cbor.DecOptions{
		DupMapKey:        cbor.DupMapKeyEnforcedAPF,
		IndefLength:      cbor.IndefLengthForbidden,
		TagsMd:           cbor.TagsForbidden,
		MaxNestedLevels:  4,
		MaxArrayElements: MaxDepth + 1,
		MaxMapPairs:      16,
	}.DecMode()
	if err != nil {
		panic(fmt.Sprintf("smt: cbor dec mode: %v", err))
	}
	return dm
}

// MarshalCBOR returns the canonical CBOR encoding of p. It fails on a
// structurally invalid proof.
func (p Proof) MarshalCBOR() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("smt: encode proof: %w", err)
	}
	w := proofWire{
		Depth:    uint64(p.Depth),
		Bitmap:   bytes.Clone(p.Bitmap),
		Siblings: make([][]byte, len(p.Siblings)),
	}
	if w.Bitmap == nil {
		w.Bitmap = []byte{}
	}
	for i := range p.Siblings {
		w.Siblings[i] = p.Siblings[i][:]
	}
	if p.Leaf != nil {
		w.Leaf = &proofLeafWire{Path: p.Leaf.Path[:], ValueHash: p.Leaf.ValueHash[:]}
	}
	out, err := proofEncMode.Marshal(&w)
	if err != nil {
		return nil, fmt.Errorf("smt: encode proof: %w", err)
	}
	return out, nil
}

// UnmarshalCBOR decodes a proof, accepting only the canonical encoding of a
// structurally valid proof. Errors wrap ErrMalformedProof.
func (p *Proof) UnmarshalCBOR(data []byte) error {
	var w proofWire
	if err := proofDecMode.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("%w: cbor: %w", ErrMalformedProof, err)
	}
	if w.Depth > MaxDepth {
		return fmt.Errorf("%w: depth %d out of range [0,%d]", ErrMalformedProof, w.Depth, MaxDepth)
	}
	q := Proof{Depth: int(w.Depth), Bitmap: w.Bitmap, Siblings: make([][32]byte, len(w.Siblings))}
	for i, s := range w.Siblings {
		if len(s) != 32 {
			return fmt.Errorf("%w: sibling %d has %d bytes, want 32", ErrMalformedProof, i, len(s))
		}
		copy(q.Siblings[i][:], s)
	}
	if w.Leaf != nil {
		if len(w.Leaf.Path) != 32 || len(w.Leaf.ValueHash) != 32 {
			return fmt.Errorf("%w: leaf path/value hash has %d/%d bytes, want 32/32", ErrMalformedProof, len(w.Leaf.Path), len(w.Leaf.ValueHash))
		}
		q.Leaf = &ProofLeaf{}
		copy(q.Leaf.Path[:], w.Leaf.Path)
		copy(q.Leaf.ValueHash[:], w.Leaf.ValueHash)
	}
	if err := q.Validate(); err != nil {
		return err
	}
	// Byte-exact round trip is the canonicality check: it rejects every
	// alternative encoding of the same proof.
	again, err := q.MarshalCBOR()
	if err != nil {
		return err
	}
	if !bytes.Equal(again, data) {
		return fmt.Errorf("%w: non-canonical CBOR encoding", ErrMalformedProof)
	}
	if len(q.Siblings) == 0 {
		q.Siblings = nil
	}
	*p = q
	return nil
}

// DecodeProof decodes the canonical CBOR encoding of a proof.
func DecodeProof(data []byte) (*Proof, error) {
	p := new(Proof)
	if err := p.UnmarshalCBOR(data); err != nil {
		return nil, err
	}
	return p, nil
}

type proofJSON struct {
	Depth    int            `json:"depth"`
	Bitmap   string         `json:"bitmap"`
	Siblings []string       `json:"siblings"`
	Leaf     *proofLeafJSON `json:"leaf,omitempty"`
}

type proofLeafJSON struct {
	Path      string `json:"path"`
	ValueHash string `json:"valueHash"`
}

// MarshalJSON encodes p with 0x-prefixed lower-case hex strings.
func (p Proof) MarshalJSON() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("smt: encode proof json: %w", err)
	}
	j := proofJSON{Depth: p.Depth, Bitmap: hex0x(p.Bitmap), Siblings: make([]string, len(p.Siblings))}
	for i := range p.Siblings {
		j.Siblings[i] = hex0x(p.Siblings[i][:])
	}
	if p.Leaf != nil {
		j.Leaf = &proofLeafJSON{Path: hex0x(p.Leaf.Path[:]), ValueHash: hex0x(p.Leaf.ValueHash[:])}
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes the JSON form of a proof and validates its structure.
// Errors wrap ErrMalformedProof.
func (p *Proof) UnmarshalJSON(data []byte) error {
	var j proofJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("%w: json: %w", ErrMalformedProof, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: json: trailing data", ErrMalformedProof)
	}
	bm, err := unhex0x(j.Bitmap, -1)
	if err != nil {
		return fmt.Errorf("%w: json bitmap: %w", ErrMalformedProof, err)
	}
	q := Proof{Depth: j.Depth, Bitmap: bm}
	if len(j.Siblings) > 0 {
		q.Siblings = make([][32]byte, len(j.Siblings))
	}
	for i, s := range j.Siblings {
		b, err := unhex0x(s, 32)
		if err != nil {
			return fmt.Errorf("%w: json sibling %d: %w", ErrMalformedProof, i, err)
		}
		copy(q.Siblings[i][:], b)
	}
	if j.Leaf != nil {
		path, err := unhex0x(j.Leaf.Path, 32)
		if err != nil {
			return fmt.Errorf("%w: json leaf path: %w", ErrMalformedProof, err)
		}
		vh, err := unhex0x(j.Leaf.ValueHash, 32)
		if err != nil {
			return fmt.Errorf("%w: json leaf valueHash: %w", ErrMalformedProof, err)
		}
		q.Leaf = &ProofLeaf{}
		copy(q.Leaf.Path[:], path)
		copy(q.Leaf.ValueHash[:], vh)
	}
	if err := q.Validate(); err != nil {
		return err
	}
	*p = q
	return nil
}

func hex0x(b []byte) string { return "0x" + hex.EncodeToString(b) }

// unhex0x decodes a 0x-prefixed hex string; size >= 0 enforces the length.
func unhex0x(s string, size int) ([]byte, error) {
	rest, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return nil, fmt.Errorf("hex string %q lacks 0x prefix", s)
	}
	b, err := hex.DecodeString(rest)
	if err != nil {
		return nil, fmt.Errorf("hex string %q: %w", s, err)
	}
	if size >= 0 && len(b) != size {
		return nil, fmt.Errorf("hex string %q has %d bytes, want %d", s, len(b), size)
	}
	return b, nil
}
