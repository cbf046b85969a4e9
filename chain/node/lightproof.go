package node

import (
	"errors"
	"fmt"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
)

// ErrNoAnchor means the node has no certified block to serve a light
// proof against: it runs no consensus (a devnet), or nothing it finalized
// commits to a height it has executed yet.
var ErrNoAnchor = errors.New("node: no certified block commits to an executed height")

// anchorSearch bounds how many finalized records LightAnchor looks back.
const anchorSearch = 256

// LightAnchor returns the most recent finalized block, with its QC, whose
// payload commits to a header this node has executed: what a light client
// checks a state proof against (docs/CONSENSUS.md §8.8).
func (n *Node) LightAnchor() (*consensus.Anchor, error) {
	l := n.flog.Load()
	if l == nil {
		return nil, ErrNoAnchor
	}
	head, err := n.store.Head()
	if err != nil {
		return nil, err
	}
	last, err := l.Last()
	if err != nil {
		return nil, err
	}
	if last == nil {
		return nil, ErrNoAnchor
	}
	for h := last.Block.Height; h > 0 && last.Block.Height-h < anchorSearch; h-- {
		r, err := l.Get(h)
		if err != nil {
			return nil, fmt.Errorf("node: finalized record %d: %w", h, err)
		}
		p, err := decodeCertified(r.Block.Payload)
		if err != nil {
			return nil, err
		}
		if p.Exec.Height <= head.Height {
			return &consensus.Anchor{Block: r.Block, QC: r.QC}, nil
		}
	}
	return nil, ErrNoAnchor
}
