// Package bls implements BLS12-381 signatures for Cowboy validators on top of
// supranational/blst, in the "minimal public key" arrangement used by
// Ethereum: public keys are 48-byte compressed G1 points, signatures 96-byte
// compressed G2 points.
//
// The ciphersuite is the proof-of-possession suite of the IETF BLS draft
// (BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_). Because signatures over one
// message are aggregated by adding public keys (FastAggregateVerify), every
// key must come with a proof of possession (ProvePossession) checked once at
// registration (VerifyPossession); this is the rogue-key defence.
//
// Callers domain-separate their messages themselves (the consensus package
// prefixes every signed message with a tag); this package signs bytes.
//
// Every decoder validates: a public key must be a non-identity point of the
// prime-order subgroup, a signature a point of the G2 subgroup. Values of
// PublicKey and Signature are therefore always valid and safe to aggregate.
package bls

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	blst "github.com/supranational/blst/bindings/go"
)

// Sizes of encodings.
const (
	SecretKeySize = 32
	PublicKeySize = 48
	SignatureSize = 96
)

const (
	dstSig = "BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_"
	dstPoP = "BLS_POP_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_"
)

// Errors returned by decoders and aggregation.
var (
	ErrInvalidSecretKey = errors.New("bls: invalid secret key")
	ErrInvalidPublicKey = errors.New("bls: invalid public key")
	ErrInvalidSignature = errors.New("bls: invalid signature")
	ErrEmpty            = errors.New("bls: nothing to aggregate")
)

// SecretKey is a BLS secret scalar.
type SecretKey struct{ sk *blst.SecretKey }

// PublicKey is a validated G1 public key.
type PublicKey struct {
	p   *blst.P1Affine
	enc [PublicKeySize]byte
}

// Signature is a validated G2 signature (possibly an aggregate).
type Signature struct {
	s   *blst.P2Affine
	enc [SignatureSize]byte
}

// GenerateKey draws 32 bytes of key material from r (crypto/rand.Reader if
// nil) and derives a key with KeyFromSeed.
func GenerateKey(r io.Reader) (*SecretKey, error) {
	if r == nil {
		r = rand.Reader
	}
	var ikm [32]byte
	if _, err := io.ReadFull(r, ikm[:]); err != nil {
		return nil, fmt.Errorf("bls: read key material: %w", err)
	}
	return KeyFromSeed(ikm[:])
}

// KeyFromSeed derives a secret key from at least 32 bytes of input key
// material (IETF KeyGen, HKDF-SHA256). Deterministic: tests use it for
// reproducible validator keys.
func KeyFromSeed(ikm []byte) (*SecretKey, error) {
	if len(ikm) < 32 {
		return nil, fmt.Errorf("%w: seed shorter than 32 bytes", ErrInvalidSecretKey)
	}
	sk := blst.KeyGen(ikm)
	if sk == nil {
		return nil, ErrInvalidSecretKey
	}
	return &SecretKey{sk: sk}, nil
}

// SecretKeyFromBytes decodes a 32-byte big-endian scalar in [1, r).
func SecretKeyFromBytes(b []byte) (*SecretKey, error) {
	if len(b) != SecretKeySize {
		return nil, fmt.Errorf("%w: length %d", ErrInvalidSecretKey, len(b))
	}
	sk := new(blst.SecretKey).Deserialize(b)
	if sk == nil || !sk.Valid() {
		return nil, ErrInvalidSecretKey
	}
	return &SecretKey{sk: sk}, nil
}

// Bytes returns the 32-byte big-endian scalar. Treat it as secret.
func (k *SecretKey) Bytes() []byte { return k.sk.Serialize() }

// PublicKey returns the key's public half.
func (k *SecretKey) PublicKey() *PublicKey {
	p := new(blst.P1Affine).From(k.sk)
	pk := &PublicKey{p: p}
	copy(pk.enc[:], p.Compress())
	return pk
}

// Sign signs msg.
func (k *SecretKey) Sign(msg []byte) *Signature {
	return newSignature(new(blst.P2Affine).Sign(k.sk, msg, []byte(dstSig)))
}

// ProvePossession signs the key's own public key under the PoP domain. A
// validator submits it with its key at registration.
func (k *SecretKey) ProvePossession() *Signature {
	pk := k.PublicKey()
	return newSignature(new(blst.P2Affine).Sign(k.sk, pk.enc[:], []byte(dstPoP)))
}

func newSignature(p *blst.P2Affine) *Signature {
	s := &Signature{s: p}
	copy(s.enc[:], p.Compress())
	return s
}

// PublicKeyFromBytes decodes a compressed public key and checks that it is
// a point of the G1 subgroup other than the identity.
func PublicKeyFromBytes(b []byte) (*PublicKey, error) {
	if len(b) != PublicKeySize {
		return nil, fmt.Errorf("%w: length %d", ErrInvalidPublicKey, len(b))
	}
	p := new(blst.P1Affine).Uncompress(b)
	if p == nil || !p.KeyValidate() {
		return nil, ErrInvalidPublicKey
	}
	pk := &PublicKey{p: p}
	copy(pk.enc[:], b)
	return pk, nil
}

// Bytes returns the 48-byte compressed encoding.
func (pk *PublicKey) Bytes() []byte { return append([]byte(nil), pk.enc[:]...) }

// Equal reports whether two keys are the same point.
func (pk *PublicKey) Equal(o *PublicKey) bool { return pk.enc == o.enc }

// Verify checks sig over msg.
func (pk *PublicKey) Verify(msg []byte, sig *Signature) bool {
	if pk == nil || sig == nil {
		return false
	}
	return sig.s.Verify(false, pk.p, false, msg, []byte(dstSig))
}

// VerifyPossession checks a proof of possession produced by
// ProvePossession. Run it once when a key is registered; only keys that pass
// may ever be aggregated.
func (pk *PublicKey) VerifyPossession(pop *Signature) bool {
	if pk == nil || pop == nil {
		return false
	}
	return pop.s.Verify(false, pk.p, false, pk.enc[:], []byte(dstPoP))
}

// SignatureFromBytes decodes a compressed signature and checks that it lies
// in the G2 subgroup.
func SignatureFromBytes(b []byte) (*Signature, error) {
	if len(b) != SignatureSize {
		return nil, fmt.Errorf("%w: length %d", ErrInvalidSignature, len(b))
	}
	p := new(blst.P2Affine).Uncompress(b)
	if p == nil || !p.SigValidate(false) {
		return nil, ErrInvalidSignature
	}
	s := &Signature{s: p}
	copy(s.enc[:], b)
	return s, nil
}

// Bytes returns the 96-byte compressed encoding.
func (s *Signature) Bytes() []byte { return append([]byte(nil), s.enc[:]...) }

// AggregateSignatures adds signatures. The result verifies against the
// aggregate of the signers' keys (same message) or with AggregateVerify
// (distinct messages).
func AggregateSignatures(sigs []*Signature) (*Signature, error) {
	if len(sigs) == 0 {
		return nil, ErrEmpty
	}
	ps := make([]*blst.P2Affine, len(sigs))
	for i, s := range sigs {
		ps[i] = s.s
	}
	var agg blst.P2Aggregate
	if !agg.Aggregate(ps, false) {
		return nil, ErrInvalidSignature
	}
	return newSignature(agg.ToAffine()), nil
}

// AggregatePublicKeys adds public keys (all must have proven possession).
func AggregatePublicKeys(pks []*PublicKey) (*PublicKey, error) {
	if len(pks) == 0 {
		return nil, ErrEmpty
	}
	ps := make([]*blst.P1Affine, len(pks))
	for i, k := range pks {
		ps[i] = k.p
	}
	var agg blst.P1Aggregate
	if !agg.Aggregate(ps, false) {
		return nil, ErrInvalidPublicKey
	}
	p := agg.ToAffine()
	pk := &PublicKey{p: p}
	copy(pk.enc[:], p.Compress())
	return pk, nil
}

// FastAggregateVerify checks an aggregate signature of pks over one message
// with a single pairing check. Sound only for keys with verified proofs of
// possession.
func FastAggregateVerify(pks []*PublicKey, msg []byte, agg *Signature) bool {
	if len(pks) == 0 || agg == nil {
		return false
	}
	ps := make([]*blst.P1Affine, len(pks))
	for i, k := range pks {
		ps[i] = k.p
	}
	return agg.s.FastAggregateVerify(false, ps, msg, []byte(dstSig))
}

// AggregateVerify checks an aggregate signature where pks[i] signed msgs[i]
// (messages may repeat; the PoP suite makes that safe).
func AggregateVerify(pks []*PublicKey, msgs [][]byte, agg *Signature) bool {
	if len(pks) == 0 || len(pks) != len(msgs) || agg == nil {
		return false
	}
	ps := make([]*blst.P1Affine, len(pks))
	ms := make([]blst.Message, len(msgs))
	for i, k := range pks {
		ps[i] = k.p
		ms[i] = msgs[i]
	}
	return agg.s.AggregateVerify(false, ps, false, ms, []byte(dstSig))
}

// BatchVerify checks n independent signatures at once (sigs[i] by pks[i]
// over msgs[i]) using a random linear combination with 64-bit scalars drawn
// from crypto/rand, so that invalid signatures cannot cancel each other. It
// is about twice as fast as n single verifications; false means at least
// one signature is invalid.
func BatchVerify(pks []*PublicKey, msgs [][]byte, sigs []*Signature) bool {
	n := len(pks)
	if n == 0 || len(msgs) != n || len(sigs) != n {
		return false
	}
	ps := make([]*blst.P1Affine, n)
	ss := make([]*blst.P2Affine, n)
	ms := make([]blst.Message, n)
	for i := range n {
		ps[i], ss[i], ms[i] = pks[i].p, sigs[i].s, msgs[i]
	}
	randFn := func(s *blst.Scalar) {
		var b [32]byte
		if _, err := rand.Read(b[24:]); err != nil {
			panic(fmt.Sprintf("bls: crypto/rand: %v", err))
		}
		binary.BigEndian.PutUint64(b[24:], binary.BigEndian.Uint64(b[24:])|1) // never zero
		s.Deserialize(b[:])
	}
	return new(blst.P2Affine).MultipleAggregateVerify(ss, false, ps, false, ms, []byte(dstSig), randFn, 64)
}
