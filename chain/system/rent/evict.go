package rent

import (
	"bytes"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// StorageEntries returns actor a's storage slots in key order, without the
// chain's reserved keys (owner, initialized), which eviction keeps.
func StorageEntries(r state.Reader, a types.Address) ([]types.StorageEntry, error) {
	prefix := state.StorageKey(a, nil)
	var out []types.StorageEntry
	err := r.Scan(prefix, func(k, v []byte) error {
		key := k[len(prefix):]
		if bytes.Equal(key, actors.KeyOwner) || bytes.Equal(key, actors.KeyInitialized) {
			return nil
		}
		out = append(out, types.StorageEntry{Key: append(types.Bytes(nil), key...), Value: append(types.Bytes(nil), v...)})
		return nil
	})
	return out, err
}

// evict archives and prunes a's storage, cancels its timers, burns its
// storage bond and makes it dormant. Code, address, balance, owner and the
// archive root stay. The work is bounded by the actor's quota (≤ 8 MiB).
func (m *Module) evict(x system.Tx, g *Global, a types.Address, acc *Account) error {
	o := x.State()
	entries, err := StorageEntries(o, a)
	if err != nil {
		return err
	}
	_, arch := BuildArchive(entries)
	arch.Height = x.Env().Height
	for _, e := range entries {
		o.Delete(state.StorageKey(a, e.Key))
	}
	meta, err := actors.ReadActorMeta(o, a)
	if err != nil {
		return err
	}
	g.TotalBytes -= min(meta.StorageBytes, g.TotalBytes)
	if err := actors.SetStorageBytes(o, a, 0); err != nil {
		return err
	}
	timers := 0
	if m.timers != nil {
		if timers, err = m.timers.PruneOwner(o, a); err != nil {
			return err
		}
	}
	burned := new(big.Int).Set(acc.Bond)
	if burned.Sign() > 0 {
		if err := o.SubBalance(types.RentModuleAddress, burned); err != nil {
			return err
		}
		if err := o.AddBigRecord(state.RecordBurned, burned); err != nil {
			return err
		}
	}
	acc.Bond, acc.Quota = new(big.Int), 0
	acc.Status, acc.Archive = StatusEvicted, arch
	saveAccount(o, a, acc)
	x.Emit(types.RentModuleAddress, &EvictedEvent{Actor: a, Root: arch.Root, Bytes: arch.Bytes, Chunks: uint64(len(arch.Chunks)),
		Entries: arch.Entries, Debt: new(big.Int).Set(acc.Debt), Burned: burned, Timers: uint64(timers)})
	return nil
}
