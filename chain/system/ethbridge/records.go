package ethbridge

import (
	"fmt"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Subscription is an actor's paid subscription to one contract event.
type Subscription struct {
	_         struct{}      `cbor:",toarray"`
	Actor     types.Address `json:"actor"`
	ChainID   uint64        `json:"chain_id"`
	Contract  types.Address `json:"contract"`
	Topic     types.Hash    `json:"topic"`
	Handler   string        `json:"handler"`
	Balance   *big.Int      `json:"balance"` // prepaid CBY base units, held by the module
	Delivered uint64        `json:"delivered"`
}

// Attestation is the bridge members' votes on one event or deposit: the
// digest of the content each member attested, in attestation order.
type Attestation struct {
	_     struct{}        `cbor:",toarray"`
	Votes []Vote          `json:"votes"`
	Done  uint64          `json:"done"` // delivery height; 0 while pending
	By    []types.Address `json:"by"`   // the members whose attestations delivered it
}

// Vote is one member's attestation.
type Vote struct {
	_      struct{}      `cbor:",toarray"`
	Member types.Address `json:"member"`
	Digest types.Hash    `json:"digest"`
}

// Wrapped is the wrapped CIP-20 token of an Ethereum asset.
type Wrapped struct {
	_       struct{}      `cbor:",toarray"`
	ChainID uint64        `json:"chain_id"`
	Asset   types.Address `json:"asset"`
	Token   types.Hash    `json:"token"`
}

func key(parts ...[]byte) []byte { return system.Key(types.EthBridgeAddress, parts...) }

// SubscriptionKey is the state key of actor's subscription to topic of
// contract on chain.
func SubscriptionKey(actor types.Address, chain uint64, contract types.Address, topic types.Hash) []byte {
	return key([]byte("s/"), actor[:], system.BE8(chain), contract[:], topic[:])
}

// SubscriptionPrefix prefixes actor's subscriptions.
func SubscriptionPrefix(actor types.Address) []byte { return key([]byte("s/"), actor[:]) }

// EventID identifies an event for actor: the dedupe key
// keccak256("cowboy/ethbridge/event" ‖ actor ‖ chain_be8 ‖ tx hash ‖ log_index_be8).
func EventID(actor types.Address, chain uint64, txHash types.Hash, logIndex uint64) types.Hash {
	return types.Keccak256([]byte("cowboy/ethbridge/event"), actor[:], system.BE8(chain), txHash[:], system.BE8(logIndex))
}

// DepositID identifies a deposit (a lock log on Ethereum).
func DepositID(chain uint64, txHash types.Hash, logIndex uint64) types.Hash {
	return types.Keccak256([]byte("cowboy/ethbridge/deposit"), system.BE8(chain), txHash[:], system.BE8(logIndex))
}

// AttestationKey is the state key of event or deposit id's attestations.
func AttestationKey(id types.Hash) []byte { return key([]byte("a/"), id[:]) }

// WrappedKey is the state key of asset's wrapped token on chain.
func WrappedKey(chain uint64, asset types.Address) []byte {
	return key([]byte("w/"), system.BE8(chain), asset[:])
}

// WrappedByTokenKey maps a wrapped token id back to its asset.
func WrappedByTokenKey(id types.Hash) []byte { return key([]byte("t/"), id[:]) }

// ReadSubscription returns a subscription (nil if absent).
func ReadSubscription(r state.Reader, actor types.Address, chain uint64, contract types.Address, topic types.Hash) (*Subscription, error) {
	return system.Get[Subscription](r, SubscriptionKey(actor, chain, contract, topic), "decode subscription of %s", actor)
}

// Subscriptions lists actor's subscriptions in key order.
func Subscriptions(r state.Reader, actor types.Address) ([]Subscription, error) {
	var out []Subscription
	err := r.Scan(SubscriptionPrefix(actor), func(_, v []byte) error {
		var s Subscription
		if err := codec.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("decode subscription: %w", err)
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// ReadAttestation returns event or deposit id's attestations (nil if none).
func ReadAttestation(r state.Reader, id types.Hash) (*Attestation, error) {
	return system.Get[Attestation](r, AttestationKey(id), "decode attestation %s", id)
}

// ReadWrapped returns asset's wrapped token (nil if none).
func ReadWrapped(r state.Reader, chain uint64, asset types.Address) (*Wrapped, error) {
	return system.Get[Wrapped](r, WrappedKey(chain, asset), "decode wrapped asset %s", asset)
}

// ReadWrappedByToken returns the asset a wrapped token id stands for (nil
// if id is not a wrapped token).
func ReadWrappedByToken(r state.Reader, id types.Hash) (*Wrapped, error) {
	return system.Get[Wrapped](r, WrappedByTokenKey(id), "decode wrapped token %s", id)
}
