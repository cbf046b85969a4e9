package sdk

import (
	"context"
	"math/big"
	"net/http"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// BridgeService is the client's service for the Ethereum bridge hooks
// (spec 002 §16.2–§16.4; chain/system/ethbridge, docs/ETHEREUM.md): actors'
// event subscriptions; signed subscribe, attest, wrap and burn
// instructions sent to types.EthBridgeAddress. A failure's receipt carries
// the module's code (NotBridgeMember, BridgeNotEntitled,
// SubscriptionUnpaid, … through ReceiptErr and apitypes' code_name).
type BridgeService struct{ c *Client }

// Bridge returns the service for the Ethereum bridge hooks.
func (c *Client) Bridge() *BridgeService { return &BridgeService{c: c} }

// AccountBridge is the Bridge service bound to an account: its transaction
// methods sign with the account's key and submit as Account describes;
// its reads are those of BridgeService.
type AccountBridge struct {
	*BridgeService
	a *Account
}

// Bridge returns the Bridge service bound to a.
func (a *Account) Bridge() *AccountBridge { return &AccountBridge{BridgeService: a.c.Bridge(), a: a} }

// Send builds, signs and submits a bridge instruction (types.Bridge*).
// value is the payment of a bridge_subscribe (nil otherwise). A
// bridge_event may run the subscriber's handler, so the limits default to
// an actor call's.
func (s *AccountBridge) Send(ctx context.Context, in types.Instruction, value *big.Int, o TxOptions) (*types.Tx, error) {
	to := types.EthBridgeAddress
	return s.a.Actors().Send(ctx, &to, in, value, o)
}

// Subscribe pays value CBY base units into actor's subscription to the
// event topic of contract on Ethereum chain chainID, delivered to handler
// ("" for on_eth_event).
func (s *AccountBridge) Subscribe(ctx context.Context, actor types.Address, chainID uint64, contract types.Address, topic types.Hash, handler string, value *big.Int, o TxOptions) (*types.Tx, error) {
	return s.Send(ctx, &types.BridgeSubscribe{Actor: actor, ChainID: chainID, Contract: contract, Topic: topic, Handler: handler}, value, o)
}

// Subscriptions lists actor's Ethereum event subscriptions (GET
// /v1/bridge/subscriptions/{actor}).
func (s *BridgeService) Subscriptions(ctx context.Context, actor types.Address) ([]apitypes.BridgeSubscription, error) {
	var out []apitypes.BridgeSubscription
	return out, s.c.do(ctx, http.MethodGet, "/v1/bridge/subscriptions/"+actor.String(), nil, &out)
}
