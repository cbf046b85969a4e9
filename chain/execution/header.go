package execution

import (
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

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
	blk, _ := r.BlockEncoded(chainID, parent, env, stateRoot)
	return blk
}

// BlockEncoded is Block, also returning each receipt's canonical encoding
// (what the store keeps): the receipts root is hashed from those bytes, so
// a caller that stores them (store.CommitEncoded) encodes every receipt
// once.
func (r *Result) BlockEncoded(chainID uint64, parent *types.Header, env BlockEnv, stateRoot types.Hash) (*types.Block, [][]byte) {
	raw := make([]types.Bytes, len(r.Included))
	txHashes := make([]types.Hash, len(r.Included))
	for i, tx := range r.Included {
		raw[i] = tx.Encode()
		txHashes[i] = tx.Hash() // keccak256 of the encoding: types.TxRoot's leaf
	}
	encoded := make([][]byte, len(r.Receipts))
	rHashes := make([]types.Hash, len(r.Receipts))
	for i, rc := range r.Receipts {
		encoded[i] = codec.MustMarshal(rc)
		rHashes[i] = receiptHash(rc, encoded[i])
	}
	return &types.Block{Header: types.Header{
		ChainID:      chainID,
		Height:       env.Height,
		ParentHash:   parent.Hash(),
		Timestamp:    env.Timestamp,
		Proposer:     env.Proposer,
		StateRoot:    stateRoot,
		TxRoot:       types.MerkleRoot(txHashes),
		ReceiptsRoot: types.MerkleRoot(rHashes),
		BasefeeCycle: r.Basefees.Cycle,
		BasefeeCell:  r.Basefees.Cell,
		CyclesUsed:   r.CyclesUsed,
		CellsUsed:    r.CellsUsed,
	}, Txs: raw}, encoded
}

// receiptHash is rc.Hash() given rc's canonical encoding enc: the hash
// leaves out the error texts, so when there are none it is the hash of
// enc itself and the receipt need not be encoded a second time.
func receiptHash(rc *types.Receipt, enc []byte) types.Hash {
	if rc.Error != "" {
		return rc.Hash()
	}
	for i := range rc.Messages {
		if rc.Messages[i].Error != "" {
			return rc.Hash()
		}
	}
	return types.Keccak256(enc)
}
