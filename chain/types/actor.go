package types

import (
	"bytes"

	"fmt"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ErrBadSource is returned for actor or library source that cannot be
// canonicalised (it is not valid UTF-8).
var ErrBadSource = newErr("bad_source", "source is not valid UTF-8")

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// CanonicalSource returns the canonical form of Python source (spec 002
// §1.2): UTF-8 without a byte-order mark, CRLF and lone CR turned into LF,
// NFC-normalised. These bytes are what is hashed and stored on chain.
func CanonicalSource(src []byte) ([]byte, error) {
	src = bytes.TrimPrefix(src, utf8BOM)
	if !utf8.Valid(src) {
		return nil, ErrBadSource
	}
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	src = bytes.ReplaceAll(src, []byte("\r"), []byte("\n"))
	return norm.NFC.Bytes(src), nil
}

// CodeHash is keccak256 of the canonical source.
func CodeHash(canonical []byte) Hash { return Keccak256(canonical) }

// ActorAddress derives a CREATE2-style actor address (spec 002 §1.2):
// last_20_bytes(keccak256(creator || salt || code_hash)).
func ActorAddress(creator Address, salt []byte, codeHash Hash) Address {
	h := Keccak256(creator[:], salt, codeHash[:])
	var a Address
	copy(a[:], h[HashLength-AddressLength:])
	return a
}

// ValidateBasic performs the stateless validity checks of spec 002 §2.2 that
// do not depend on account state: chain id, size, signature, access list and
// the limit and fee-field relations. Limit maxima are checked by the fee
// schedule, which owns them.
func ValidateBasic(tx *Tx, chainID uint64) error {
	if tx.Size() > MaxTxSize {
		return fmt.Errorf("%w: %d bytes > %d", ErrTxTooLarge, tx.Size(), MaxTxSize)
	}
	if tx.ChainID() != chainID {
		return fmt.Errorf("%w: transaction is for chain %d, this is chain %d", ErrWrongChainID, tx.ChainID(), chainID)
	}
	if tx.TipPerCycle() > tx.MaxFeePerCycle() {
		return fmt.Errorf("%w: tip_per_cycle %d > max_fee_per_cycle %d", ErrFeeCapBelowTip, tx.TipPerCycle(), tx.MaxFeePerCycle())
	}
	if tx.TipPerCell() > tx.MaxFeePerCell() {
		return fmt.Errorf("%w: tip_per_cell %d > max_fee_per_cell %d", ErrFeeCapBelowTip, tx.TipPerCell(), tx.MaxFeePerCell())
	}
	if err := validateAccessList(tx.data.AccessList); err != nil {
		return err
	}
	if _, err := tx.Sender(); err != nil {
		return err
	}
	return nil
}

// MaxAccessListKeys bounds the storage keys one transaction may declare.
const MaxAccessListKeys = 1024

func validateAccessList(al []AccessTuple) error {
	if al == nil {
		return nil
	}
	seen := make(map[Address]struct{}, len(al))
	total := 0
	for i, t := range al {
		if _, dup := seen[t.Address]; dup {
			return fmt.Errorf("%w: address %s listed twice", ErrInvalidAccessList, t.Address)
		}
		seen[t.Address] = struct{}{}
		if t.StorageKeys == nil {
			return fmt.Errorf("%w: entry %d: storage_keys must be a list", ErrInvalidAccessList, i)
		}
		keys := make(map[string]struct{}, len(t.StorageKeys))
		for j, k := range t.StorageKeys {
			if len(k) == 0 || len(k) > 256 {
				return fmt.Errorf("%w: entry %d key %d: length %d outside 1..256", ErrInvalidAccessList, i, j, len(k))
			}
			if _, dup := keys[string(k)]; dup {
				return fmt.Errorf("%w: entry %d: key %x listed twice", ErrInvalidAccessList, i, []byte(k))
			}
			keys[string(k)] = struct{}{}
		}
		total += len(t.StorageKeys)
		if total > MaxAccessListKeys {
			return fmt.Errorf("%w: more than %d storage keys", ErrInvalidAccessList, MaxAccessListKeys)
		}
	}
	return nil
}
