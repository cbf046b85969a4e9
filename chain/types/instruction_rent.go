package types

// State rent and storage bond instructions (spec 002 §4.4, §17.5, §3.2
// "Storage Quotas"), sent to the rent module (0x…0F).
const (
	// KindRentPay pays the transaction's value toward Actor's rent: its
	// debt first, the rest prepaid. Any account may pay for any actor.
	KindRentPay InstructionKind = 136
	// KindRentSponsor prepays Epochs epochs of Actor's rent at its current
	// charge from the sender's balance (third-party sponsorship).
	KindRentSponsor InstructionKind = 137
	// KindStorageBond sets Actor's storage quota (1..8 MiB) and locks or
	// returns the matching bond; only the actor's owner may send it.
	KindStorageBond InstructionKind = 138
	// KindRentRestore presents one chunk of an evicted actor's archived
	// storage; the last chunk makes the actor active again.
	KindRentRestore InstructionKind = 139
)

// rentKinds registers the kinds declared in this file (kinds.go).
var rentKinds = []kindSpec{
	{KindRentPay, "rent_pay", LaneUser, newOf[RentPay]},
	{KindRentSponsor, "rent_sponsor", LaneUser, newOf[RentSponsor]},
	{KindStorageBond, "storage_bond", LaneUser, newOf[StorageBond]},
	{KindRentRestore, "rent_restore", LaneUser, newOf[RentRestore]},
}

// RentPay pays the transaction's value toward Actor's rent.
type RentPay struct {
	_     struct{} `cbor:",toarray"`
	Kind  InstructionKind
	Actor Address
}

// RentSponsor prepays Epochs rent epochs of Actor's rent from the sender.
type RentSponsor struct {
	_      struct{} `cbor:",toarray"`
	Kind   InstructionKind
	Actor  Address
	Epochs uint64
}

// StorageBond sets Actor's storage quota to Quota bytes, locking the bond
// for the bytes above the base quota (or returning it when Quota shrinks).
type StorageBond struct {
	_     struct{} `cbor:",toarray"`
	Kind  InstructionKind
	Actor Address
	Quota uint64
}

// StorageEntry is one actor storage slot of an archive.
type StorageEntry struct {
	_     struct{} `cbor:",toarray"`
	Key   Bytes    `json:"key"`
	Value Bytes    `json:"value"`
}

// RentRestore presents chunk Index of evicted Actor's archived storage
// (chain/system/rent: archive chunking); chunks go in order, 0 first.
type RentRestore struct {
	_       struct{} `cbor:",toarray"`
	Kind    InstructionKind
	Actor   Address
	Index   uint64
	Entries []StorageEntry
}

func (RentPay) InstructionKind() InstructionKind     { return KindRentPay }
func (RentSponsor) InstructionKind() InstructionKind { return KindRentSponsor }
func (StorageBond) InstructionKind() InstructionKind { return KindStorageBond }
func (RentRestore) InstructionKind() InstructionKind { return KindRentRestore }
