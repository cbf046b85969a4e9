// Package state owns the layout of Cowboy's consensus state: the typed key
// prefixes every piece of state lives under, the encoding of accounts, and
// Overlay, the journaled in-memory change set that block execution writes
// into. It does no IO: it reads through the Reader interface and hands its
// sorted writes to whoever persists them (chain/store).
package state

import (
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Prefix is the first byte of every state key. Values are consensus: never
// renumber.
type Prefix byte

// State prefixes.
const (
	PrefixAccount Prefix = 0x01 // address → Account
	PrefixCode    Prefix = 0x02 // code hash → canonical source (content-addressed, shared by actors and libraries)
	PrefixStorage Prefix = 0x03 // actor address || key → value (actor storage)
	PrefixLibrary Prefix = 0x04 // publisher address || name → code hash
	PrefixLibPin  Prefix = 0x05 // actor address || name → code hash (write-once)
	PrefixSystem  Prefix = 0x06 // system actor address || key → value
	PrefixChain   Prefix = 0x07 // chain-level records (basefees, supply totals)
	PrefixActor   Prefix = 0x08 // actor address → ActorMeta (storage use, message nonce)
	PrefixDedup   Prefix = 0x09 // recipient actor || message id → height delivered
)

func (p Prefix) String() string {
	switch p {
	case PrefixAccount:
		return "account"
	case PrefixCode:
		return "code"
	case PrefixStorage:
		return "storage"
	case PrefixLibrary:
		return "library"
	case PrefixLibPin:
		return "libpin"
	case PrefixSystem:
		return "system"
	case PrefixChain:
		return "chain"
	case PrefixActor:
		return "actor"
	case PrefixDedup:
		return "dedup"
	}
	return fmt.Sprintf("prefix(0x%02x)", byte(p))
}

// Key builds a state key: prefix followed by the parts.
func Key(p Prefix, parts ...[]byte) []byte {
	n := 1
	for _, x := range parts {
		n += len(x)
	}
	k := make([]byte, 0, n)
	k = append(k, byte(p))
	for _, x := range parts {
		k = append(k, x...)
	}
	return k
}

// AccountKey is the state key of an account.
func AccountKey(a types.Address) []byte { return Key(PrefixAccount, a[:]) }

// CodeKey is the state key of a code blob.
func CodeKey(h types.Hash) []byte { return Key(PrefixCode, h[:]) }

// StorageKey is the state key of one actor storage slot.
func StorageKey(actor types.Address, key []byte) []byte { return Key(PrefixStorage, actor[:], key) }

// ChainKey is the state key of a chain-level record.
func ChainKey(name string) []byte { return Key(PrefixChain, []byte(name)) }

// Account is the state of one address (spec 002 "Accounts and State").
type Account struct {
	_        struct{}    `cbor:",toarray"`
	Balance  *big.Int    `json:"balance"`
	Nonce    uint64      `json:"nonce"`
	CodeHash *types.Hash `json:"code_hash"` // set for actors
}

// Reader reads committed state. Get returns found=false for a missing key.
// Scan calls fn for every key starting with prefix, in ascending key order.
type Reader interface {
	Get(key []byte) (value []byte, found bool, err error)
	Scan(prefix []byte, fn func(key, value []byte) error) error
}

// Write is one change to persist. A nil Value deletes the key.
type Write struct {
	Key   []byte
	Value []byte
}

type entry struct {
	value []byte // nil: deleted
}

type journalEntry struct {
	key  string
	prev *entry // nil: key was not in the overlay
}

// Overlay is a journaled change set over a Reader. Reads see the overlay's
// own writes first. Snapshot and RevertTo undo writes back to a point, which
// is how a failed transaction's effects are dropped while its fee stays.
// An Overlay is not safe for concurrent use.
type Overlay struct {
	base    Reader
	dirty   map[string]*entry
	journal []journalEntry
}

// NewOverlay starts an empty change set over base.
func NewOverlay(base Reader) *Overlay {
	return &Overlay{base: base, dirty: make(map[string]*entry)}
}

// Get returns the current value of key.
func (o *Overlay) Get(key []byte) ([]byte, bool, error) {
	if e, ok := o.dirty[string(key)]; ok {
		if e.value == nil {
			return nil, false, nil
		}
		return e.value, true, nil
	}
	v, ok, err := o.base.Get(key)
	if err != nil {
		return nil, false, fmt.Errorf("state: read %s key: %w", Prefix(key[0]), err)
	}
	return v, ok, nil
}

// Set writes key = value. value must not be nil; use Delete.
func (o *Overlay) Set(key, value []byte) {
	v := make([]byte, len(value)) // never nil: nil marks a deletion
	copy(v, value)
	o.record(key)
	o.dirty[string(key)] = &entry{value: v}
}

// Delete removes key.
func (o *Overlay) Delete(key []byte) {
	o.record(key)
	o.dirty[string(key)] = &entry{}
}

func (o *Overlay) record(key []byte) {
	prev, ok := o.dirty[string(key)]
	je := journalEntry{key: string(key)}
	if ok {
		cp := *prev
		je.prev = &cp
	}
	o.journal = append(o.journal, je)
}

// Snapshot returns a point RevertTo can return to.
func (o *Overlay) Snapshot() int { return len(o.journal) }

// RevertTo undoes every write made after snapshot s.
func (o *Overlay) RevertTo(s int) {
	for i := len(o.journal) - 1; i >= s; i-- {
		je := o.journal[i]
		if je.prev == nil {
			delete(o.dirty, je.key)
		} else {
			o.dirty[je.key] = je.prev
		}
	}
	o.journal = o.journal[:s]
}

// Scan merges the overlay's own writes with the base state under prefix,
// in ascending key order; deleted keys are skipped.
func (o *Overlay) Scan(prefix []byte, fn func(key, value []byte) error) error {
	// The overlay's own keys under prefix are merged into the base scan as
	// it streams, so a caller that stops early (a bounded read of a large
	// range, such as the timer queue's due set) reads only what it needs of
	// the base, not the whole range.
	var mine []string
	for k := range o.dirty {
		if strings.HasPrefix(k, string(prefix)) {
			mine = append(mine, k)
		}
	}
	sort.Strings(mine)
	j := 0
	emitMine := func(below string, all bool) error {
		for j < len(mine) && (all || mine[j] < below) {
			k := mine[j]
			j++
			if v := o.dirty[k].value; v != nil {
				if err := fn([]byte(k), v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := o.base.Scan(prefix, func(k, v []byte) error {
		key := string(k)
		if err := emitMine(key, false); err != nil {
			return err
		}
		if j < len(mine) && mine[j] == key { // same key: the overlay wins
			j++
			if ov := o.dirty[key].value; ov != nil {
				return fn(k, ov)
			}
			return nil
		}
		return fn(k, v)
	}); err != nil {
		return err
	}
	return emitMine("", true)
}

// Writes returns the net changes sorted by key, the order in which they are
// applied to the state commitment.
func (o *Overlay) Writes() []Write {
	keys := make([]string, 0, len(o.dirty))
	for k := range o.dirty {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Write, 0, len(keys))
	for _, k := range keys {
		out = append(out, Write{Key: []byte(k), Value: o.dirty[k].value})
	}
	return out
}

// Account returns the account at a, or an empty account if none exists.
func (o *Overlay) Account(a types.Address) (*Account, error) {
	return ReadAccount(o, a)
}

// ReadAccount decodes the account at a from any Reader.
func ReadAccount(r Reader, a types.Address) (*Account, error) {
	b, ok, err := r.Get(AccountKey(a))
	if err != nil {
		return nil, err
	}
	if !ok {
		return &Account{Balance: new(big.Int)}, nil
	}
	var acc Account
	if err := codec.UnmarshalStored(b, &acc); err != nil {
		return nil, fmt.Errorf("state: decode account %s: %w", a, err)
	}
	if acc.Balance == nil || acc.Balance.Sign() < 0 {
		return nil, fmt.Errorf("state: account %s has an invalid balance", a)
	}
	return &acc, nil
}

// SetAccount stores acc at a. An account with nothing in it is deleted, so
// that touching an address leaves no trace in the state root.
func (o *Overlay) SetAccount(a types.Address, acc *Account) {
	if acc.Balance.Sign() == 0 && acc.Nonce == 0 && acc.CodeHash == nil {
		o.Delete(AccountKey(a))
		return
	}
	o.Set(AccountKey(a), codec.MustMarshal(acc))
}

// AddBalance credits v to a.
func (o *Overlay) AddBalance(a types.Address, v *big.Int) error {
	acc, err := o.Account(a)
	if err != nil {
		return err
	}
	acc.Balance.Add(acc.Balance, v)
	o.SetAccount(a, acc)
	return nil
}

// SubBalance debits v from a, failing if the balance is too low.
func (o *Overlay) SubBalance(a types.Address, v *big.Int) error {
	acc, err := o.Account(a)
	if err != nil {
		return err
	}
	if acc.Balance.Cmp(v) < 0 {
		return fmt.Errorf("%w: %s has %s, needs %s", types.ErrInsufficientBalance, a, acc.Balance, v)
	}
	acc.Balance.Sub(acc.Balance, v)
	o.SetAccount(a, acc)
	return nil
}

// BigRecord reads a chain-level integer record (zero if absent).
func BigRecord(r Reader, name string) (*big.Int, error) {
	b, ok, err := r.Get(ChainKey(name))
	if err != nil || !ok {
		return new(big.Int), err
	}
	var v big.Int
	if err := codec.UnmarshalStored(b, &v); err != nil {
		return nil, fmt.Errorf("state: decode %s: %w", name, err)
	}
	return &v, nil
}

// AddBigRecord adds d to a chain-level integer record.
func (o *Overlay) AddBigRecord(name string, d *big.Int) error {
	v, err := BigRecord(o, name)
	if err != nil {
		return err
	}
	v.Add(v, d)
	o.Set(ChainKey(name), codec.MustMarshal(v))
	return nil
}

// Chain-level record names.
const (
	RecordBurned        = "burned"         // total base units burned
	RecordMinted        = "minted"         // total base units minted after genesis
	RecordGenesisSupply = "genesis_supply" // total allocated at genesis
	RecordBasefees      = "basefees"       // basefees the next block charges
)

// MapReader is a Reader over a map, for tests and genesis construction.
type MapReader map[string][]byte

// Get implements Reader.
func (m MapReader) Get(key []byte) ([]byte, bool, error) {
	v, ok := m[string(key)]
	return v, ok, nil
}

// Scan implements Reader.
func (m MapReader) Scan(prefix []byte, fn func(key, value []byte) error) error {
	var keys []string
	for k := range m {
		if strings.HasPrefix(k, string(prefix)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := fn([]byte(k), m[k]); err != nil {
			return err
		}
	}
	return nil
}

// HasPrefix reports whether key is under prefix p.
func HasPrefix(key []byte, p Prefix) bool { return len(key) > 0 && key[0] == byte(p) }
