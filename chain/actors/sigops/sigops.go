// Package sigops serves the signature host calls of spec 002 §16.1 and
// §17.3 to actors:
//
//   - verify_signature(scheme, pubkey_or_address, message, signature):
//     "secp256k1" checks keccak256(message) against a 65-byte r‖s‖v
//     signature (v 0/1 or 27/28) and a 20-byte address (recovery) or a
//     33/65-byte public key (a 64-byte r‖s signature also works then);
//     "ed25519" checks a 64-byte signature of message under a 32-byte key.
//     High-s secp256k1 signatures are refused as malleable.
//   - verify_eip712(typed_data, signature, address[, chain_id]): the EIP-712
//     hash of typed_data (JSON, hashed by go-ethereum's signer/core/apitypes)
//     recovered from a 65-byte signature and compared with address. With
//     chain_id, typed data whose domain names another chain (or none) is an
//     error, not a false.
//
// Both return a bool: a well-formed signature that does not verify is
// False. Malformed input is a catchable HostError; neither op writes state.
package sigops

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// The ops.
const (
	OpVerifySignature = "verify_signature"
	OpVerifyEIP712    = "verify_eip712"
)

// Costs. verify_signature is 10,000 cycles (spec 002 §17.3);
// verify_eip712 is a signature check plus the hash() cost of its typed
// data: 10,000 + 100 + 1 per byte.
const (
	VerifySignatureCycles = 10_000
	HashCycles            = 100
	HashCyclesPerByte     = 1
	// MaxTypedDataBytes bounds verify_eip712's typed data.
	MaxTypedDataBytes = 64 << 10
)

// Schemes of verify_signature.
const (
	SchemeSecp256k1 = "secp256k1"
	SchemeEd25519   = "ed25519"
)

// Errors, wrapped in the actor-visible message.
var (
	ErrBadArgs            = errors.New("bad arguments")
	ErrUnknownScheme      = errors.New("unknown signature scheme")
	ErrMalformedTyped     = errors.New("malformed typed data")
	ErrWrongChain         = errors.New("wrong chain")
	ErrMalformedSignature = errors.New("malformed signature")
)

// Register registers verify_signature and verify_eip712 on rt.
func Register(rt *actors.Runtime) error {
	if err := rt.Register(OpVerifySignature, verifySignatureOp); err != nil {
		return err
	}
	return rt.Register(OpVerifyEIP712, verifyEIP712Op)
}

// bytesArgs reads the named byte-string arguments (text is taken as UTF-8).
func bytesArgs(m map[string]any, names ...string) ([][]byte, error) {
	out := make([][]byte, len(names))
	for i, k := range names {
		switch v := m[k].(type) {
		case []byte:
			out[i] = v
		case string:
			out[i] = []byte(v)
		default:
			return nil, fmt.Errorf("%w: %s must be bytes", ErrBadArgs, k)
		}
	}
	return out, nil
}

func verifySignatureOp(_ *actors.Host, req *pvm.HostRequest) (*pvm.HostResponse, error) {
	m, err := actors.HostArgs(req.Args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	scheme, _ := m["scheme"].(string)
	b, err := bytesArgs(m, "key", "message", "signature")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	ok, err := VerifySignature(scheme, b[0], b[1], b[2])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	return &pvm.HostResponse{Value: ok, Cycles: VerifySignatureCycles}, nil
}

// VerifySignature is verify_signature: whether sig signs msg under key
// (see the package comment). Malformed input is an error.
func VerifySignature(scheme string, key, msg, sig []byte) (bool, error) {
	switch scheme {
	case SchemeEd25519:
		if len(key) != ed25519.PublicKeySize || len(sig) != ed25519.SignatureSize {
			return false, fmt.Errorf("%w: ed25519 takes a 32-byte key and a 64-byte signature, not %d and %d", ErrMalformedSignature, len(key), len(sig))
		}
		return ed25519.Verify(ed25519.PublicKey(key), msg, sig), nil
	case SchemeSecp256k1:
		digest := crypto.Keccak256(msg)
		switch len(key) {
		case types.AddressLength:
			return recoverMatches(digest, sig, types.Address(key))
		case 33, 65:
			pub, err := decodePub(key)
			if err != nil {
				return false, err
			}
			switch len(sig) {
			case 64, 65:
				if len(sig) == 65 {
					if _, err := normalizeV(sig); err != nil {
						return false, err
					}
				}
				return crypto.VerifySignature(pub, digest, sig[:64]), nil
			}
			return false, fmt.Errorf("%w: secp256k1 takes a 64- or 65-byte signature, not %d", ErrMalformedSignature, len(sig))
		}
		return false, fmt.Errorf("%w: secp256k1 takes a 20-byte address or a 33/65-byte public key, not %d bytes", ErrMalformedSignature, len(key))
	}
	return false, fmt.Errorf("%w %q (secp256k1 or ed25519)", ErrUnknownScheme, scheme)
}

func decodePub(key []byte) ([]byte, error) {
	if len(key) == 33 {
		p, err := crypto.DecompressPubkey(key)
		if err != nil {
			return nil, fmt.Errorf("%w: public key: %v", ErrMalformedSignature, err)
		}
		return crypto.FromECDSAPub(p), nil
	}
	if _, err := crypto.UnmarshalPubkey(key); err != nil {
		return nil, fmt.Errorf("%w: public key: %v", ErrMalformedSignature, err)
	}
	return key, nil
}

// normalizeV returns sig (65 bytes) with v as 0/1.
func normalizeV(sig []byte) ([]byte, error) {
	if len(sig) != 65 {
		return nil, fmt.Errorf("%w: a recoverable secp256k1 signature is 65 bytes r‖s‖v, not %d", ErrMalformedSignature, len(sig))
	}
	out := bytes.Clone(sig)
	switch out[64] {
	case 0, 1:
	case 27, 28:
		out[64] -= 27
	default:
		return nil, fmt.Errorf("%w: v is %d, not 0, 1, 27 or 28", ErrMalformedSignature, sig[64])
	}
	r, s := new(big.Int).SetBytes(out[:32]), new(big.Int).SetBytes(out[32:64])
	if !crypto.ValidateSignatureValues(out[64], r, s, true) {
		return nil, fmt.Errorf("%w: r or s out of range (high-s signatures are malleable)", ErrMalformedSignature)
	}
	return out, nil
}

// recoverMatches reports whether the signer of digest recovered from sig is want.
func recoverMatches(digest, sig []byte, want types.Address) (bool, error) {
	s, err := normalizeV(sig)
	if err != nil {
		return false, err
	}
	pub, err := crypto.SigToPub(digest, s)
	if err != nil {
		return false, nil // a well-formed signature of no key: it does not verify
	}
	return types.Address(crypto.PubkeyToAddress(*pub)) == want, nil
}

func verifyEIP712Op(_ *actors.Host, req *pvm.HostRequest) (*pvm.HostResponse, error) {
	m, err := actors.HostArgs(req.Args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	b, err := bytesArgs(m, "typed_data", "signature", "address")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	td, sig, addr := b[0], b[1], b[2]
	if len(addr) != types.AddressLength {
		return nil, fmt.Errorf("%s: %w: address must be 20 bytes", req.Op, ErrBadArgs)
	}
	var chainID *big.Int
	switch v := m["chain_id"].(type) {
	case nil:
	case uint64:
		chainID = new(big.Int).SetUint64(v)
	case big.Int:
		chainID = &v
	default:
		return nil, fmt.Errorf("%s: %w: chain_id must be a non-negative int", req.Op, ErrBadArgs)
	}
	ok, err := VerifyEIP712(td, sig, types.Address(addr), chainID)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	return &pvm.HostResponse{Value: ok, Cycles: VerifySignatureCycles + HashCycles + HashCyclesPerByte*uint64(len(td))}, nil
}

// TypedDataHash is the EIP-712 signing hash of typed data in JSON
// (go-ethereum's apitypes.TypedDataAndHash) and the domain's chain id (nil
// if it names none).
func TypedDataHash(typedJSON []byte) ([]byte, *big.Int, error) {
	if len(typedJSON) > MaxTypedDataBytes {
		return nil, nil, fmt.Errorf("%w: %d bytes, at most %d", ErrMalformedTyped, len(typedJSON), MaxTypedDataBytes)
	}
	var td apitypes.TypedData
	if err := json.Unmarshal(typedJSON, &td); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrMalformedTyped, err)
	}
	if td.PrimaryType == "" || len(td.Types) == 0 {
		return nil, nil, fmt.Errorf("%w: types and primaryType are required", ErrMalformedTyped)
	}
	hash, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrMalformedTyped, err)
	}
	var chain *big.Int
	if td.Domain.ChainId != nil {
		chain = (*big.Int)(td.Domain.ChainId)
	}
	return hash, chain, nil
}

// VerifyEIP712 is verify_eip712: whether sig is address's signature of the
// typed data; with chainID, the typed data's domain must name that chain.
func VerifyEIP712(typedJSON, sig []byte, address types.Address, chainID *big.Int) (bool, error) {
	hash, chain, err := TypedDataHash(typedJSON)
	if err != nil {
		return false, err
	}
	if chainID != nil {
		if chain == nil {
			return false, fmt.Errorf("%w: the typed data's domain names no chainId, expected %s", ErrWrongChain, chainID)
		}
		if chain.Cmp(chainID) != 0 {
			return false, fmt.Errorf("%w: the typed data is for chain %s, expected %s", ErrWrongChain, chain, chainID)
		}
	}
	return recoverMatches(hash, sig, address)
}
