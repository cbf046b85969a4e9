package timers

import (
	"encoding/binary"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// PrefixTimers is the one state key prefix byte under which all timer state
// lives. It follows chain/state's 0x01–0x09 and is consensus: never renumber.
const PrefixTimers byte = 0x0A

// Second key byte: which table under PrefixTimers. Consensus values.
const (
	tableRecord byte = 0x00 // id → Timer record (CBOR)
	tableRing   byte = 0x01 // slot(1) ‖ id → target_be8 (tier 1)
	tableEpoch  byte = 0x02 // epoch_be8 ‖ height_be8 ‖ id → target_be8 (tier 2)
	tableFar    byte = 0x03 // epoch_be8 ‖ height_be8 ‖ id → target_be8 (tier 3)
	tableDue    byte = 0x04 // target_be8 ‖ id → target_be8 (due, not yet fired)
	tableOwned  byte = 0x05 // owner(20) ‖ id → 0x01 (owner index)
	tableOwner  byte = 0x06 // owner(20) → ownerRecord (CBOR)
	tableHeight byte = 0x07 // height_be8 → pending count targeting height (be8)
	tableMeta   byte = 0x08 // (no suffix) → meta (CBOR)
	tableUsage  byte = 0x09 // (no suffix) → cycles used by the last block (be8)
	tableFloor  byte = 0x0A // (no suffix) → lower bound of the due set's targets (be8)
)

// ownedMarker is the value of an owner-index entry. Index values are never
// empty: state.Overlay stores an empty value as a deletion.
func ownedMarker() []byte { return []byte{0x01} }

func be8(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func key(table byte, parts ...[]byte) []byte {
	n := 2
	for _, p := range parts {
		n += len(p)
	}
	k := make([]byte, 0, n)
	k = append(k, PrefixTimers, table)
	for _, p := range parts {
		k = append(k, p...)
	}
	return k
}

// RecordKey is the state key of a timer record.
func RecordKey(id types.Hash) []byte { return key(tableRecord, id[:]) }

func ringKey(slot byte, id types.Hash) []byte { return key(tableRing, []byte{slot}, id[:]) }
func ringSlotPrefix(slot byte) []byte         { return key(tableRing, []byte{slot}) }

func epochKey(epoch, height uint64, id types.Hash) []byte {
	return key(tableEpoch, be8(epoch), be8(height), id[:])
}

func farKey(epoch, height uint64, id types.Hash) []byte {
	return key(tableFar, be8(epoch), be8(height), id[:])
}

func dueKey(target uint64, id types.Hash) []byte { return key(tableDue, be8(target), id[:]) }
func ownedKey(owner types.Address, id types.Hash) []byte {
	return key(tableOwned, owner[:], id[:])
}
func ownerKey(owner types.Address) []byte { return key(tableOwner, owner[:]) }
func heightKey(h uint64) []byte           { return key(tableHeight, be8(h)) }
func metaKey() []byte                     { return key(tableMeta) }
func usageKey() []byte                    { return key(tableUsage) }
func floorKey() []byte                    { return key(tableFloor) }

// idFromKeyTail returns the trailing 32-byte id of an index key.
func idFromKeyTail(k []byte) (types.Hash, bool) {
	var id types.Hash
	if len(k) < types.HashLength {
		return id, false
	}
	copy(id[:], k[len(k)-types.HashLength:])
	return id, true
}
