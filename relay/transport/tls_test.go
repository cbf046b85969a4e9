package transport

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

func TestCertificateBinding(t *testing.T) {
	node, _ := crypto.GenerateKey()
	other, _ := crypto.GenerateKey()
	conf, err := ServerTLS(node)
	if err != nil {
		t.Fatal(err)
	}
	der := conf.Certificates[0].Certificate[0]
	got, err := PeerNodeKey(der)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, crypto.CompressPubkey(&node.PublicKey)) {
		t.Fatal("wrong node key")
	}
	verify := ClientTLS(crypto.CompressPubkey(&other.PublicKey)).VerifyPeerCertificate
	if err := verify([][]byte{der}, nil); !errors.Is(err, ErrIdentity) {
		t.Fatalf("other relay's key accepted: %v", err)
	}
	if err := ClientTLS(got).VerifyPeerCertificate([][]byte{der}, nil); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(der)
	bad[len(bad)-10] ^= 1 // break the self-signature
	if _, err := PeerNodeKey(bad); !errors.Is(err, ErrIdentity) {
		t.Fatalf("tampered certificate accepted: %v", err)
	}
}
