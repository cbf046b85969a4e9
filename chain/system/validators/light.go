package validators

import (
	"bytes"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
)

// EpochKey is the state key of the epoch record (Epoch): a light client
// proves the next validator set against the last header of an epoch with
// it (docs/CONSENSUS.md §8.8).
func EpochKey() []byte { return bytes.Clone(epochKey) }

// ConsensusSet is the epoch's validator set as consensus orders it: the
// members in registry order, weight = stake in whole CBY.
func (e *Epoch) ConsensusSet() []consensus.Validator {
	vals := make([]consensus.Validator, len(e.Members))
	for i, m := range e.Members {
		vals[i] = consensus.Validator{Address: m.Address, PubKey: m.BLSKey, Stake: m.Weight}
	}
	return vals
}
