package sdk

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// ErrNoValidatorSet: the genesis lists no BLS validators (a devnet has no
// QCs, so there is nothing a light client could verify).
var ErrNoValidatorSet = errors.New("genesis lists no BLS validators (a devnet has no QCs to verify)")

// lightGenesis is the part of a genesis file (chain/genesis) that a light
// client trusts. It is read here rather than through chain/genesis so
// that a client does not link the node's execution packages.
type lightGenesis struct {
	ChainID    uint64 `json:"chain_id"`
	Validators []struct {
		Address types.Address `json:"address"`
		Stake   uint64        `json:"stake"`
		BLSKey  types.Bytes   `json:"bls_key"`
	} `json:"validators"`
	Consensus struct {
		EpochLength uint64 `json:"epoch_length"`
	} `json:"consensus"`
}

// LightConfigFromGenesis reads a network's genesis file (its JSON) into the
// trusted configuration of a LightClient: chain id, epoch length and the
// genesis validator set.
func LightConfigFromGenesis(data []byte) (LightConfig, error) {
	var g lightGenesis
	if err := json.Unmarshal(data, &g); err != nil {
		return LightConfig{}, fmt.Errorf("genesis: %w", err)
	}
	if g.ChainID == 0 {
		return LightConfig{}, errors.New("genesis: no chain_id")
	}
	if len(g.Validators) == 0 || len(g.Validators[0].BLSKey) == 0 {
		return LightConfig{}, ErrNoValidatorSet
	}
	vals := make([]consensus.Validator, len(g.Validators))
	for i, v := range g.Validators {
		if len(v.BLSKey) == 0 || v.Stake == 0 {
			return LightConfig{}, fmt.Errorf("genesis: validator %s has no BLS key or stake", v.Address)
		}
		vals[i] = consensus.Validator{Address: v.Address, PubKey: v.BLSKey, Stake: v.Stake}
	}
	return LightConfig{ChainID: g.ChainID, EpochLength: g.Consensus.EpochLength, Validators: vals}, nil
}
