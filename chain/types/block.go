package types

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
)

// Header is a block header. Its canonical CBOR array is hashed to give the
// block hash.
type Header struct {
	_            struct{} `cbor:",toarray"`
	ChainID      uint64   `json:"chain_id"`
	Height       uint64   `json:"height"`
	ParentHash   Hash     `json:"parent_hash"`
	Timestamp    uint64   `json:"timestamp_ms"` // proposer's clock, milliseconds since the Unix epoch
	Proposer     Address  `json:"proposer"`
	StateRoot    Hash     `json:"state_root"`
	TxRoot       Hash     `json:"tx_root"`
	ReceiptsRoot Hash     `json:"receipts_root"`
	BasefeeCycle uint64   `json:"basefee_cycle"` // price every transaction in this block paid per cycle
	BasefeeCell  uint64   `json:"basefee_cell"`
	CyclesUsed   uint64   `json:"cycles_used"`
	CellsUsed    uint64   `json:"cells_used"`
	// Consensus fields (docs/CONSENSUS.md §8.1), zero on a --dev chain and
	// at genesis. Round is the consensus round the block was proposed in;
	// VRFOutput is the randomness beacon value R_n, VRFProof the proposer's
	// BLS signature proving it; ParentQC is the canonical encoding of the
	// quorum certificate of the parent's consensus block.
	Round     uint64 `json:"round"`
	VRFOutput Hash   `json:"vrf_output"`
	VRFProof  Bytes  `json:"vrf_proof"`
	ParentQC  Bytes  `json:"parent_qc"`
}

// Hash is keccak256 of the header's canonical encoding.
func (h *Header) Hash() Hash { return Keccak256(codec.MustMarshal(h)) }

// Block is a header and its transactions in canonical encoding.
type Block struct {
	_      struct{} `cbor:",toarray"`
	Header Header
	Txs    []Bytes
}

// Hash is the header hash.
func (b *Block) Hash() Hash { return b.Header.Hash() }

// Encode returns the canonical encoding of the block.
func (b *Block) Encode() []byte { return codec.MustMarshal(b) }

// DecodeBlock decodes a canonical block encoding.
func DecodeBlock(data []byte) (*Block, error) {
	var b Block
	if err := codec.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("decode block: %w", err)
	}
	return &b, nil
}

// Event is a log entry emitted by an actor or by the protocol.
type Event struct {
	_       struct{} `cbor:",toarray"`
	Emitter Address  `json:"emitter"`
	Topic   string   `json:"topic"`
	Data    Bytes    `json:"data"` // canonical CBOR
}

// Receipt statuses.
const (
	ReceiptFailed  uint8 = 0
	ReceiptSuccess uint8 = 1
)

// Receipt records what a transaction did. A failed transaction still pays
// for what it used; its state changes are reverted except the fee and nonce.
type Receipt struct {
	_          struct{}        `cbor:",toarray"`
	TxHash     Hash            `json:"tx_hash"`
	Status     uint8           `json:"status"`
	CyclesUsed uint64          `json:"cycles_used"`
	CellsUsed  uint64          `json:"cells_used"`
	FeePaid    *big.Int        `json:"fee_paid"`
	Burned     *big.Int        `json:"burned"`
	Tip        *big.Int        `json:"tip"`
	Events     []Event         `json:"events"`
	Error      string          `json:"error"`
	Created    *Address        `json:"created"` // actor address for a successful deploy
	Return     Bytes           `json:"return"`
	Messages   []MessageRecord `json:"messages"` // actor-to-actor messages this transaction sent, in delivery order
	// Code is the failure's stable numeric code (chain/system codes; 0 on
	// success). The receipts root commits to it; Error, the text beside
	// it, is left out of the hash.
	Code uint32 `json:"code,omitempty"`
	// FailedMessage is the index in Messages of the message whose failure
	// the receipt reports: for a failed receipt, the message whose delivery
	// failed the transaction, if one did; otherwise the first message, in
	// delivery order, whose own handler failed. Nil when no message failed
	// on its own (reverted and undelivered messages do not count). The
	// receipts root commits to it.
	FailedMessage *uint64 `json:"failed_message,omitempty"`
}

// MessageRecord is one actor-to-actor message in a receipt's message tree.
// Parent is the index of the message whose handler sent it, or -1 when the
// transaction's own call or deploy sent it.
type MessageRecord struct {
	_       struct{} `cbor:",toarray"`
	ID      Hash     `json:"id"`
	From    Address  `json:"from"`
	To      Address  `json:"to"`
	Handler string   `json:"handler"`
	Value   *big.Int `json:"value"`
	Depth   uint64   `json:"depth"`
	Parent  int64    `json:"parent"`
	Status  uint8    `json:"status"` // ReceiptSuccess or ReceiptFailed
	Error   string   `json:"error"`  // human-readable; not part of the receipt hash
	Code    uint32   `json:"code,omitempty"`
}

// Hash is keccak256 of the canonical encoding of the receipt with its
// error texts (the receipt's and its messages') blanked: consensus covers
// the numeric codes, so rewording a message, or a library's error text
// changing, cannot fork the chain.
func (r *Receipt) Hash() Hash {
	c := *r
	c.Error = ""
	if len(r.Messages) > 0 {
		c.Messages = make([]MessageRecord, len(r.Messages))
		for i, m := range r.Messages {
			m.Error = ""
			c.Messages[i] = m
		}
	}
	return Keccak256(codec.MustMarshal(&c))
}

// MerkleRoot is a binary Merkle root over leaves with domain separation
// (leaf = keccak(0x00||h), node = keccak(0x01||l||r)); an odd node is carried
// up unchanged. The root of no leaves is the zero hash.
func MerkleRoot(leaves []Hash) Hash {
	if len(leaves) == 0 {
		return Hash{}
	}
	level := make([]Hash, len(leaves))
	for i, l := range leaves {
		level[i] = Keccak256([]byte{0x00}, l[:])
	}
	for len(level) > 1 {
		next := level[:0:0]
		for i := 0; i < len(level); i += 2 {
			if i+1 == len(level) {
				next = append(next, level[i])
				continue
			}
			next = append(next, Keccak256([]byte{0x01}, level[i][:], level[i+1][:]))
		}
		level = next
	}
	return level[0]
}

// TxRoot is the Merkle root over the hashes of encoded transactions.
func TxRoot(txs []Bytes) Hash {
	hs := make([]Hash, len(txs))
	for i, t := range txs {
		hs[i] = Keccak256(t)
	}
	return MerkleRoot(hs)
}

// ReceiptsRoot is the Merkle root over receipt hashes.
func ReceiptsRoot(rs []*Receipt) Hash {
	hs := make([]Hash, len(rs))
	for i, r := range rs {
		hs[i] = r.Hash()
	}
	return MerkleRoot(hs)
}
