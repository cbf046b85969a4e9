package cli

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/system/ethbridge"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/pvm"
	"github.com/ethereum/go-ethereum/crypto"
)

// cowboy bridge: on a devnet whose bridge set is the imported key
// "member", a listener deployed with the eth entitlement is subscribed
// (an unpaid subscription and one for an undeclared event are refused with
// their codes), a member wraps an asset (a non-member is refused), and a
// burn of a token that is not wrapped is refused.
func TestBridgeCommands(t *testing.T) {
	engine, err := pvm.New(context.Background(), pvm.Config{PoolSize: 1})
	if err != nil {
		t.Fatalf("start PVM: %v", err)
	}
	t.Cleanup(func() { engine.Close() })
	member, _ := crypto.GenerateKey()
	d := nodetest.NewWithGenesis(t, engine, func(g *genesis.Genesis) {
		g.Bridge = &ethbridge.Params{Members: []types.Address{types.PubkeyToAddress(member.PublicKey)}, Threshold: 1}
	})
	srv := d.Serve(t, 20*time.Millisecond)
	t.Setenv("COWBOY_PASSWORD", "pw")
	h := &harness{t: t, url: srv.URL, home: t.TempDir()}
	h.must("keys", "new", "alice", "--light-kdf")
	if _, err := h.run(hex.EncodeToString(crypto.FromECDSA(member))+"\n", "keys", "import", "member", "--light-kdf"); err != nil {
		t.Fatal(err)
	}
	h.must("faucet", "alice", "--value", "5")
	h.must("faucet", "member", "--value", "1")
	contract := "0x" + strings.Repeat("ab", 20)
	event := "Deposit(address,bytes32,uint256)"
	topic := types.Keccak256([]byte(event))
	code := writeFile(t, "listener.py", `from cowboy_sdk import actor, eth_event

@actor
class Listener:
    @eth_event
    def on_eth_event(self, ev):
        self.storage["last"] = ev["log_index"]
`)
	actor := deployed(t, h.must("actor", "deploy", "--from", "alice", "--code", code, "--salt", "l", "--require", "eth:1:"+contract+":"+topic.String()))

	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"bridge", "subscribe", actor, "--from", "alice", "--contract", contract, "--event", event}, "SubscriptionUnpaid"},
		{[]string{"bridge", "subscribe", actor, "--from", "alice", "--contract", contract, "--event", "Other(uint256)", "--value", "0.01"}, "BridgeNotEntitled"},
		{[]string{"bridge", "wrap", "--from", "alice", "--asset", contract, "--name", "W", "--symbol", "W"}, "NotBridgeMember"},
		{[]string{"bridge", "burn", "--from", "alice", "0x" + strings.Repeat("cd", 32), "1", "--recipient", contract}, "NoWrappedToken"},
	} {
		out, err := h.run("", c.args...)
		if err == nil || !strings.Contains(out, c.code) {
			t.Errorf("%v: %v\n%s", c.args, err, out)
		}
	}
	if out := h.must("bridge", "subscribe", actor, "--from", "alice", "--contract", contract, "--event", event, "--value", "0.01"); !strings.Contains(out, "result     success") {
		t.Fatalf("subscribe: %s", out)
	}
	var subs []apitypes.BridgeSubscription
	if err := json.Unmarshal([]byte(h.must("bridge", "subscriptions", actor, "--json")), &subs); err != nil || len(subs) != 1 ||
		subs[0].Topic != topic || subs[0].Balance != "10000000000000000" || subs[0].Handler != "on_eth_event" || subs[0].ChainID != 1 {
		t.Fatalf("subscriptions %+v: %v", subs, err)
	}
	if out := h.must("bridge", "subscriptions", actor); !strings.Contains(out, "balance 0.01 CBY  delivered 0") {
		t.Fatalf("subscriptions: %s", out)
	}
	h.must("bridge", "wrap", "--from", "member", "--asset", contract, "--name", "Wrapped AB", "--symbol", "wAB", "--decimals", "6")
	var listed []apitypes.Token
	if err := json.Unmarshal([]byte(h.must("token", "list", "--json")), &listed); err != nil || len(listed) != 1 ||
		listed[0].Symbol != "wAB" || listed[0].Admin != types.EthBridgeAddress {
		t.Fatalf("token list %+v: %v", listed, err)
	}
	if _, err := h.run("", "bridge", "subscribe", actor, "--from", "alice", "--contract", contract, "--event", "nonsense"); err == nil {
		t.Fatal("an event that is neither a signature nor a topic was accepted")
	}
}
