package sdk

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Ethereum bridge hooks (spec 002 §16.2–§16.4; chain/system/ethbridge,
// docs/ETHEREUM.md): instructions sent to types.EthBridgeAddress. A
// failure's receipt carries the module's code (NotBridgeMember,
// BridgeNotEntitled, SubscriptionUnpaid, … through ReceiptErr and
// apitypes' code_name).

// SendBridge builds, signs and submits a bridge instruction
// (types.Bridge*). value is the payment of a bridge_subscribe (nil
// otherwise). A bridge_event may run the subscriber's handler, so the
// limits default to an actor call's.
func (c *Client) SendBridge(ctx context.Context, key *ecdsa.PrivateKey, in types.Instruction, value *big.Int, o TxOptions) (*types.Tx, error) {
	to := types.EthBridgeAddress
	return c.SendInstruction(ctx, key, &to, in, value, o)
}

// BridgeSubscribe pays value CBY base units into actor's subscription to
// the event topic of contract on Ethereum chain chainID, delivered to
// handler ("" for on_eth_event).
func (c *Client) BridgeSubscribe(ctx context.Context, key *ecdsa.PrivateKey, actor types.Address, chainID uint64, contract types.Address, topic types.Hash, handler string, value *big.Int, o TxOptions) (*types.Tx, error) {
	return c.SendBridge(ctx, key, &types.BridgeSubscribe{Actor: actor, ChainID: chainID, Contract: contract, Topic: topic, Handler: handler}, value, o)
}

// BridgeSubscriptions lists actor's Ethereum event subscriptions (GET
// /v1/bridge/subscriptions/{actor}).
func (c *Client) BridgeSubscriptions(ctx context.Context, actor types.Address) ([]apitypes.BridgeSubscription, error) {
	var out []apitypes.BridgeSubscription
	return out, c.do(ctx, http.MethodGet, "/v1/bridge/subscriptions/"+actor.String(), nil, &out)
}
