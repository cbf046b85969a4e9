// Package vrf is Cowboy's verifiable random function and randomness beacon.
//
// The VRF is the BLS-signature VRF: the proof is the proposer's BLS12-381
// signature over Message(seed, height) and the output is
// keccak256(tag || proof). A BLS signature on a validated key is unique (the
// scheme is deterministic and every valid point has one encoding), so a
// proposer cannot choose among outputs; it can only withhold its block.
//
// The beacon value of block n is its VRF output R_n. Execution of block n
// sees R_{n-1}, the output revealed by its parent, never its own: a
// proposer learns R_n only when it signs block n, after the block's
// contents are fixed, and nobody can use R_n before block n+1.
// Actors derive independent sub-randomness with Randomness(R, label).
package vrf

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// ProofSize is the size of a proof (a compressed BLS signature).
const ProofSize = bls.SignatureSize

const (
	msgTag  = "cowboy/vrf/v1"
	outTag  = "cowboy/vrf-output/v1"
	hkdfTag = "cowboy/randomness/v1"
)

// ErrInvalidProof is returned when a proof does not verify.
var ErrInvalidProof = errors.New("vrf: invalid proof")

// Message is the VRF input for a height under an epoch seed:
// "cowboy/vrf/v1" || seed || big-endian height.
func Message(seed types.Hash, height uint64) []byte {
	m := make([]byte, 0, len(msgTag)+32+8)
	m = append(m, msgTag...)
	m = append(m, seed[:]...)
	return binary.BigEndian.AppendUint64(m, height)
}

// Output maps a proof to the VRF output.
func Output(proof []byte) types.Hash { return types.Keccak256([]byte(outTag), proof) }

// Prove evaluates the VRF for (seed, height) under sk.
func Prove(sk *bls.SecretKey, seed types.Hash, height uint64) (out types.Hash, proof []byte) {
	proof = sk.Sign(Message(seed, height)).Bytes()
	return Output(proof), proof
}

// Verify checks proof for (seed, height) under pk and returns the output.
func Verify(pk *bls.PublicKey, seed types.Hash, height uint64, proof []byte) (types.Hash, error) {
	sig, err := bls.SignatureFromBytes(proof)
	if err != nil {
		return types.Hash{}, fmt.Errorf("%w: %w", ErrInvalidProof, err)
	}
	if !pk.Verify(Message(seed, height), sig) {
		return types.Hash{}, ErrInvalidProof
	}
	return Output(proof), nil
}

// Randomness derives the sub-randomness for label from a beacon value:
// HKDF-SHA256(secret = R, salt = "cowboy/randomness/v1", info = label),
// 32 bytes. Distinct labels give independent values.
func Randomness(r types.Hash, label []byte) types.Hash {
	k, err := hkdf.Key(sha256.New, r[:], []byte(hkdfTag), string(label), 32)
	if err != nil { // only for lengths above 255*32
		panic(fmt.Sprintf("vrf: hkdf: %v", err))
	}
	return types.Hash(k)
}

// EpochSeed derives the seed of the next epoch from the current seed and the
// beacon value of the last finalized block of the epoch.
func EpochSeed(prev types.Hash, lastBeacon types.Hash, epoch uint64) types.Hash {
	return types.Keccak256([]byte("cowboy/epoch-seed/v1"), prev[:], lastBeacon[:], binary.BigEndian.AppendUint64(nil, epoch))
}
