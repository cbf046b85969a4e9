package rent

import (
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Status is an actor's rent standing. Values are consensus.
type Status uint8

// Rent standings (spec 002 "Grace Period and Eviction").
const (
	StatusActive  Status = 0 // no debt
	StatusOverdue Status = 1 // "rent overdue": in the grace period
	StatusWarning Status = 2 // "eviction imminent"
	StatusEvicted Status = 3 // dormant: storage archived and pruned
)

func (s Status) String() string {
	switch s {
	case StatusActive:
		return "active"
	case StatusOverdue:
		return "overdue"
	case StatusWarning:
		return "warning"
	case StatusEvicted:
		return "evicted"
	}
	return "unknown"
}

// Account is the rent record of one actor (state key AccountKey).
type Account struct {
	_            struct{} `cbor:",toarray"`
	Seq          uint64   `json:"seq"`           // position in the sweep index
	Charged      uint64   `json:"charged"`       // last rent epoch settled
	Prepaid      *big.Int `json:"prepaid"`       // prepaid rent, held by 0x…0F
	Debt         *big.Int `json:"debt"`          // unpaid rent plus catch-up fees
	OverdueSince uint64   `json:"overdue_since"` // first unpaid epoch (0: none)
	Status       Status   `json:"status"`
	Quota        uint64   `json:"quota"` // bonded quota (0: the base quota)
	Bond         *big.Int `json:"bond"`  // storage bond, held by 0x…0F
	Archive      *Archive `json:"archive,omitempty"`
}

// Archive is what eviction keeps of an actor's storage: the hashes of its
// chunks (ChunkEntries), their root, and the restore progress.
type Archive struct {
	_       struct{}     `cbor:",toarray"`
	Root    types.Hash   `json:"root"`
	Chunks  []types.Hash `json:"chunks"`
	Bytes   uint64       `json:"bytes"`
	Entries uint64       `json:"entries"`
	Height  uint64       `json:"height"` // block of the eviction
	Next    uint64       `json:"next"`   // next chunk rent_restore expects
}

// Global is the module's chain-wide record.
type Global struct {
	_          struct{} `cbor:",toarray"`
	Rate       *big.Int `json:"rate"`        // 1e-12 base units per byte per epoch
	Epoch      uint64   `json:"epoch"`       // epoch the rate belongs to
	TotalBytes uint64   `json:"total_bytes"` // S: actor storage in use
	Count      uint64   `json:"count"`       // registered actors
	Cursor     uint64   `json:"cursor"`      // next index the sweep visits
}

// Key is a rent state key.
func Key(parts ...[]byte) []byte { return system.Key(types.RentModuleAddress, parts...) }

// AccountKey is the state key of actor a's rent record.
func AccountKey(a types.Address) []byte { return Key([]byte("a"), a[:]) }

// GlobalKey is the state key of the Global record.
func GlobalKey() []byte { return Key([]byte("g")) }

func indexKey(seq uint64) []byte { return Key([]byte("i"), system.BE8(seq)) }

// ReadAccount returns actor a's rent record (nil: not registered).
func ReadAccount(r state.Reader, a types.Address) (*Account, error) {
	acc, err := system.Get[Account](r, AccountKey(a), "rent: account %s", a)
	if acc != nil {
		acc.norm()
	}
	return acc, err
}

// ReadGlobal returns the Global record (nil: none yet).
func ReadGlobal(r state.Reader) (*Global, error) {
	return system.Get[Global](r, GlobalKey(), "rent: global record")
}

func (a *Account) norm() {
	if a.Prepaid == nil {
		a.Prepaid = new(big.Int)
	}
	if a.Debt == nil {
		a.Debt = new(big.Int)
	}
	if a.Bond == nil {
		a.Bond = new(big.Int)
	}
}

func saveAccount(o *state.Overlay, a types.Address, acc *Account) {
	o.Set(AccountKey(a), codec.MustMarshal(acc))
}

func saveGlobal(o *state.Overlay, g *Global) { o.Set(GlobalKey(), codec.MustMarshal(g)) }
