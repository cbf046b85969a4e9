// Package transport carries the CBFS wire protocol over QUIC: TLS 1.3
// certificates bound to a relay's secp256k1 node key, and a client that keeps
// one QUIC connection per relay and runs one request per stream.
//
// TLS cannot use secp256k1 keys, so a relay generates a fresh P-256 TLS key
// at start and self-signs a certificate carrying an extension with its
// compressed node public key and a node-key signature over the certificate's
// SubjectPublicKeyInfo. Clients verify the self-signature, the validity
// window and the binding, and compare the node key with the one the relay
// directory lists.
package transport

import (
	"bytes"
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

	"github.com/cowboy-foundation/cowboy/relay/wire"
	"github.com/ethereum/go-ethereum/crypto"
)

// ErrIdentity reports a relay whose certificate is not bound to the expected
// node key.
var ErrIdentity = errors.New("transport: relay identity mismatch")

var bindingOID = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 59999, 7, 1}

func bindingDigest(spki []byte) []byte {
	return crypto.Keccak256([]byte("cbfs-tls-binding-v1"), spki)
}

// ServerTLS builds a TLS config for a relay with node key nodeKey.
func ServerTLS(nodeKey *ecdsa.PrivateKey) (*tls.Config, error) {
	tlsKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("transport: tls key: %w", err)
	}
	spki, err := x509.MarshalPKIXPublicKey(&tlsKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("transport: spki: %w", err)
	}
	sig, err := crypto.Sign(bindingDigest(spki), nodeKey)
	if err != nil {
		return nil, fmt.Errorf("transport: bind: %w", err)
	}
	ext := append(crypto.CompressPubkey(&nodeKey.PublicKey), sig...)
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	tmpl := &x509.Certificate{
		SerialNumber:    serial,
		Subject:         pkix.Name{CommonName: "cbfs-relay-" + crypto.PubkeyToAddress(nodeKey.PublicKey).Hex()},
		NotBefore:       time.Now().Add(-time.Hour),
		NotAfter:        time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:        x509.KeyUsageDigitalSignature,
		ExtKeyUsage:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		ExtraExtensions: []pkix.Extension{{Id: bindingOID, Value: ext}},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &tlsKey.PublicKey, tlsKey)
	if err != nil {
		return nil, fmt.Errorf("transport: certificate: %w", err)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		NextProtos:   []string{wire.ALPN},
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: tlsKey}},
	}, nil
}

// PeerNodeKey verifies a relay certificate and returns its compressed node key.
func PeerNodeKey(der []byte) ([]byte, error) {
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIdentity, err)
	}
	if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
		return nil, fmt.Errorf("%w: self-signature: %v", ErrIdentity, err)
	}
	now := time.Now()
	if now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
		return nil, fmt.Errorf("%w: certificate not valid now", ErrIdentity)
	}
	for _, e := range cert.Extensions {
		if !e.Id.Equal(bindingOID) {
			continue
		}
		if len(e.Value) != 33+65 {
			return nil, fmt.Errorf("%w: bad binding length", ErrIdentity)
		}
		pub, err := crypto.SigToPub(bindingDigest(cert.RawSubjectPublicKeyInfo), e.Value[33:])
		if err != nil {
			return nil, fmt.Errorf("%w: binding signature: %v", ErrIdentity, err)
		}
		node := crypto.CompressPubkey(pub)
		if !bytes.Equal(node, e.Value[:33]) {
			return nil, fmt.Errorf("%w: binding not signed by claimed key", ErrIdentity)
		}
		return node, nil
	}
	return nil, fmt.Errorf("%w: no node key binding", ErrIdentity)
}

// ClientTLS builds a client TLS config that accepts only a relay bound to
// wantNode (33-byte compressed key). A nil wantNode accepts any well-formed
// binding (used by `status`).
func ClientTLS(wantNode []byte) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS13,
		NextProtos:         []string{wire.ALPN},
		InsecureSkipVerify: true, // replaced by VerifyPeerCertificate below
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return fmt.Errorf("%w: no certificate", ErrIdentity)
			}
			node, err := PeerNodeKey(raw[0])
			if err != nil {
				return err
			}
			if wantNode != nil && !bytes.Equal(node, wantNode) {
				return fmt.Errorf("%w: got %x", ErrIdentity, node)
			}
			return nil
		},
	}
}
