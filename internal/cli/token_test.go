package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
)

// cowboy token: create with metadata, cap and supply; transfer, approve,
// mint and burn; balance and info as text and --json; refusals carry the
// module's code names.
func TestTokenCommands(t *testing.T) {
	h := newHarness(t)
	h.must("keys", "new", "alice", "--light-kdf")
	h.must("keys", "new", "bob", "--light-kdf")
	h.must("faucet", "alice", "--value", "5")
	h.must("faucet", "bob", "--value", "1")
	var created struct {
		Token string             `json:"token"`
		Tx    *apitypes.TxResult `json:"tx"`
	}
	out := h.must("token", "create", "--from", "alice", "--name", "Cowboy Dollar", "--symbol", "CUSD", "--decimals", "6",
		"--cap", "1000", "--supply", "100.5", "--json")
	if err := json.Unmarshal([]byte(out), &created); err != nil || len(created.Token) != 66 || created.Tx.Receipt.Status != "success" {
		t.Fatalf("create: %s", out)
	}
	id := created.Token
	if out := h.must("token", "transfer", "--from", "alice", id, "bob", "0.25"); !strings.Contains(out, "result     success") {
		t.Fatalf("transfer: %s", out)
	}
	if out := h.must("token", "balance", id, "bob"); strings.TrimSpace(out) != "0.25 CUSD" {
		t.Fatalf("bob's balance: %q", out)
	}
	h.must("token", "approve", "--from", "alice", id, "bob", "10")
	var b apitypes.TokenBalance
	if err := json.Unmarshal([]byte(h.must("token", "balance", id, "alice", "--spender", "bob", "--json")), &b); err != nil ||
		b.Balance != "100250000" || b.Allowance != "10000000" {
		t.Fatalf("alice's balance and bob's allowance: %+v %v", b, err)
	}
	h.must("token", "mint", "--from", "alice", id, "bob", "899.5") // to the cap
	h.must("token", "burn", "--from", "alice", id, "250base")
	var info apitypes.Token
	if err := json.Unmarshal([]byte(h.must("token", "info", id, "--json")), &info); err != nil ||
		info.Name != "Cowboy Dollar" || info.Symbol != "CUSD" || info.Decimals != 6 || info.Cap != "1000000000" || info.Supply != "999999750" {
		t.Fatalf("info: %+v %v", info, err)
	}
	if out := h.must("token", "info", id); !strings.Contains(out, "supply     999.99975 CUSD") || !strings.Contains(out, "cap        1000 CUSD") {
		t.Fatalf("info text: %s", out)
	}
	if out := h.must("token", "list"); !strings.Contains(out, id) || !strings.Contains(out, "Cowboy Dollar") {
		t.Fatalf("list: %s", out)
	}
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"token", "mint", "--from", "alice", id, "bob", "1"}, "SupplyCapExceeded"},
		{[]string{"token", "transfer", "--from", "bob", id, "alice", "1000"}, "TokenBalance"},
		{[]string{"token", "mint", "--from", "bob", id, "bob", "0.000001"}, "NotMinter"},
	} {
		out, err := h.run("", c.args...)
		if err == nil || !strings.Contains(out, c.code) {
			t.Errorf("%v: %v\n%s", c.args, err, out)
		}
	}
	if _, err := h.run("", "token", "transfer", "--from", "alice", id, "bob", "0.0000001"); err == nil || !strings.Contains(err.Error(), "at most 6 decimals") {
		t.Fatalf("too many decimals: %v", err)
	}
	if _, err := h.run("", "token", "info", "0x"+strings.Repeat("ab", 32)); err == nil {
		t.Fatal("info of an unknown token")
	}
}
