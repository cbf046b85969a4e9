package bls

import (
	"bytes"
	"crypto/sha256"
	"testing"
)

func key(t testing.TB, i byte) *SecretKey {
	t.Helper()
	seed := sha256.Sum256([]byte{i})
	k, err := KeyFromSeed(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSignVerifyRoundTrip(t *testing.T) {
	k := key(t, 1)
	msg := []byte("hello")
	sig := k.Sign(msg)
	if !k.PublicKey().Verify(msg, sig) {
		t.Fatal("valid signature rejected")
	}
	if k.PublicKey().Verify([]byte("hellp"), sig) {
		t.Fatal("signature over other message accepted")
	}
	if key(t, 2).PublicKey().Verify(msg, sig) {
		t.Fatal("signature accepted under other key")
	}
	k2, err := SecretKeyFromBytes(k.Bytes())
	if err != nil || !bytes.Equal(k2.Bytes(), k.Bytes()) {
		t.Fatalf("secret key round trip: %v", err)
	}
	pk, err := PublicKeyFromBytes(k.PublicKey().Bytes())
	if err != nil || !pk.Equal(k.PublicKey()) {
		t.Fatalf("public key round trip: %v", err)
	}
	s2, err := SignatureFromBytes(sig.Bytes())
	if err != nil || !bytes.Equal(s2.Bytes(), sig.Bytes()) || !pk.Verify(msg, s2) {
		t.Fatalf("signature round trip: %v", err)
	}
	// Deterministic signatures (needed for the VRF).
	if !bytes.Equal(k.Sign(msg).Bytes(), sig.Bytes()) {
		t.Fatal("signature not deterministic")
	}
}

func TestDecodersRejectGarbage(t *testing.T) {
	if _, err := PublicKeyFromBytes(make([]byte, PublicKeySize)); err == nil {
		t.Fatal("zero public key accepted")
	}
	inf := make([]byte, PublicKeySize)
	inf[0] = 0xc0 // compressed point at infinity
	if _, err := PublicKeyFromBytes(inf); err == nil {
		t.Fatal("identity public key accepted")
	}
	if _, err := SignatureFromBytes(bytes.Repeat([]byte{0xff}, SignatureSize)); err == nil {
		t.Fatal("garbage signature accepted")
	}
	if _, err := SecretKeyFromBytes(make([]byte, SecretKeySize)); err == nil {
		t.Fatal("zero secret key accepted")
	}
	if _, err := KeyFromSeed([]byte("short")); err == nil {
		t.Fatal("short seed accepted")
	}
}

func TestAggregate(t *testing.T) {
	msg := []byte("block")
	var pks []*PublicKey
	var sigs []*Signature
	for i := range byte(7) {
		k := key(t, i)
		pks = append(pks, k.PublicKey())
		sigs = append(sigs, k.Sign(msg))
	}
	agg, err := AggregateSignatures(sigs)
	if err != nil {
		t.Fatal(err)
	}
	if !FastAggregateVerify(pks, msg, agg) {
		t.Fatal("aggregate rejected")
	}
	if FastAggregateVerify(pks[:6], msg, agg) {
		t.Fatal("aggregate accepted with a missing signer")
	}
	apk, err := AggregatePublicKeys(pks)
	if err != nil || !apk.Verify(msg, agg) {
		t.Fatalf("aggregate public key: %v", err)
	}
	// Distinct messages.
	msgs := make([][]byte, len(pks))
	for i := range pks {
		msgs[i] = []byte{byte(i)}
		sigs[i] = key(t, byte(i)).Sign(msgs[i])
	}
	agg, _ = AggregateSignatures(sigs)
	if !AggregateVerify(pks, msgs, agg) {
		t.Fatal("multi-message aggregate rejected")
	}
	if !BatchVerify(pks, msgs, sigs) {
		t.Fatal("batch rejected")
	}
	sigs[3] = sigs[4]
	if BatchVerify(pks, msgs, sigs) {
		t.Fatal("batch with a bad signature accepted")
	}
	if _, err := AggregateSignatures(nil); err == nil {
		t.Fatal("empty aggregate accepted")
	}
}

func TestProofOfPossession(t *testing.T) {
	k := key(t, 1)
	pop := k.ProvePossession()
	if !k.PublicKey().VerifyPossession(pop) {
		t.Fatal("valid PoP rejected")
	}
	if key(t, 2).PublicKey().VerifyPossession(pop) {
		t.Fatal("PoP accepted for other key")
	}
	// A PoP is not a signature over the key bytes in the signing domain.
	if k.PublicKey().Verify(k.PublicKey().Bytes(), pop) {
		t.Fatal("PoP domain not separated from signatures")
	}
	if k.PublicKey().VerifyPossession(k.Sign(k.PublicKey().Bytes())) {
		t.Fatal("ordinary signature accepted as PoP")
	}
}

func FuzzDecode(f *testing.F) {
	k, _ := KeyFromSeed(bytes.Repeat([]byte{1}, 32))
	f.Add(k.PublicKey().Bytes())
	f.Add(k.Sign([]byte("x")).Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		if pk, err := PublicKeyFromBytes(b); err == nil && !bytes.Equal(pk.Bytes(), b) {
			t.Fatal("public key not round-trip identical")
		}
		if s, err := SignatureFromBytes(b); err == nil && !bytes.Equal(s.Bytes(), b) {
			t.Fatal("signature not round-trip identical")
		}
	})
}

func BenchmarkSign(b *testing.B) {
	k := key(b, 1)
	for b.Loop() {
		k.Sign([]byte("message"))
	}
}

func BenchmarkVerify(b *testing.B) {
	k := key(b, 1)
	sig := k.Sign([]byte("message"))
	pk := k.PublicKey()
	for b.Loop() {
		pk.Verify([]byte("message"), sig)
	}
}

func BenchmarkFastAggregateVerify100(b *testing.B) {
	msg := []byte("message")
	var pks []*PublicKey
	var sigs []*Signature
	for i := range byte(100) {
		k := key(b, i)
		pks = append(pks, k.PublicKey())
		sigs = append(sigs, k.Sign(msg))
	}
	agg, _ := AggregateSignatures(sigs)
	for b.Loop() {
		FastAggregateVerify(pks, msg, agg)
	}
}
