package ethbridge

import (
	"errors"
	"math/big"

	"github.com/cowboy-foundation/cowboy/chain/actors"
	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/tokens"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// entitled fails with BridgeNotEntitled unless actor's manifest declares
// the contract's event on chain.
func entitled(x system.Tx, op string, actor types.Address, chain uint64, contract types.Address, topic types.Hash) error {
	man, err := actors.ReadActorRequires(x.State(), actor)
	if err != nil {
		return err
	}
	if err := man.CheckEth(op, chain, contract, topic); err != nil {
		var miss *entitlement.MissingError
		if errors.As(err, &miss) {
			return system.Failf(system.CodeBridgeNotEntitled, "BridgeNotEntitled: %v", err)
		}
		return err
	}
	return nil
}

func validHandler(h string) bool {
	if h == "" || len(h) > MaxHandlerBytes || h[0] == '_' {
		return false
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// subscribe creates or tops up actor's subscription with the transaction's value.
func (m *Module) subscribe(x system.Tx, from types.Address, in *types.BridgeSubscribe) error {
	paid := x.Transaction().Value()
	if paid.Sign() <= 0 {
		return system.Failf(system.CodeSubscriptionUnpaid, "SubscriptionUnpaid: a subscription is paid for in CBY: send value with bridge_subscribe")
	}
	handler := in.Handler
	if handler == "" {
		handler = DefaultHandler
	}
	if !validHandler(handler) {
		return system.Failf(system.CodeBadBridgeEvent, "BadBridgeEvent: handler %q is not a public method name", in.Handler)
	}
	owner, err := actors.ReadActorOwner(x.State(), in.Actor)
	if err != nil {
		return err
	}
	if owner == nil {
		return system.Failf(system.CodeBadBridgeEvent, "BadBridgeEvent: %s is not an actor", in.Actor)
	}
	if err := entitled(x, "subscribe_event", in.Actor, in.ChainID, in.Contract, in.Topic); err != nil {
		return err
	}
	s, err := ReadSubscription(x.State(), in.Actor, in.ChainID, in.Contract, in.Topic)
	if err != nil {
		return err
	}
	if s == nil {
		s = &Subscription{Actor: in.Actor, ChainID: in.ChainID, Contract: in.Contract, Topic: in.Topic, Balance: new(big.Int)}
	}
	s.Handler = handler
	if err := x.MoveValue(from, types.EthBridgeAddress, paid); err != nil {
		return err
	}
	s.Balance = new(big.Int).Add(s.Balance, paid)
	x.State().Set(SubscriptionKey(in.Actor, in.ChainID, in.Contract, in.Topic), codec.MustMarshal(s))
	x.Emit(types.EthBridgeAddress, &SubscribedEvent{Actor: in.Actor, ChainID: in.ChainID, Contract: in.Contract, Event: in.Topic,
		Handler: handler, Paid: new(big.Int).Set(paid), Balance: new(big.Int).Set(s.Balance)})
	return nil
}

// Payload is the argument an actor's handler receives: one map with the
// log's fields (cowboy_sdk: on_eth_event(self, event)).
func Payload(in *types.BridgeEvent) []byte {
	topics := make([][]byte, len(in.Topics))
	for i, t := range in.Topics {
		topics[i] = append([]byte(nil), t[:]...)
	}
	data := in.Data
	if data == nil {
		data = []byte{}
	}
	return codec.MustMarshal([]any{map[string]any{
		"chain_id": in.ChainID, "contract": in.Contract[:], "block_number": in.BlockNumber,
		"tx_hash": in.TxHash[:], "log_index": in.LogIndex, "topics": topics, "data": data,
	}})
}

// event records a member's attestation of an Ethereum log and, at the
// threshold, delivers it to the subscriber's handler.
func (m *Module) event(x system.Tx, from types.Address, in *types.BridgeEvent) ([]byte, error) {
	if err := m.member(from); err != nil {
		return nil, err
	}
	if len(in.Topics) == 0 || len(in.Topics) > MaxTopics || len(in.Data) > MaxDataBytes {
		return nil, system.Failf(system.CodeBadBridgeEvent, "BadBridgeEvent: %d topics (want 1..%d), %d data bytes (limit %d)", len(in.Topics), MaxTopics, len(in.Data), MaxDataBytes)
	}
	if err := entitled(x, "bridge_event", in.Actor, in.ChainID, in.Contract, in.Topics[0]); err != nil {
		return nil, err
	}
	s, err := ReadSubscription(x.State(), in.Actor, in.ChainID, in.Contract, in.Topics[0])
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, system.Failf(system.CodeNoSubscription, "NoSubscription: %s has no subscription to %s", in.Actor,
			entitlement.EthEvent(in.ChainID, in.Contract, (*[32]byte)(&in.Topics[0])))
	}
	fee, err := m.eventFee(x.State())
	if err != nil {
		return nil, err
	}
	if s.Balance.Cmp(fee) < 0 {
		return nil, system.Failf(system.CodeSubscriptionUnpaid, "SubscriptionUnpaid: the subscription's balance %s does not cover the event fee %s", s.Balance, fee)
	}
	id := EventID(in.Actor, in.ChainID, in.TxHash, in.LogIndex)
	payload := Payload(in)
	by, _, err := m.attest(x, id, from, types.Keccak256(codec.MustMarshal(in)))
	if err != nil || by == nil {
		return nil, err
	}
	s.Balance = new(big.Int).Sub(s.Balance, fee)
	s.Delivered++
	x.State().Set(SubscriptionKey(s.Actor, s.ChainID, s.Contract, s.Topic), codec.MustMarshal(s))
	if err := pay(x, fee, by); err != nil {
		return nil, err
	}
	ok, code, err := deliver(x, s.Actor, s.Handler, payload)
	if err != nil {
		return nil, err
	}
	x.Emit(types.EthBridgeAddress, &EventDeliveredEvent{ID: id, Actor: s.Actor, ChainID: in.ChainID, Contract: in.Contract,
		BlockNumber: in.BlockNumber, TxHash: in.TxHash, LogIndex: in.LogIndex, Fee: fee, OK: ok, Code: code})
	return codec.MustMarshal(id[:]), nil
}

// invoker is what delivery needs of the transaction context: the actor
// host's Exec (the executor hands modules one).
type invoker interface {
	Invoke(actor, caller types.Address, value *big.Int, handler string, payload []byte) ([]byte, error)
	Mark() actors.Mark
	Rollback(actors.Mark)
}

// deliver runs actor.handler(payload) as a message from the module. A
// failing handler reverts only itself: ok false with its code.
func deliver(x system.Tx, actor types.Address, handler string, payload []byte) (bool, uint32, error) {
	inv, isInv := x.(invoker)
	if !isInv {
		return false, uint32(system.CodeUnsupported), nil
	}
	mark := inv.Mark()
	if _, err := inv.Invoke(actor, types.EthBridgeAddress, new(big.Int), handler, payload); err != nil {
		if !actors.IsFailure(err) && !errors.Is(err, types.ErrInsufficientBalance) {
			return false, 0, err
		}
		inv.Rollback(mark)
		return false, uint32(system.CodeOf(err)), nil
	}
	return true, 0, nil
}

// wrap creates asset's wrapped token, administered by the module.
func (m *Module) wrap(x system.Tx, from types.Address, in *types.BridgeWrap) (types.Hash, error) {
	if err := m.member(from); err != nil {
		return types.Hash{}, err
	}
	if w, err := ReadWrapped(x.State(), in.ChainID, in.Asset); err != nil {
		return types.Hash{}, err
	} else if w != nil {
		return types.Hash{}, system.Failf(system.CodeWrappedExists, "WrappedExists: asset %s on chain %d is wrapped as %s", in.Asset, in.ChainID, w.Token)
	}
	id, err := tokens.Create(x, types.EthBridgeAddress, &types.TokenCreate{Name: in.Name, Symbol: in.Symbol, Decimals: in.Decimals, Cap: new(big.Int), Initial: new(big.Int)})
	if err != nil {
		return types.Hash{}, err
	}
	w := &Wrapped{ChainID: in.ChainID, Asset: in.Asset, Token: id}
	x.State().Set(WrappedKey(in.ChainID, in.Asset), codec.MustMarshal(w))
	x.State().Set(WrappedByTokenKey(id), codec.MustMarshal(w))
	x.Emit(types.EthBridgeAddress, &WrappedEvent{ChainID: in.ChainID, Asset: in.Asset, Token: id})
	return id, nil
}

// mint records a member's attestation of a deposit and, at the
// threshold, mints the wrapped token (the module is its admin).
func (m *Module) mint(x system.Tx, from types.Address, in *types.BridgeMint) error {
	if err := m.member(from); err != nil {
		return err
	}
	w, err := ReadWrapped(x.State(), in.ChainID, in.Asset)
	if err != nil {
		return err
	}
	if w == nil {
		return system.Failf(system.CodeNoWrappedToken, "NoWrappedToken: asset %s on chain %d has no wrapped token (bridge_wrap)", in.Asset, in.ChainID)
	}
	if in.Amount == nil || in.Amount.Sign() <= 0 || in.Amount.Cmp(tokens.MaxAmount) > 0 {
		return system.Failf(system.CodeInvalidToken, "InvalidToken: amount must be in 1..2^256-1, not %v", in.Amount)
	}
	id := DepositID(in.ChainID, in.TxHash, in.LogIndex)
	by, _, err := m.attest(x, id, from, types.Keccak256(codec.MustMarshal(in)))
	if err != nil || by == nil {
		return err
	}
	if err := tokens.Mint(x, w.Token, types.EthBridgeAddress, in.To, in.Amount); err != nil {
		return err
	}
	x.Emit(types.EthBridgeAddress, &MintedEvent{ID: id, Token: w.Token, To: in.To, Amount: new(big.Int).Set(in.Amount)})
	return nil
}

// burn takes Amount of the sender's wrapped tokens and burns them (the
// module is the admin); the BridgeBurned event tells the bridge to unlock
// the asset to the recipient on Ethereum.
func (m *Module) burn(x system.Tx, from types.Address, in *types.BridgeBurn) error {
	w, err := ReadWrappedByToken(x.State(), in.ID)
	if err != nil {
		return err
	}
	if w == nil {
		return system.Failf(system.CodeNoWrappedToken, "NoWrappedToken: %s is not a wrapped token", in.ID)
	}
	if err := tokens.Transfer(x, in.ID, from, types.EthBridgeAddress, in.Amount); err != nil {
		return err
	}
	if err := tokens.Burn(x, in.ID, types.EthBridgeAddress, in.Amount); err != nil {
		return err
	}
	x.Emit(types.EthBridgeAddress, &BurnedEvent{Token: in.ID, ChainID: w.ChainID, Asset: w.Asset, Holder: from, Recipient: in.Recipient, Amount: new(big.Int).Set(in.Amount)})
	return nil
}
