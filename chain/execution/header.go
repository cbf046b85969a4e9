package execution

import "github.com/cowboy-foundation/cowboy/chain/types"

// Block assembles the block that commits r, the result of executing env's
// block on top of parent: the header fields execution determines (height,
// parent hash, timestamp and proposer from env; transaction and receipts
// roots, basefees and meters from r), the state root the store computed
// from r.Writes, and the included transactions, encoded. The consensus
// fields of the header (round, VRF output and proof, parent QC) are the
// caller's to fill in. Every producer of a block — the proposer, the
// execute-on-finality path, the tests — assembles it here, so no two
// disagree about a field.
func (r *Result) Block(chainID uint64, parent *types.Header, env BlockEnv, stateRoot types.Hash) *types.Block {
	raw := make([]types.Bytes, len(r.Included))
	for i, tx := range r.Included {
		raw[i] = tx.Encode()
	}
	return &types.Block{Header: types.Header{
		ChainID:      chainID,
		Height:       env.Height,
		ParentHash:   parent.Hash(),
		Timestamp:    env.Timestamp,
		Proposer:     env.Proposer,
		StateRoot:    stateRoot,
		TxRoot:       types.TxRoot(raw),
		ReceiptsRoot: types.ReceiptsRoot(r.Receipts),
		BasefeeCycle: r.Basefees.Cycle,
		BasefeeCell:  r.Basefees.Cell,
		CyclesUsed:   r.CyclesUsed,
		CellsUsed:    r.CellsUsed,
	}, Txs: raw}
}
