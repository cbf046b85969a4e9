package apitypes

import (
	"github.com/cowboy-foundation/cowboy/chain/state/smt"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// LightProof is GET /v1/light/proofs/{key}: a state key's value and Merkle
// proof against the state root of Header, and Anchor, a certified
// consensus block whose payload commits to Header (docs/CONSENSUS.md
// §8.8). Header is the canonical CBOR of a types.Header, Anchor that of a
// consensus.Anchor (the block with its payload and its QC). Value is null
// when the proof shows absence.
type LightProof struct {
	Key    types.Bytes  `json:"key"`
	Height uint64       `json:"height"`
	Value  *types.Bytes `json:"value"`
	Proof  *smt.Proof   `json:"proof"`
	Header types.Bytes  `json:"header"`
	Anchor types.Bytes  `json:"anchor"`
}

// LightHandoff is one entry of GET /v1/light/handoffs: the hand-off from
// epoch Epoch to the next. Anchor (canonical CBOR of a consensus.Anchor) is
// a block certified by epoch Epoch's set committing to Header (canonical
// CBOR), the epoch's last block; Value is the epoch record (the next
// epoch's set) with its Merkle proof against Header's state root.
type LightHandoff struct {
	Epoch  uint64      `json:"epoch"`
	Header types.Bytes `json:"header"`
	Anchor types.Bytes `json:"anchor"`
	Key    types.Bytes `json:"key"`
	Value  types.Bytes `json:"value"`
	Proof  *smt.Proof  `json:"proof"`
}

// LightHandoffs is GET /v1/light/handoffs?from=K: consecutive hand-offs
// from epoch K on, as many as the node holds (up to a page).
type LightHandoffs struct {
	Handoffs []LightHandoff `json:"handoffs"`
}
