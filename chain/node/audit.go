package node

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Supply is the result of a supply audit.
type Supply struct {
	Balances *big.Int // sum of every account balance
	Burned   *big.Int
	Minted   *big.Int
	Genesis  *big.Int
}

// AuditSupply sums every balance in v's state and checks the conservation
// law sum(balances) + burned = genesis supply + minted.
func AuditSupply(v *store.View) (*Supply, error) {
	s := &Supply{Balances: new(big.Int)}
	err := v.ForEach(state.PrefixAccount, func(key, _ []byte) error {
		a, err := types.BytesToAddress(key[1:])
		if err != nil {
			return err
		}
		acc, err := state.ReadAccount(v, a)
		if err != nil {
			return err
		}
		s.Balances.Add(s.Balances, acc.Balance)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.Burned, err = state.BigRecord(v, state.RecordBurned); err != nil {
		return nil, err
	}
	if s.Minted, err = state.BigRecord(v, state.RecordMinted); err != nil {
		return nil, err
	}
	if s.Genesis, err = state.BigRecord(v, state.RecordGenesisSupply); err != nil {
		return nil, err
	}
	lhs := new(big.Int).Add(s.Balances, s.Burned)
	rhs := new(big.Int).Add(s.Genesis, s.Minted)
	if lhs.Cmp(rhs) != 0 {
		return s, fmt.Errorf("supply broken at height %d: balances %s + burned %s != genesis %s + minted %s",
			v.Head().Height, s.Balances, s.Burned, s.Genesis, s.Minted)
	}
	return s, nil
}
