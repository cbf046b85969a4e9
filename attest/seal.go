package attest

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"io"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Secret sealing (the Secrets Manager's envelope scheme, docs/TEE.md):
//
//   - A secret is encrypted once under a random 32-byte data key (DEK) with
//     AES-256-GCM: ciphertext = 0x01 || nonce(12) || AES-GCM(DEK, nonce,
//     plaintext, SecretAAD). This is what the chain stores.
//   - The DEK is sealed to each X25519 public key that may read the secret
//     (a granted runner's enclave key, and the owner's own key so the owner
//     can grant later): sealed = 0x01 || ephemeral_pub(32) ||
//     AES-GCM(k, 0^12, DEK, aad) with k = HKDF-SHA256(X25519(eph, pub),
//     salt = ephemeral_pub || pub, info = "cowboy-seal-v1"). The key is
//     single-use (fresh ephemeral key), so the fixed nonce is safe.
//
// The additional data binds each ciphertext to its place: a sealed DEK
// copied onto another secret, version or runner does not open.

// SealKeySize is the size of an X25519 public key.
const SealKeySize = 32

// DEKSize is the size of a secret's data key.
const DEKSize = 32

const (
	sealVersion   = 1
	secretVersion = 1
	sealInfo      = "cowboy-seal-v1"
	// SealOverhead is what Seal adds to its plaintext.
	SealOverhead = 1 + SealKeySize + 16
	// SecretOverhead is what EncryptSecret adds to its plaintext.
	SecretOverhead = 1 + 12 + 16
)

// GenerateSealKey makes an X25519 key pair; inside an enclave the private
// key never leaves enclave memory (persist it only with EGo's sealing).
func GenerateSealKey(rand io.Reader) (*ecdh.PrivateKey, error) {
	k, err := ecdh.X25519().GenerateKey(rand)
	if err != nil {
		return nil, fmt.Errorf("attest: generate seal key: %w", err)
	}
	return k, nil
}

// SealKeyFromSeed derives an X25519 key deterministically from seed (at
// least 32 bytes of secret material) and a label: the owner's CLI derives
// its own seal key from its account key this way.
func SealKeyFromSeed(seed []byte, label string) (*ecdh.PrivateKey, error) {
	if len(seed) < 32 {
		return nil, fmt.Errorf("attest: seal key seed is %d bytes, want at least 32", len(seed))
	}
	k, err := hkdf.Key(sha256.New, seed, nil, "cowboy-seal-key-v1:"+label, 32)
	if err != nil {
		return nil, fmt.Errorf("attest: derive seal key: %w", err)
	}
	return ecdh.X25519().NewPrivateKey(k)
}

func gcm(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// Seal encrypts plaintext to the X25519 public key pub, bound to aad.
func Seal(rand io.Reader, pub, plaintext, aad []byte) ([]byte, error) {
	rk, err := ecdh.X25519().NewPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("attest: seal: recipient key: %w", err)
	}
	eph, err := ecdh.X25519().GenerateKey(rand)
	if err != nil {
		return nil, fmt.Errorf("attest: seal: %w", err)
	}
	shared, err := eph.ECDH(rk)
	if err != nil {
		return nil, fmt.Errorf("attest: seal: %w", err)
	}
	a, err := sealAEAD(shared, eph.PublicKey().Bytes(), pub)
	if err != nil {
		return nil, fmt.Errorf("attest: seal: %w", err)
	}
	out := append([]byte{sealVersion}, eph.PublicKey().Bytes()...)
	return a.Seal(out, make([]byte, a.NonceSize()), plaintext, aad), nil
}

func sealAEAD(shared, ephPub, pub []byte) (cipher.AEAD, error) {
	k, err := hkdf.Key(sha256.New, shared, append(append([]byte{}, ephPub...), pub...), sealInfo, 32)
	if err != nil {
		return nil, err
	}
	return gcm(k)
}

// Open decrypts a sealed box with the recipient's private key.
func Open(priv *ecdh.PrivateKey, sealed, aad []byte) ([]byte, error) {
	if len(sealed) < SealOverhead || sealed[0] != sealVersion {
		return nil, fmt.Errorf("%w: malformed sealed box (%d bytes)", ErrSeal, len(sealed))
	}
	eph, err := ecdh.X25519().NewPublicKey(sealed[1 : 1+SealKeySize])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSeal, err)
	}
	shared, err := priv.ECDH(eph)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSeal, err)
	}
	a, err := sealAEAD(shared, eph.Bytes(), priv.PublicKey().Bytes())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSeal, err)
	}
	pt, err := a.Open(nil, make([]byte, a.NonceSize()), sealed[1+SealKeySize:], aad)
	if err != nil {
		return nil, fmt.Errorf("%w: wrong key or tampered box", ErrSeal)
	}
	return pt, nil
}

// EncryptSecret encrypts plaintext under a fresh data key; it returns the
// key (to be sealed to each reader) and the ciphertext the chain stores.
func EncryptSecret(rand io.Reader, plaintext, aad []byte) (dek []byte, ciphertext []byte, err error) {
	dek = make([]byte, DEKSize)
	if _, err := io.ReadFull(rand, dek); err != nil {
		return nil, nil, fmt.Errorf("attest: data key: %w", err)
	}
	a, err := gcm(dek)
	if err != nil {
		return nil, nil, err
	}
	nonce := make([]byte, a.NonceSize())
	if _, err := io.ReadFull(rand, nonce); err != nil {
		return nil, nil, fmt.Errorf("attest: nonce: %w", err)
	}
	out := append([]byte{secretVersion}, nonce...)
	return dek, a.Seal(out, nonce, plaintext, aad), nil
}

// DecryptSecret reverses EncryptSecret.
func DecryptSecret(dek, ciphertext, aad []byte) ([]byte, error) {
	if len(dek) != DEKSize {
		return nil, fmt.Errorf("%w: data key is %d bytes", ErrSeal, len(dek))
	}
	if len(ciphertext) < SecretOverhead || ciphertext[0] != secretVersion {
		return nil, fmt.Errorf("%w: malformed secret ciphertext (%d bytes)", ErrSeal, len(ciphertext))
	}
	a, err := gcm(dek)
	if err != nil {
		return nil, err
	}
	pt, err := a.Open(nil, ciphertext[1:13], ciphertext[13:], aad)
	if err != nil {
		return nil, fmt.Errorf("%w: wrong data key or tampered ciphertext", ErrSeal)
	}
	return pt, nil
}

// SecretAAD binds a secret's ciphertext to its owner and name:
// "cowboy-secret-v1:" || owner(20) || name. Versions need no binding:
// every version has a fresh data key.
func SecretAAD(owner types.Address, name string) []byte {
	b := append([]byte("cowboy-secret-v1:"), owner[:]...)
	return append(b, name...)
}

// GrantAAD binds a sealed data key to the secret and its reader:
// "cowboy-grant-v1:" || owner(20) || reader(20) || seal_key(32) || name.
// The owner's own copy uses reader = owner.
func GrantAAD(owner types.Address, name string, reader types.Address, sealKey []byte) []byte {
	b := append([]byte("cowboy-grant-v1:"), owner[:]...)
	b = append(b, reader[:]...)
	b = append(b, sealKey...)
	return append(b, name...)
}

// OpenSecret is the runner side of secret release: open the sealed data key
// of a grant with the enclave's seal key and decrypt the secret. owner and
// name identify the secret, runner is the grantee.
func OpenSecret(priv *ecdh.PrivateKey, owner types.Address, name string, runner types.Address, sealedDEK, ciphertext []byte) ([]byte, error) {
	dek, err := Open(priv, sealedDEK, GrantAAD(owner, name, runner, priv.PublicKey().Bytes()))
	if err != nil {
		return nil, err
	}
	return DecryptSecret(dek, ciphertext, SecretAAD(owner, name))
}
