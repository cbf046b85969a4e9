package sigops_test

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/actors/sigops"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// mailJSON is the example of EIP-712 itself (eips.ethereum.org/EIPS/eip-712,
// assets/eip-712/Example.js): Cow mails Bob, chain 1.
const mailJSON = `{
  "types": {
    "EIP712Domain": [
      {"name": "name", "type": "string"}, {"name": "version", "type": "string"},
      {"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"}],
    "Person": [{"name": "name", "type": "string"}, {"name": "wallet", "type": "address"}],
    "Mail": [{"name": "from", "type": "Person"}, {"name": "to", "type": "Person"}, {"name": "contents", "type": "string"}]
  },
  "primaryType": "Mail",
  "domain": {"name": "Ether Mail", "version": "1", "chainId": 1, "verifyingContract": "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},
  "message": {
    "from": {"name": "Cow", "wallet": "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},
    "to": {"name": "Bob", "wallet": "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},
    "contents": "Hello, Bob!"
  }
}`

// The EIP's own vector: the signer is keccak256("cow"), the signature
// v = 28, r = 0x4355…1c9d, s = 0x0729…1562.
const (
	mailSigner = "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"
	mailSig    = "0x4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d07299936d304c153f6443dfa05f40ff007d72911b6f72307f996231605b915621c"
)

func addr(t *testing.T, s string) types.Address {
	t.Helper()
	a, err := types.ParseAddress(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// EIP-712: the EIP's published vector, and signatures made by go-ethereum
// (apitypes hashing, crypto.Sign — what its clef signer does).
func TestVerifyEIP712(t *testing.T) {
	sig := hexutil.MustDecode(mailSig)
	ok, err := sigops.VerifyEIP712([]byte(mailJSON), sig, addr(t, mailSigner), big.NewInt(1))
	if err != nil || !ok {
		t.Fatalf("EIP-712 vector: %v %v", ok, err)
	}
	// The signer's key is keccak256("cow").
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte("cow")))
	if err != nil {
		t.Fatal(err)
	}
	if got := crypto.PubkeyToAddress(key.PublicKey).Hex(); got != mailSigner {
		t.Fatalf("cow is %s", got)
	}
	var td apitypes.TypedData
	if err := json.Unmarshal([]byte(mailJSON), &td); err != nil {
		t.Fatal(err)
	}
	hash, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	gsig, err := crypto.Sign(hash, key) // v is 0/1
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := sigops.VerifyEIP712([]byte(mailJSON), gsig, addr(t, mailSigner), nil); err != nil || !ok {
		t.Fatalf("go-ethereum's signature: %v %v", ok, err)
	}
	// Another address, or other contents: false, no error.
	if ok, err := sigops.VerifyEIP712([]byte(mailJSON), sig, addr(t, "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"), nil); err != nil || ok {
		t.Fatalf("other address: %v %v", ok, err)
	}
	tampered := strings.Replace(mailJSON, "Hello, Bob!", "Hello, Eve!", 1)
	if ok, err := sigops.VerifyEIP712([]byte(tampered), sig, addr(t, mailSigner), nil); err != nil || ok {
		t.Fatalf("tampered message: %v %v", ok, err)
	}
	// Wrong chain: the typed data names chain 1, the actor expects 5.
	if _, err := sigops.VerifyEIP712([]byte(mailJSON), sig, addr(t, mailSigner), big.NewInt(5)); !errors.Is(err, sigops.ErrWrongChain) {
		t.Fatalf("wrong chain: %v", err)
	}
	// A chain-1 signature replayed on typed data for chain 5 does not verify.
	chain5 := strings.Replace(mailJSON, `"chainId": 1`, `"chainId": 5`, 1)
	if ok, err := sigops.VerifyEIP712([]byte(chain5), sig, addr(t, mailSigner), big.NewInt(5)); err != nil || ok {
		t.Fatalf("replayed on chain 5: %v %v", ok, err)
	}
	for name, bad := range map[string]string{
		"not json":         `{"types":`,
		"no primary type":  `{"types": {"EIP712Domain": []}, "domain": {}, "message": {}}`,
		"unknown type":     strings.Replace(mailJSON, `"primaryType": "Mail"`, `"primaryType": "Letter"`, 1),
		"bad address":      strings.Replace(mailJSON, mailSigner, "0x1234", 1),
		"wrong field type": strings.Replace(mailJSON, `"contents": "Hello, Bob!"`, `"contents": 7`, 1),
	} {
		if _, err := sigops.VerifyEIP712([]byte(bad), sig, addr(t, mailSigner), nil); !errors.Is(err, sigops.ErrMalformedTyped) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := sigops.VerifyEIP712([]byte(mailJSON), sig[:64], addr(t, mailSigner), nil); !errors.Is(err, sigops.ErrMalformedSignature) {
		t.Fatalf("64-byte signature: %v", err)
	}
}

func TestVerifySignature(t *testing.T) {
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte("alice")))
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("pay bob 5")
	sig, err := crypto.Sign(crypto.Keccak256(msg), key)
	if err != nil {
		t.Fatal(err)
	}
	a := crypto.PubkeyToAddress(key.PublicKey)
	v27 := append([]byte(nil), sig...)
	v27[64] += 27
	for name, k := range map[string][]byte{
		"address": a[:], "compressed key": crypto.CompressPubkey(&key.PublicKey), "uncompressed key": crypto.FromECDSAPub(&key.PublicKey),
	} {
		for _, s := range [][]byte{sig, v27} {
			if ok, err := sigops.VerifySignature("secp256k1", k, msg, s); err != nil || !ok {
				t.Fatalf("secp256k1 by %s: %v %v", name, ok, err)
			}
		}
		if ok, err := sigops.VerifySignature("secp256k1", k, []byte("pay bob 50"), sig); err != nil || ok {
			t.Fatalf("secp256k1 by %s, other message: %v %v", name, ok, err)
		}
	}
	// A high-s twin of a valid signature is refused as malleable.
	n := crypto.S256().Params().N
	hi := append([]byte(nil), sig...)
	s := new(big.Int).Sub(n, new(big.Int).SetBytes(sig[32:64]))
	s.FillBytes(hi[32:64])
	hi[64] ^= 1
	if _, err := sigops.VerifySignature("secp256k1", a[:], msg, hi); !errors.Is(err, sigops.ErrMalformedSignature) {
		t.Fatalf("high-s: %v", err)
	}
	pub, priv, err := ed25519.GenerateKey(strings.NewReader(strings.Repeat("seed", 16)))
	if err != nil {
		t.Fatal(err)
	}
	esig := ed25519.Sign(priv, msg)
	if ok, err := sigops.VerifySignature("ed25519", pub, msg, esig); err != nil || !ok {
		t.Fatalf("ed25519: %v %v", ok, err)
	}
	if ok, err := sigops.VerifySignature("ed25519", pub, []byte("other"), esig); err != nil || ok {
		t.Fatalf("ed25519 other message: %v %v", ok, err)
	}
	for name, c := range map[string]struct {
		scheme   string
		key, sig []byte
		want     error
	}{
		"unknown scheme":    {"rsa", pub, esig, sigops.ErrUnknownScheme},
		"short ed25519":     {"ed25519", pub[:31], esig, sigops.ErrMalformedSignature},
		"short secp256k1":   {"secp256k1", a[:], sig[:60], sigops.ErrMalformedSignature},
		"bad v":             {"secp256k1", a[:], append(append([]byte(nil), sig[:64]...), 9), sigops.ErrMalformedSignature},
		"bad key length":    {"secp256k1", make([]byte, 21), sig, sigops.ErrMalformedSignature},
		"key off the curve": {"secp256k1", append([]byte{4}, make([]byte, 64)...), sig, sigops.ErrMalformedSignature},
	} {
		if _, err := sigops.VerifySignature(c.scheme, c.key, msg, c.sig); !errors.Is(err, c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
