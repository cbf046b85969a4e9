package sdk

import (
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/state/smt"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// VerifyProof checks a state proof against a state root the caller trusts
// (from a block header it verified). It needs nothing else: not the node,
// not the state. A nil value claims absence.
func VerifyProof(root types.Hash, key, value []byte, proof *smt.Proof) error {
	if proof == nil {
		return fmt.Errorf("verify proof: no proof")
	}
	if value != nil && len(value) == 0 {
		value = []byte{0} // the store commits an empty value as one zero byte
	}
	return smt.VerifyProof([32]byte(root), key, value, proof)
}

// VerifyAccount checks an account proof response against root and returns
// the proven account (an empty account when the proof shows absence).
func VerifyAccount(root types.Hash, addr types.Address, p *apitypes.Proof) (*state.Account, error) {
	key := state.AccountKey(addr)
	if string(p.Key) != string(key) {
		return nil, fmt.Errorf("verify account: proof is for key %x, not %x", []byte(p.Key), key)
	}
	var val []byte
	if p.Value != nil {
		val = *p.Value
	}
	if err := VerifyProof(root, key, val, p.Proof); err != nil {
		return nil, fmt.Errorf("verify account %s: %w", addr, err)
	}
	r := state.MapReader{}
	if val != nil {
		r[string(key)] = val
	}
	return state.ReadAccount(r, addr)
}
