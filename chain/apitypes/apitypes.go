// Package apitypes defines the JSON documents of the node's HTTP API
// (docs/API.md). The server (chain/api) and the Go SDK (sdk) share them so
// the two can never drift apart. Amounts are decimal strings of base units
// (10^-18 CBY); byte strings are 0x-hex.
package apitypes

import (
	"encoding/json"

	"github.com/cowboy-foundation/cowboy/chain/state/smt"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Error is the body of every non-2xx response.
type Error struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody carries a stable machine-readable code and a human message.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Generic error codes (transaction validation codes come from chain/types
// and chain/mempool).
const (
	CodeNotFound      = "not_found"
	CodeRouteNotFound = "route_not_found"
	CodeBadRequest    = "bad_request"
	CodeBadJSON       = "bad_json"
	CodeInternal      = "internal"
	CodeBadCursor     = "bad_cursor"
	// CodePruned (HTTP 410) is a state read at a height whose state the
	// node has pruned (cowboyd --prune-keep; --archive keeps all).
	CodePruned = "state_pruned"
)

// Status is GET /v1/status.
type Status struct {
	ChainID         uint64     `json:"chain_id"`
	Height          uint64     `json:"height"`
	HeadHash        types.Hash `json:"head_hash"`
	FinalizedHeight uint64     `json:"finalized_height"`
	// CommittedHeight is the highest block with a quorum certificate (it
	// can still be abandoned); FinalizedHeight is irreversible and Height
	// (the executed head) follows it. On a devnet all three are equal.
	CommittedHeight uint64     `json:"committed_height"`
	Consensus       *Consensus `json:"consensus,omitempty"` // nil on a devnet
	TimestampMs     uint64     `json:"timestamp_ms"`
	BasefeeCycle    uint64     `json:"basefee_cycle"` // charged by the next block
	BasefeeCell     uint64     `json:"basefee_cell"`
	PendingTxs      int        `json:"pending_txs"`
	Faucet          bool       `json:"faucet"`
	GenesisSupply   string     `json:"genesis_supply"`
	Burned          string     `json:"burned"`
	Minted          string     `json:"minted"`
	Version         string     `json:"version"`
}

// Consensus is the consensus part of GET /v1/status on a network node.
type Consensus struct {
	Validator  types.Address `json:"validator"` // this node's validator address
	Index      int           `json:"index"`
	Validators int           `json:"validators"`
	Round      uint64        `json:"round"`
	Peers      int           `json:"peers"`     // validators heard from in the last 5 s
	Epoch      uint64        `json:"epoch"`     // the validator set's epoch
	EpochEnd   uint64        `json:"epoch_end"` // its last height; the set may change after it
	Role       string        `json:"role"`      // "validator", or "full" for a full node (no vote, index -1)
}

// Account is GET /v1/accounts/{address}.
type Account struct {
	Address      types.Address `json:"address"`
	Balance      string        `json:"balance"`
	Nonce        uint64        `json:"nonce"`
	PendingNonce uint64        `json:"pending_nonce"` // next nonce to use, counting the mempool
	CodeHash     *types.Hash   `json:"code_hash"`
	Height       uint64        `json:"height"`
}

// SubmitTx is the body of POST /v1/txs.
type SubmitTx struct {
	Tx string `json:"tx"` // canonical CBOR, hex (0x optional)
}

// SubmitTxResult is the response of POST /v1/txs and POST /v1/faucet.
type SubmitTxResult struct {
	Hash types.Hash `json:"hash"`
}

// Faucet is the body of POST /v1/faucet.
type Faucet struct {
	Address types.Address `json:"address"`
	Value   string        `json:"value"` // base units
}

// Tx is a transaction as JSON.
type Tx struct {
	Hash           types.Hash          `json:"hash"`
	From           types.Address       `json:"from"`
	ChainID        uint64              `json:"chain_id"`
	Nonce          uint64              `json:"nonce"`
	To             *types.Address      `json:"to"`
	Value          string              `json:"value"`
	CyclesLimit    uint64              `json:"cycles_limit"`
	CellsLimit     uint64              `json:"cells_limit"`
	MaxFeePerCycle uint64              `json:"max_fee_per_cycle"`
	MaxFeePerCell  uint64              `json:"max_fee_per_cell"`
	TipPerCycle    uint64              `json:"tip_per_cycle"`
	TipPerCell     uint64              `json:"tip_per_cell"`
	AccessList     []types.AccessTuple `json:"access_list"`
	Payload        types.Bytes         `json:"payload"`
	Raw            types.Bytes         `json:"raw"`
}

// Event is one event in a receipt or an event query.
type Event struct {
	Emitter types.Address   `json:"emitter"`
	Topic   string          `json:"topic"`
	Data    types.Bytes     `json:"data"`     // canonical CBOR
	Decoded json.RawMessage `json:"decoded"`  // the data as JSON, when it converts
	Height  uint64          `json:"height"`   // set in event queries and streams
	TxHash  *types.Hash     `json:"tx_hash"`  // set in event queries and streams
	TxIndex uint32          `json:"tx_index"` // position of the transaction in the block
	Index   uint32          `json:"index"`    // position of the event in the receipt
	Cursor  string          `json:"cursor,omitempty"`
}

// Receipt is a receipt as JSON.
type Receipt struct {
	TxHash     types.Hash            `json:"tx_hash"`
	Kind       string                `json:"kind,omitempty"` // ReceiptKindTx | ReceiptKindTimer
	Status     string                `json:"status"`         // "success" | "failed"
	CyclesUsed uint64                `json:"cycles_used"`
	CellsUsed  uint64                `json:"cells_used"`
	FeePaid    string                `json:"fee_paid"`
	Burned     string                `json:"burned"`
	Tip        string                `json:"tip"`
	Events     []Event               `json:"events"`
	Error      string                `json:"error,omitempty"` // human-readable; not consensus data
	Code       uint32                `json:"code,omitempty"`  // the failure's stable code (chain/system), what the receipts root commits to
	CodeName   string                `json:"code_name,omitempty"`
	Created    *types.Address        `json:"created,omitempty"`
	Return     types.Bytes           `json:"return"`
	Decoded    json.RawMessage       `json:"decoded"` // the return value as JSON, when it converts
	Messages   []types.MessageRecord `json:"messages"`
	// FailedMessage is the index in Messages of the message whose failure
	// the receipt reports (types.Receipt.FailedMessage); absent when none.
	FailedMessage *uint64 `json:"failed_message,omitempty"`
}

// TxStatus values.
const (
	TxPending  = "pending"
	TxIncluded = "included"
)

// TxResult is GET /v1/txs/{hash}.
type TxResult struct {
	Status string `json:"status"` // pending | included
	// Kind is ReceiptKindTx, or ReceiptKindTimer for a timer receipt,
	// which has no tx.
	Kind        string      `json:"kind,omitempty"`
	Tx          Tx          `json:"tx,omitzero"`
	BlockHeight *uint64     `json:"block_height,omitempty"`
	BlockHash   *types.Hash `json:"block_hash,omitempty"`
	Index       *uint32     `json:"index,omitempty"`
	Receipt     *Receipt    `json:"receipt,omitempty"`
}

// Block is GET /v1/blocks/{id}.
type Block struct {
	Hash     types.Hash   `json:"hash"`
	Header   types.Header `json:"header"`
	TxHashes []types.Hash `json:"tx_hashes"`
	// TimerReceipts are the hashes of the receipts past the transactions
	// (kind "timer"), in order.
	TimerReceipts []types.Hash `json:"timer_receipts,omitempty"`
	Receipts      []Receipt    `json:"receipts,omitempty"` // with ?receipts=true, and in the stream
}

// Events is GET /v1/events.
type Events struct {
	Events     []Event `json:"events"`
	NextCursor string  `json:"next_cursor,omitempty"`
}

// Proof is GET /v1/proofs/{key}: the value of a state key at a height with a
// Merkle proof against that height's state root. Value is null when the
// proof shows absence.
type Proof struct {
	Key       types.Bytes  `json:"key"`
	Height    uint64       `json:"height"`
	StateRoot types.Hash   `json:"state_root"`
	Value     *types.Bytes `json:"value"`
	Proof     *smt.Proof   `json:"proof"`
}

// Fees is GET /v1/fees: current basefees and a suggestion for a transfer.
type Fees struct {
	BasefeeCycle uint64 `json:"basefee_cycle"`
	BasefeeCell  uint64 `json:"basefee_cell"`
	MaxTxCycles  uint64 `json:"max_tx_cycles"`
	MaxTxCells   uint64 `json:"max_tx_cells"`
}

// Actor is GET /v1/actors/{address}.
type Actor struct {
	Address      types.Address         `json:"address"`
	CodeHash     types.Hash            `json:"code_hash"`
	CodeSize     int                   `json:"code_size"`
	Owner        *types.Address        `json:"owner"`
	Balance      string                `json:"balance"`
	Pins         map[string]types.Hash `json:"pins"` // import name → pinned library code hash
	StorageBytes uint64                `json:"storage_bytes"`
	// Requires is the actor's deployment manifest (spec 002 §15): the
	// entitlements its privileged host calls may use; empty = none.
	Requires []ActorRequirement `json:"requires"`
	Height   uint64             `json:"height"`
}

// ActorRequirement is one manifest entry: entitlement timers, jobs (params:
// job types) or http (params: domains), and the §7.1 action it names.
type ActorRequirement struct {
	Entitlement string   `json:"entitlement"`
	Params      []string `json:"params,omitempty"`
	Inheritable bool     `json:"inheritable"`
	Action      string   `json:"action"`
}

// StateEntry is one actor storage slot.
type StateEntry struct {
	Key     types.Bytes     `json:"key"`
	KeyText string          `json:"key_text,omitempty"` // the key as UTF-8, when it is
	Value   types.Bytes     `json:"value"`
	Decoded json.RawMessage `json:"decoded,omitempty"` // the value as JSON, when it is CBOR that converts
}

// ActorState is GET /v1/actors/{address}/state.
type ActorState struct {
	Entries    []StateEntry `json:"entries"`
	NextCursor string       `json:"next_cursor,omitempty"`
	Height     uint64       `json:"height"`
}

// Query is the body of POST /v1/actors/{address}/query.
type Query struct {
	Handler string        `json:"handler"`
	Args    types.Bytes   `json:"args"`   // canonical CBOR (array: positional, map: keyword arguments); empty: none
	Caller  types.Address `json:"caller"` // optional
}

// QueryResult is the answer of a query.
type QueryResult struct {
	Return     types.Bytes     `json:"return"`
	Decoded    json.RawMessage `json:"decoded"`
	CyclesUsed uint64          `json:"cycles_used"`
	Height     uint64          `json:"height"`
}

// Library is one published library.
type Library struct {
	Publisher   types.Address `json:"publisher"`
	Name        string        `json:"name"`
	CodeHash    types.Hash    `json:"code_hash"`
	CodeSize    uint64        `json:"code_size"`
	PublishedAt uint64        `json:"published_at"`
}

// Relay is one Relay Registry record, with health computed at Height.
type Relay struct {
	ID            types.Address `json:"id"`
	Addr          string        `json:"addr"`
	PubKey        types.Bytes   `json:"pubkey"`
	Capacity      uint64        `json:"capacity"`
	Used          uint64        `json:"used"`
	Stake         string        `json:"stake"`
	RegisteredAt  uint64        `json:"registered_at"`
	LastHeartbeat uint64        `json:"last_heartbeat"`
	Status        string        `json:"status"`  // active | unbonding | exited
	Healthy       bool          `json:"healthy"` // heartbeating and not flagged by a failed challenge
	Height        uint64        `json:"height"`
	// HeartbeatTimeout is the registry's liveness window in blocks: a
	// relay not heard from for longer is unhealthy. Relays pace their
	// heartbeats by it (at fast block times it is short).
	HeartbeatTimeout uint64 `json:"heartbeat_timeout,omitempty"`
	// Challenges is the relay's availability-challenge record.
	Challenges *RelayChallengeStats `json:"challenges,omitempty"`
}

// Volume is a Storage Manager record: the latest StorageCommitment.
type Volume struct {
	ID        types.Hash    `json:"id"`
	Owner     types.Address `json:"owner"`
	K         uint64        `json:"k"`
	M         uint64        `json:"m"`
	Root      types.Hash    `json:"root"`
	Version   uint64        `json:"version"`
	Size      uint64        `json:"size"`
	CreatedAt uint64        `json:"created_at"`
	UpdatedAt uint64        `json:"updated_at"`
	// Rent is the volume's escrow and billing state; Placement the
	// per-relay summary of the latest commitment that carried one, with
	// each relay's latest challenge.
	Rent      *VolumeRent       `json:"rent,omitempty"`
	Placement []VolumePlacement `json:"placement,omitempty"`
}

// Revocation answers whether a capability token is revoked.
type Revocation struct {
	Volume  types.Hash `json:"volume"`
	TokenID types.Hash `json:"token_id"`
	Revoked bool       `json:"revoked"`
	Height  uint64     `json:"height"` // when it was revoked
}

// MovedShard is a shard that a relay rebuilt and moved off an unhealthy
// relay (repair_placement): readers find it at Holder.
type MovedShard struct {
	Shard    types.Hash    `json:"shard"`
	Origin   types.Address `json:"origin"` // the relay the owner's placement named
	Holder   types.Address `json:"holder"`
	Hash     types.Hash    `json:"hash"`
	Size     uint64        `json:"size"`
	Height   uint64        `json:"height"`
	Repairer types.Address `json:"repairer"`
}

// MovedShards lists a volume's moved shards, by shard id.
type MovedShards struct {
	Volume types.Hash   `json:"volume"`
	Shards []MovedShard `json:"shards"`
}
