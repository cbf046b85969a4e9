package p2p

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
)

// ALPN is the TLS application protocol of the consensus transport.
const ALPN = "cowboy-consensus/1"

// ErrIdentity reports a peer whose certificate is not bound to an expected
// validator key.
var ErrIdentity = errors.New("p2p: peer identity mismatch")

var bindingOID = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 59999, 8, 1}

const bindingTag = "cowboy/p2p-tls-binding/v1"

func bindingMessage(spki []byte) []byte { return append([]byte(bindingTag), spki...) }

// certificate makes a fresh P-256 TLS key and a self-signed certificate
// carrying the validator's BLS public key and its BLS signature over the
// certificate's SubjectPublicKeyInfo. (TLS cannot use BLS keys; the
// signature binds the ephemeral TLS key to the validator identity.)
func certificate(key *bls.SecretKey) (tls.Certificate, error) {
	tlsKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("p2p: tls key: %w", err)
	}
	spki, err := x509.MarshalPKIXPublicKey(&tlsKey.PublicKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("p2p: spki: %w", err)
	}
	ext := append(key.PublicKey().Bytes(), key.Sign(bindingMessage(spki)).Bytes()...)
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("p2p: serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:    serial,
		Subject:         pkix.Name{CommonName: "cowboy-validator"},
		NotBefore:       time.Now().Add(-time.Hour),
		NotAfter:        time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:        x509.KeyUsageDigitalSignature,
		ExtKeyUsage:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		ExtraExtensions: []pkix.Extension{{Id: bindingOID, Value: ext}},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &tlsKey.PublicKey, tlsKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("p2p: certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: tlsKey}, nil
}

// PeerKey verifies a peer certificate (self-signature, validity window,
// BLS binding) and returns the bound validator BLS public key.
func PeerKey(der []byte) ([]byte, error) {
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrIdentity, err)
	}
	if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
		return nil, fmt.Errorf("%w: self-signature: %w", ErrIdentity, err)
	}
	if now := time.Now(); now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
		return nil, fmt.Errorf("%w: certificate not valid now", ErrIdentity)
	}
	for _, e := range cert.Extensions {
		if !e.Id.Equal(bindingOID) {
			continue
		}
		if len(e.Value) != bls.PublicKeySize+bls.SignatureSize {
			return nil, fmt.Errorf("%w: bad binding length", ErrIdentity)
		}
		pk, err := bls.PublicKeyFromBytes(e.Value[:bls.PublicKeySize])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrIdentity, err)
		}
		sig, err := bls.SignatureFromBytes(e.Value[bls.PublicKeySize:])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrIdentity, err)
		}
		if !pk.Verify(bindingMessage(cert.RawSubjectPublicKeyInfo), sig) {
			return nil, fmt.Errorf("%w: binding signature", ErrIdentity)
		}
		return pk.Bytes(), nil
	}
	return nil, fmt.Errorf("%w: no validator key binding", ErrIdentity)
}

// tlsConfig is used for both sides: each presents its certificate and
// accepts only peers bound to one of the allowed keys.
func tlsConfig(cert tls.Certificate, allowed func(key []byte) bool) *tls.Config {
	verify := func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return fmt.Errorf("%w: no certificate", ErrIdentity)
		}
		k, err := PeerKey(raw[0])
		if err != nil {
			return err
		}
		if !allowed(k) {
			return fmt.Errorf("%w: key %x is not a configured peer", ErrIdentity, k[:8])
		}
		return nil
	}
	return &tls.Config{
		MinVersion:            tls.VersionTLS13,
		NextProtos:            []string{ALPN},
		Certificates:          []tls.Certificate{cert},
		ClientAuth:            tls.RequireAnyClientCert, // verified below
		InsecureSkipVerify:    true,                     // replaced by VerifyPeerCertificate
		VerifyPeerCertificate: verify,
	}
}
