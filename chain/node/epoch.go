package node

import (
	"errors"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// What validators and full nodes alike read from their executed state to
// follow consensus.

// epochInForce reads the epoch in force after the executed head: the
// epoch, its validator set, and the transport peers (addresses from the
// bootstrap list, by validator address).
func (n *Node) epochInForce() (*execution.Epoch, *consensus.ValidatorSet, []p2p.Peer, error) {
	var ep *execution.Epoch
	if err := n.store.View(func(sv *store.View) error {
		var err error
		ep, err = execution.ReadEpoch(sv)
		return err
	}); err != nil {
		return nil, nil, nil, err
	}
	if ep == nil {
		return nil, nil, nil, errors.New("node: no validator set in state (the genesis lists no BLS validators)")
	}
	vals := make([]consensus.Validator, len(ep.Members))
	peers := make([]p2p.Peer, len(ep.Members))
	for i, m := range ep.Members {
		vals[i] = consensus.Validator{Address: m.Address, PubKey: m.BLSKey, Stake: m.Weight}
		peers[i] = p2p.Peer{Index: i, Addr: n.cfg.Network.Bootstrap[m.Address], Key: m.BLSKey}
	}
	set, err := consensus.NewValidatorSet(vals, consensus.BLS{})
	if err != nil {
		return nil, nil, nil, err
	}
	return ep, set, peers, nil
}

// epochEndOf is the last height of an epoch that starts at start: the
// first multiple of the epoch length at or after it. Blocks above it are
// empty fillers that only finalize it.
func epochEndOf(start, length uint64) uint64 { return ((start-1)/length + 1) * length }

// genesisHash is the hash of block 0, the consensus root's payload.
func (n *Node) genesisHash() (types.Hash, error) {
	var g0 types.Hash
	err := n.store.View(func(v *store.View) error {
		b, err := v.Block(0)
		if err == nil {
			g0 = b.Hash()
		}
		return err
	})
	return g0, err
}
