package execution_test

import (
	"crypto/ecdsa"
	"math/big"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/offchain/entitlement"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/system"
	"github.com/cowboy-foundation/cowboy/chain/system/ethbridge"
	"github.com/cowboy-foundation/cowboy/chain/system/tokens"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// listenerActor records every Ethereum event the bridge delivers.
const listenerActor = `from cowboy_sdk import actor, eth_event

@actor
class Listener:
    def __init__(self):
        self.storage["events"] = []

    @eth_event
    def on_eth_event(self, ev):
        evs = self.storage["events"]
        evs.append(ev)
        self.storage["events"] = evs

    def events(self):
        return self.storage["events"]
`

var (
	ethChain    = uint64(1337)
	ethContract = types.Address{0xEC, 0x01}
	ethTopic    = types.Keccak256([]byte("Deposit(address,bytes32,uint256)"))
)

func bridgeChain(t *testing.T, members []*ecdsa.PrivateKey, threshold uint64, keys ...*ecdsa.PrivateKey) *chain {
	c := newChainWithGenesisKey(t, append(append([]*ecdsa.PrivateKey(nil), members...), keys...)...)
	p := &ethbridge.Params{Threshold: threshold, EventFee: 1_000_000}
	for _, k := range members {
		p.Members = append(p.Members, types.PubkeyToAddress(k.PublicKey))
	}
	cfg := c.ex.Config()
	cfg.Bridge = p
	ex, err := execution.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.ex = ex
	return c
}

func (c *chain) subscription(a types.Address, topic types.Hash) *ethbridge.Subscription {
	c.t.Helper()
	var s *ethbridge.Subscription
	c.view(func(v *store.View) {
		var err error
		if s, err = ethbridge.ReadSubscription(v, a, ethChain, ethContract, topic); err != nil {
			c.t.Fatal(err)
		}
	})
	return s
}

// TestEthBridgeEvents (issue 18 item 5): an actor whose manifest declares
// an Ethereum contract event subscribes with payment; with a 2-of-3
// bridge set the event reaches its @eth_event handler once, when two
// members attest the same log, the fee split between them; bad input
// fails with its code and changes nothing beyond the fee.
func TestEthBridgeEvents(t *testing.T) {
	m1, _ := genKey()
	m2, _ := genKey()
	m3, _ := genKey()
	alice, _ := genKey()
	c := bridgeChain(t, []*ecdsa.PrivateKey{m1, m2, m3}, 2, alice)
	bridge := types.EthBridgeAddress
	man := mustManifest("eth:" + entitlement.EthEvent(ethChain, ethContract, (*[32]byte)(&ethTopic)))
	rs := c.ok(c.txValue(alice, nil, &types.Deploy{Code: types.Bytes(listenerActor), Salt: types.Bytes("l"), Requires: man}, big.NewInt(0)))
	listener := *rs[0].Created
	rs = c.ok(c.txValue(alice, nil, &types.Deploy{Code: types.Bytes(listenerActor), Salt: types.Bytes("bare")}, big.NewInt(0)))
	bare := *rs[0].Created
	sub := func(a types.Address, topic types.Hash, v int64) *types.Tx {
		return c.txValue(alice, &bridge, &types.BridgeSubscribe{Actor: a, ChainID: ethChain, Contract: ethContract, Topic: topic}, big.NewInt(v))
	}
	ev := &types.BridgeEvent{Actor: listener, ChainID: ethChain, Contract: ethContract, BlockNumber: 7, TxHash: types.Hash{0x77},
		LogIndex: 2, Topics: []types.Hash{ethTopic, {0x01}}, Data: []byte("amount")}
	attest := func(k *ecdsa.PrivateKey, e *types.BridgeEvent) *types.Tx { return c.tx(k, &bridge, e, 0) }
	events := func() []any {
		t.Helper()
		l, _ := c.query(listener, "events", nil).([]any)
		return l
	}

	// Subscriptions: unpaid, not in the manifest (no manifest; another event).
	c.rejected(sub(listener, ethTopic, 0), system.CodeSubscriptionUnpaid)
	c.rejected(sub(bare, ethTopic, 5_000_000), system.CodeBridgeNotEntitled)
	c.rejected(sub(listener, types.Hash{0xBA, 0xD}, 5_000_000), system.CodeBridgeNotEntitled)
	// An event before any subscription.
	c.rejected(attest(m1, ev), system.CodeNoSubscription)
	c.step(sub(listener, ethTopic, 2_500_000))
	if s := c.subscription(listener, ethTopic); s == nil || s.Balance.Int64() != 2_500_000 || s.Handler != ethbridge.DefaultHandler {
		t.Fatalf("subscription %+v", s)
	}
	if b := balanceOf(t, c, bridge); b.Int64() != 2_500_000 {
		t.Fatalf("module holds %s", b)
	}

	// Events: by a non-member, for a contract or event not declared, malformed.
	c.rejected(attest(alice, ev), system.CodeNotBridgeMember)
	other := *ev
	other.Contract = types.Address{0xEC, 0x02}
	c.rejected(attest(m1, &other), system.CodeBridgeNotEntitled)
	other = *ev
	other.Topics = []types.Hash{{0xBA, 0xD}}
	c.rejected(attest(m1, &other), system.CodeBridgeNotEntitled)
	other = *ev
	other.Topics = nil
	c.rejected(attest(m1, &other), system.CodeBadBridgeEvent)

	// 2 of 3: m1 attests, m2 attests a different content, m3 agrees with m1.
	c.step(attest(m1, ev))
	if n := len(events()); n != 0 {
		t.Fatalf("delivered below the threshold: %d events", n)
	}
	c.rejected(attest(m1, ev), system.CodeAlreadyAttested)
	forged := *ev
	forged.Data = []byte("forged")
	c.step(attest(m2, &forged))
	if n := len(events()); n != 0 {
		t.Fatalf("delivered on disagreeing attestations: %d events", n)
	}
	before1 := balanceOf(t, c, types.PubkeyToAddress(m1.PublicKey))
	r := c.step(attest(m3, ev))[0]
	var delivered *ethbridge.EventDeliveredEvent
	for _, e := range r.Events {
		if e.Topic == ethbridge.TopicEventDelivered {
			delivered = new(ethbridge.EventDeliveredEvent)
			if err := codec.Unmarshal(e.Data, delivered); err != nil {
				t.Fatal(err)
			}
		}
	}
	if delivered == nil || !delivered.OK || delivered.Actor != listener || delivered.LogIndex != 2 {
		t.Fatalf("delivery event %+v in %+v", delivered, r.Events)
	}
	got := events()
	if len(got) != 1 {
		t.Fatalf("listener has %d events", len(got))
	}
	e := got[0].(map[any]any)
	topics := e["topics"].([]any)
	if e["chain_id"] != ethChain || e["block_number"] != uint64(7) || e["log_index"] != uint64(2) || string(e["data"].([]byte)) != "amount" ||
		types.Address(e["contract"].([]byte)) != ethContract || types.Hash(e["tx_hash"].([]byte)) != ev.TxHash ||
		len(topics) != 2 || types.Hash(topics[0].([]byte)) != ethTopic {
		t.Fatalf("delivered event %v", e)
	}
	// The fee: half to each of the two agreeing members (m3 also paid its
	// transaction's fee, so only m1's gain is exact).
	if d := new(big.Int).Sub(balanceOf(t, c, types.PubkeyToAddress(m1.PublicKey)), before1); d.Int64() != 500_000 {
		t.Fatalf("m1 earned %s", d)
	}
	if s := c.subscription(listener, ethTopic); s.Balance.Int64() != 1_500_000 || s.Delivered != 1 {
		t.Fatalf("subscription after delivery %+v", s)
	}
	// Once: a later attestation, even by a member who has not voted for it.
	c.rejected(attest(m2, ev), system.CodeEventDelivered)
	if n := len(events()); n != 1 {
		t.Fatalf("listener has %d events after a replay", n)
	}
	// A direct call of the handler is refused by @eth_event.
	if r := c.block(c.tx(alice, &listener, &types.Call{Handler: "on_eth_event", Args: cborArgs([]any{map[string]any{}})}, 0))[0]; r.Status == types.ReceiptSuccess {
		t.Fatal("a forged direct call of on_eth_event succeeded")
	}
	// The balance runs out: 1.5 fees left, one more event, then unpaid.
	ev2, ev3 := *ev, *ev
	ev2.LogIndex, ev3.LogIndex = 3, 4
	c.step(attest(m1, &ev2), attest(m2, &ev2))
	c.rejected(attest(m1, &ev3), system.CodeSubscriptionUnpaid)
	if n := len(events()); n != 2 {
		t.Fatalf("listener has %d events", n)
	}
}

// TestEthBridgeWrapped: a wrapped CIP-20 token is administered by the
// bridge module: only bridge members mint it (at the threshold), nobody
// else, not even through token_mint; a holder burns to unlock.
func TestEthBridgeWrapped(t *testing.T) {
	m1, _ := genKey()
	m2, _ := genKey()
	alice, _ := genKey()
	c := bridgeChain(t, []*ecdsa.PrivateKey{m1, m2}, 2, alice)
	bridge, tm := types.EthBridgeAddress, types.TokenModuleAddress
	aliceA := types.PubkeyToAddress(alice.PublicKey)
	asset := types.Address{0xE7}
	c.rejected(c.tx(alice, &bridge, &types.BridgeWrap{ChainID: ethChain, Asset: asset, Name: "Wrapped Ether", Symbol: "WETH", Decimals: 18}, 0), system.CodeNotBridgeMember)
	r := c.step(c.tx(m1, &bridge, &types.BridgeWrap{ChainID: ethChain, Asset: asset, Name: "Wrapped Ether", Symbol: "WETH", Decimals: 18}, 0))[0]
	var idb []byte
	if err := codec.Unmarshal(r.Return, &idb); err != nil || len(idb) != 32 {
		t.Fatalf("wrap returned %x: %v (%s)", r.Return, err, r.Error)
	}
	id := types.Hash(idb)
	c.rejected(c.tx(m2, &bridge, &types.BridgeWrap{ChainID: ethChain, Asset: asset, Name: "Again", Symbol: "W", Decimals: 18}, 0), system.CodeWrappedExists)
	c.rejected(c.tx(m1, &tm, &types.TokenMint{ID: id, To: aliceA, Amount: big.NewInt(5)}, 0), system.CodeNotMinter)

	dep := &types.BridgeMint{ChainID: ethChain, Asset: asset, TxHash: types.Hash{0xD1}, LogIndex: 0, To: aliceA, Amount: big.NewInt(100)}
	c.rejected(c.tx(alice, &bridge, dep, 0), system.CodeNotBridgeMember)
	noAsset := *dep
	noAsset.Asset = types.Address{0xE8}
	c.rejected(c.tx(m1, &bridge, &noAsset, 0), system.CodeNoWrappedToken)
	c.step(c.tx(m1, &bridge, dep, 0))
	if b := tokenBalance(t, c, id, aliceA); b.Sign() != 0 {
		t.Fatalf("minted below the threshold: %s", b)
	}
	c.step(c.tx(m2, &bridge, dep, 0))
	if b := tokenBalance(t, c, id, aliceA); b.Int64() != 100 {
		t.Fatalf("alice holds %s", b)
	}
	c.rejected(c.tx(m2, &bridge, dep, 0), system.CodeEventDelivered)
	// Burn to unlock: the holder's tokens are burned; the event names the recipient.
	c.rejected(c.tx(alice, &bridge, &types.BridgeBurn{ID: id, Amount: big.NewInt(101), Recipient: types.Address{0xAB}}, 0), system.CodeTokenBalance)
	r = c.step(c.tx(alice, &bridge, &types.BridgeBurn{ID: id, Amount: big.NewInt(40), Recipient: types.Address{0xAB}}, 0))[0]
	var burned *ethbridge.BurnedEvent
	for _, e := range r.Events {
		if e.Topic == ethbridge.TopicBurned {
			burned = new(ethbridge.BurnedEvent)
			if err := codec.Unmarshal(e.Data, burned); err != nil {
				t.Fatal(err)
			}
		}
	}
	if burned == nil || burned.Amount.Int64() != 40 || burned.Recipient != (types.Address{0xAB}) || burned.Asset != asset {
		t.Fatalf("burn event %+v", burned)
	}
	var tok *tokens.Token
	c.view(func(v *store.View) { tok, _ = tokens.Read(v, id) })
	if tokenBalance(t, c, id, aliceA).Int64() != 60 || tok.Supply.Int64() != 60 || tok.Admin != bridge {
		t.Fatalf("after burn: token %+v", tok)
	}
}

// TestEthBridgeOff: without a bridge set in genesis every bridge
// instruction fails with BridgeOff.
func TestEthBridgeOff(t *testing.T) {
	alice, _ := genKey()
	c := newChainWithGenesisKey(t, alice)
	bridge := types.EthBridgeAddress
	c.rejected(c.tx(alice, &bridge, &types.BridgeWrap{ChainID: 1, Name: "W", Symbol: "W"}, 0), system.CodeBridgeOff)
}
