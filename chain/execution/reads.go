package execution

import (
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Reads of the actor host's own records (owner, pins, libraries) for the
// node's API, so that the state layout stays in this package.

// ReadActorOwner returns the account that deployed actor a, or nil when
// the record is absent or unreadable.
func ReadActorOwner(r state.Reader, a types.Address) (*types.Address, error) {
	raw, ok, err := r.Get(state.StorageKey(a, KeyOwner))
	if err != nil || !ok {
		return nil, err
	}
	var owner []byte
	if codec.Unmarshal(raw, &owner) != nil {
		return nil, nil
	}
	o, err := types.BytesToAddress(owner)
	if err != nil {
		return nil, nil
	}
	return &o, nil
}

// ReadPins returns actor a's library pins: import name → code hash.
func ReadPins(r state.Reader, a types.Address) (map[string]types.Hash, error) {
	out := map[string]types.Hash{}
	prefix := state.Key(state.PrefixLibPin, a[:])
	err := r.Scan(prefix, func(k, val []byte) error {
		h, err := types.BytesToHash(val)
		if err != nil {
			return err
		}
		out[string(k[len(prefix):])] = h
		return nil
	})
	return out, err
}

// ReadLibraries returns the libraries published under publisher, in key
// (name) order.
func ReadLibraries(r state.Reader, publisher types.Address) ([]Library, error) {
	var out []Library
	err := r.Scan(state.Key(state.PrefixLibrary, publisher[:]), func(_, val []byte) error {
		var l Library
		if err := codec.Unmarshal(val, &l); err != nil {
			return err
		}
		out = append(out, l)
		return nil
	})
	return out, err
}
