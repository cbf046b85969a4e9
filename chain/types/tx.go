package types

import (
	"bytes"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/fxamacker/cbor/v2"
)

// MaxTxSize is max_tx_size (spec 002 §12.1): 128 KiB of canonical CBOR.
const MaxTxSize = 128 * 1024

// Bytes is a byte string that always encodes as a CBOR byte string (never
// null) and renders as 0x-hex in JSON.
type Bytes []byte

// MarshalCBOR encodes b as a byte string; nil encodes as the empty string.
func (b Bytes) MarshalCBOR() ([]byte, error) {
	if b == nil {
		return []byte{0x40}, nil
	}
	return cbor.Marshal([]byte(b))
}

// UnmarshalCBOR accepts only a byte string.
func (b *Bytes) UnmarshalCBOR(data []byte) error {
	if len(data) > 0 && data[0]>>5 != 2 {
		return errors.New("expected a CBOR byte string")
	}
	var v []byte
	if err := cbor.Unmarshal(data, &v); err != nil {
		return err
	}
	if v == nil {
		v = []byte{}
	}
	*b = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (b Bytes) MarshalText() ([]byte, error) { return HexBytes(b).MarshalText() }

// String renders the bytes as 0x-hex.
func (b Bytes) String() string { return HexBytes(b).String() }

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *Bytes) UnmarshalText(t []byte) error { return (*HexBytes)(b).UnmarshalText(t) }

// AccessTuple declares an address and the storage keys a transaction touches.
type AccessTuple struct {
	_           struct{} `cbor:",toarray"`
	Address     Address  `json:"address"`
	StorageKeys []Bytes  `json:"storage_keys"`
}

// Signature is a recoverable secp256k1 signature [y_parity, r, s].
type Signature struct {
	_       struct{} `cbor:",toarray"`
	YParity uint8
	R       Hash
	S       Hash
}

// TxData is the field list of a transaction in the exact order of spec 002
// §2.5. It is the plain data; Tx wraps it with cached derived values.
type TxData struct {
	_              struct{}      `cbor:",toarray"`
	ChainID        uint64        `json:"chain_id"`
	Nonce          uint64        `json:"nonce"`
	To             *Address      `json:"to"`
	Value          *big.Int      `json:"value"`
	CyclesLimit    uint64        `json:"cycles_limit"`
	CellsLimit     uint64        `json:"cells_limit"`
	MaxFeePerCycle uint64        `json:"max_fee_per_cycle"`
	MaxFeePerCell  uint64        `json:"max_fee_per_cell"`
	TipPerCycle    uint64        `json:"tip_per_cycle"`
	TipPerCell     uint64        `json:"tip_per_cell"`
	AccessList     []AccessTuple `json:"access_list"`
	Payload        Bytes         `json:"payload"`
	Signature      *Signature    `json:"signature"`
}

// Tx is an immutable transaction. Build one with NewTx or DecodeTx; sign with
// SignTx, which returns a new Tx.
type Tx struct {
	data    TxData
	encoded []byte
	hash    Hash
	sender  *Address
}

// NewTx copies d into a transaction, normalising a nil Value to zero.
func NewTx(d TxData) (*Tx, error) {
	d = d.clone()
	if d.Value == nil {
		d.Value = new(big.Int)
	}
	if d.Value.Sign() < 0 {
		return nil, fmt.Errorf("%w: negative value", ErrMalformedTx)
	}
	enc, ok := appendTxData(nil, &d)
	if !ok {
		var err error
		if enc, err = codec.Marshal(&d); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformedTx, err)
		}
	}
	return &Tx{data: d, encoded: enc, hash: Keccak256(enc)}, nil
}

// DecodeTx decodes canonical CBOR bytes. It rejects oversized input,
// non-canonical encodings, trailing bytes and structurally invalid fields.
func DecodeTx(b []byte) (*Tx, error) {
	if len(b) > MaxTxSize {
		return nil, fmt.Errorf("%w: %d bytes > %d", ErrTxTooLarge, len(b), MaxTxSize)
	}
	var d TxData
	if err := codec.UnmarshalStored(b, &d); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedTx, err)
	}
	// Canonical form: re-encoding the decoded fields reproduces the input
	// (codec.Unmarshal's check, done here with the reflection-free encoder).
	again, ok := appendTxData(make([]byte, 0, len(b)), &d)
	if !ok {
		var err error
		if again, err = codec.Marshal(&d); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformedTx, err)
		}
	}
	if !bytes.Equal(again, b) {
		return nil, fmt.Errorf("%w: %w", ErrNonCanonicalTx, codec.ErrNonCanonical)
	}
	if d.Value == nil {
		return nil, fmt.Errorf("%w: value is null", ErrMalformedTx)
	}
	if d.Value.Sign() < 0 {
		return nil, fmt.Errorf("%w: negative value", ErrMalformedTx)
	}
	if d.Payload == nil {
		return nil, fmt.Errorf("%w: payload is null", ErrMalformedTx)
	}
	if s := d.Signature; s != nil && s.YParity > 1 {
		return nil, fmt.Errorf("%w: y_parity %d", ErrMalformedTx, s.YParity)
	}
	enc := append([]byte(nil), b...)
	return &Tx{data: d, encoded: enc, hash: Keccak256(enc)}, nil
}

func (d TxData) clone() TxData {
	c := d
	if d.To != nil {
		to := *d.To
		c.To = &to
	}
	if d.Value != nil {
		c.Value = new(big.Int).Set(d.Value)
	}
	if d.AccessList != nil {
		c.AccessList = make([]AccessTuple, len(d.AccessList))
		for i, t := range d.AccessList {
			c.AccessList[i] = AccessTuple{Address: t.Address, StorageKeys: append([]Bytes(nil), t.StorageKeys...)}
			if t.StorageKeys != nil && len(t.StorageKeys) == 0 {
				c.AccessList[i].StorageKeys = []Bytes{}
			}
		}
	}
	c.Payload = append(Bytes{}, d.Payload...)
	if d.Signature != nil {
		s := *d.Signature
		c.Signature = &s
	}
	return c
}

// Data returns a copy of the transaction's fields.
func (tx *Tx) Data() TxData { return tx.data.clone() }

// Encode returns the canonical CBOR encoding (a copy).
func (tx *Tx) Encode() []byte { return append([]byte(nil), tx.encoded...) }

// Size is the length of the canonical encoding in bytes.
func (tx *Tx) Size() int { return len(tx.encoded) }

// Hash is keccak256 of the full canonical encoding, signature included.
func (tx *Tx) Hash() Hash { return tx.hash }

// Accessors for the individual fields.
func (tx *Tx) ChainID() uint64           { return tx.data.ChainID }
func (tx *Tx) Nonce() uint64             { return tx.data.Nonce }
func (tx *Tx) Value() *big.Int           { return new(big.Int).Set(tx.data.Value) }
func (tx *Tx) CyclesLimit() uint64       { return tx.data.CyclesLimit }
func (tx *Tx) CellsLimit() uint64        { return tx.data.CellsLimit }
func (tx *Tx) MaxFeePerCycle() uint64    { return tx.data.MaxFeePerCycle }
func (tx *Tx) MaxFeePerCell() uint64     { return tx.data.MaxFeePerCell }
func (tx *Tx) TipPerCycle() uint64       { return tx.data.TipPerCycle }
func (tx *Tx) TipPerCell() uint64        { return tx.data.TipPerCell }
func (tx *Tx) Payload() []byte           { return append([]byte(nil), tx.data.Payload...) }
func (tx *Tx) AccessList() []AccessTuple { return tx.data.clone().AccessList }
func (tx *Tx) Signature() *Signature     { return tx.data.clone().Signature }
func (tx *Tx) IsSigned() bool            { return tx.data.Signature != nil }
func (tx *Tx) To() (Address, bool) {
	if tx.data.To == nil {
		return Address{}, false
	}
	return *tx.data.To, true
}

// SigningHash is keccak256(CBOR(tx with signature = null)) (spec 002 §2.5).
//
// The signature is the last element of the transaction's array, so the
// signing encoding is the canonical encoding with that element's bytes
// replaced by CBOR null (0xf6): the hash is taken over the stored bytes
// without cloning or re-encoding the transaction.
func (tx *Tx) SigningHash() Hash {
	if tx.data.Signature == nil {
		return tx.hash // the encoding already ends in null
	}
	if n := len(tx.encoded) - signatureEncodedLen; n > 0 && isSignatureEncoding(tx.encoded[n:], tx.data.Signature) {
		return Keccak256(tx.encoded[:n], cborNull)
	}
	return tx.slowSigningHash()
}

// slowSigningHash re-encodes the fields with a null signature. It is the
// definition SigningHash's fast path must agree with.
func (tx *Tx) slowSigningHash() Hash {
	d := tx.data
	d.Signature = nil
	return Keccak256(codec.MustMarshal(&d))
}

// cborNull is the one-byte CBOR encoding of null.
var cborNull = []byte{0xf6}

// signatureEncodedLen is the length of a Signature's canonical encoding:
// array(3) head, y_parity (0 or 1, one byte), and two 32-byte byte strings
// (two-byte head each).
const signatureEncodedLen = 1 + 1 + (2 + HashLength) + (2 + HashLength)

// isSignatureEncoding reports whether b is exactly s's canonical encoding.
func isSignatureEncoding(b []byte, s *Signature) bool {
	if len(b) != signatureEncodedLen || s.YParity > 1 {
		return false
	}
	if b[0] != 0x83 || b[1] != s.YParity || b[2] != 0x58 || b[3] != HashLength {
		return false
	}
	r := b[4 : 4+HashLength]
	hs := b[4+HashLength:]
	return hs[0] == 0x58 && hs[1] == HashLength && string(r) == string(s.R[:]) && string(hs[2:]) == string(s.S[:])
}

// secp256k1 group order halved; signatures with s above it are rejected so
// that a transaction has exactly one valid encoding (no malleability).
var secp256k1HalfN = new(big.Int).Rsh(crypto.S256().Params().N, 1)

// Sender recovers the signing address. The result is cached.
func (tx *Tx) Sender() (Address, error) {
	if tx.sender != nil {
		return *tx.sender, nil
	}
	s := tx.data.Signature
	if s == nil {
		return Address{}, ErrMissingSignature
	}
	r := new(big.Int).SetBytes(s.R[:])
	sv := new(big.Int).SetBytes(s.S[:])
	if r.Sign() == 0 || sv.Sign() == 0 || sv.Cmp(secp256k1HalfN) > 0 || !crypto.ValidateSignatureValues(s.YParity, r, sv, true) {
		return Address{}, fmt.Errorf("%w: signature values out of range", ErrBadSignature)
	}
	sig := make([]byte, 65)
	copy(sig[0:32], s.R[:])
	copy(sig[32:64], s.S[:])
	sig[64] = s.YParity
	h := tx.SigningHash()
	// Ecrecover returns the 65-byte uncompressed point, which the curve
	// library has already checked; the address is the last 20 bytes of the
	// keccak256 of its 64 coordinate bytes, as crypto.PubkeyToAddress would
	// compute after SigToPub re-parsed and re-validated the same point.
	pub, err := crypto.Ecrecover(h[:], sig)
	if err != nil {
		return Address{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	if len(pub) != 65 || pub[0] != 4 {
		return Address{}, fmt.Errorf("%w: recovered key is not an uncompressed point", ErrBadSignature)
	}
	var a Address
	ph := Keccak256(pub[1:])
	copy(a[:], ph[HashLength-AddressLength:])
	tx.sender = &a
	return a, nil
}

// SignTx signs tx with key and returns the signed transaction; tx is not
// modified. The signature covers the chain id, so it is valid on one chain.
func SignTx(tx *Tx, key *ecdsa.PrivateKey) (*Tx, error) {
	h := tx.SigningHash()
	sig, err := crypto.Sign(h[:], key)
	if err != nil {
		return nil, fmt.Errorf("sign transaction: %w", err)
	}
	d := tx.data.clone()
	d.Signature = &Signature{YParity: sig[64]}
	copy(d.Signature.R[:], sig[0:32])
	copy(d.Signature.S[:], sig[32:64])
	signed, err := NewTx(d)
	if err != nil {
		return nil, err
	}
	a := Address(crypto.PubkeyToAddress(key.PublicKey))
	signed.sender = &a
	return signed, nil
}

// PubkeyToAddress derives the account address of a secp256k1 public key
// (last 20 bytes of keccak256 of the uncompressed point, as in Ethereum, so
// one key controls the same address on both chains; spec 002 §16.1).
func PubkeyToAddress(pub ecdsa.PublicKey) Address { return Address(crypto.PubkeyToAddress(pub)) }
