package cbfs

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/crypto/ecies"
)

// volumeKey derives the owner's volume key: HKDF-SHA256 over the owner's
// private key, salted with the volume id.
func volumeKey(owner *ecdsa.PrivateKey, vol VolumeID) ([32]byte, error) {
	var k [32]byte
	b, err := hkdf.Key(sha256.New, crypto.FromECDSA(owner), vol[:], "cbfs volume key v1", 32)
	if err != nil {
		return k, fmt.Errorf("cbfs: derive volume key: %w", err)
	}
	copy(k[:], b)
	return k, nil
}

func subKey(volKey [32]byte, label string, id []byte) cipher.AEAD {
	b, err := hkdf.Key(sha256.New, volKey[:], id, "cbfs "+label+" v1", 32)
	if err != nil {
		panic(err) // only fails for oversized outputs
	}
	blk, err := aes.NewCipher(b)
	if err != nil {
		panic(err)
	}
	g, err := cipher.NewGCM(blk)
	if err != nil {
		panic(err)
	}
	return g
}

func segmentAAD(vol VolumeID, fileID [16]byte, idx int) []byte {
	aad := make([]byte, 0, 32+16+8)
	aad = append(aad, vol[:]...)
	aad = append(aad, fileID[:]...)
	return binary.BigEndian.AppendUint64(aad, uint64(idx))
}

// sealManifest encrypts a manifest encoding: nonce || ciphertext.
// sealManifest encrypts a manifest version. The nonce is derived from the
// content (HMAC under a separate key, as in SIV), so sealing the same version
// twice gives the same bytes: a commit retried after a partial store is not
// refused by relays that already hold the first copy. Distinct plaintexts get
// distinct nonces except with negligible probability.
func sealManifest(volKey [32]byte, vol VolumeID, version uint64, plain []byte) []byte {
	g := subKey(volKey, "manifest", nil)
	nk, err := hkdf.Key(sha256.New, volKey[:], nil, "cbfs manifest-nonce v1", 32)
	if err != nil {
		panic(err) // only fails for oversized outputs
	}
	mac := hmac.New(sha256.New, nk)
	mac.Write(vol[:])
	mac.Write(u64(version))
	mac.Write(plain)
	nonce := mac.Sum(nil)[:g.NonceSize()]
	return g.Seal(append([]byte(nil), nonce...), nonce, plain, append(vol[:], u64(version)...))
}

func openManifest(volKey [32]byte, vol VolumeID, version uint64, sealed []byte) ([]byte, error) {
	g := subKey(volKey, "manifest", nil)
	if len(sealed) < g.NonceSize() {
		return nil, fmt.Errorf("%w: manifest object too short", ErrIntegrity)
	}
	p, err := g.Open(nil, sealed[:g.NonceSize()], sealed[g.NonceSize():], append(vol[:], u64(version)...))
	if err != nil {
		return nil, fmt.Errorf("%w: manifest v%d does not decrypt: %v", ErrIntegrity, version, err)
	}
	return p, nil
}

// wrapKey encrypts the volume key to a grantee (ECIES over secp256k1).
func wrapKey(volKey [32]byte, to *ecdsa.PublicKey) ([]byte, error) {
	ct, err := ecies.Encrypt(rand.Reader, ecies.ImportECDSAPublic(to), volKey[:], nil, nil)
	if err != nil {
		return nil, fmt.Errorf("cbfs: wrap volume key: %w", err)
	}
	return ct, nil
}

func unwrapKey(wrapped []byte, key *ecdsa.PrivateKey) ([32]byte, error) {
	var k [32]byte
	pt, err := ecies.ImportECDSA(key).Decrypt(wrapped, nil, nil)
	if err != nil || len(pt) != 32 {
		return k, fmt.Errorf("%w: cannot unwrap volume key: %v", ErrPermission, err)
	}
	copy(k[:], pt)
	return k, nil
}
