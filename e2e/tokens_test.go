package e2e

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
)

// TestPlatformTokenCLI (issue 18 item 3): on a --dev node, the ported
// examples/token actor creates a CIP-20 platform token at deploy and mints
// the supply to its deployer, who moves it with `cowboy token transfer`;
// a token created with `cowboy token create` is read back with `info` and
// `balance --json`; a mint by a non-minter and a mint above the cap are
// refused with their codes and change nothing.
func TestPlatformTokenCLI(t *testing.T) {
	node := startNode(t, t.TempDir(), freePort(t), 200*time.Millisecond)
	home := t.TempDir()
	cli(t, node, home, "keys", "new", "alice", "--light-kdf")
	cli(t, node, home, "keys", "new", "bob", "--light-kdf")
	cli(t, node, home, "faucet", "alice", "--value", "10")
	cli(t, node, home, "faucet", "bob", "--value", "1")

	_, file, _, _ := runtime.Caller(0)
	code := filepath.Join(filepath.Dir(filepath.Dir(file)), "examples", "token", "token.py")
	out := cli(t, node, home, "actor", "deploy", "--from", "alice", "--code", code, "--salt", "ext", "--init-payload", "[5000, 10000]")
	m := regexp.MustCompile(`Actor deployed: (0x[0-9a-fA-F]{40})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("deploy output:\n%s", out)
	}
	actor := strings.ToLower(m[1])
	var listed []apitypes.Token
	if err := json.Unmarshal([]byte(cli(t, node, home, "token", "list", "--json")), &listed); err != nil || len(listed) != 1 ||
		strings.ToLower(listed[0].Admin.String()) != actor || listed[0].Symbol != "EXT" || listed[0].Supply != "5000" || listed[0].Cap != "10000" {
		t.Fatalf("token list %+v: %v", listed, err)
	}
	ext := listed[0].ID.String()
	if out := cli(t, node, home, "token", "transfer", "--from", "alice", ext, "bob", "1234"); !strings.Contains(out, "result     success") {
		t.Fatalf("transfer:\n%s", out)
	}
	var b apitypes.TokenBalance
	if err := json.Unmarshal([]byte(cli(t, node, home, "token", "balance", ext, "bob", "--json")), &b); err != nil || b.Balance != "1234" {
		t.Fatalf("bob's balance %+v: %v", b, err)
	}
	if out := cli(t, node, home, "token", "balance", ext, "alice"); strings.TrimSpace(out) != "3766 EXT" {
		t.Fatalf("alice's balance: %q", out)
	}
	// Bob is not a minter: refused with NotMinter, nothing minted.
	if out := cliFails(t, node, home, "token", "mint", "--from", "bob", ext, "bob", "1"); !strings.Contains(out, "NotMinter") {
		t.Fatalf("mint by bob:\n%s", out)
	}

	var created struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, node, home, "token", "create", "--from", "alice", "--name", "Gold", "--symbol", "GLD",
		"--decimals", "2", "--cap", "100", "--supply", "99.5", "--json")), &created); err != nil || len(created.Token) != 66 {
		t.Fatalf("create: %v", err)
	}
	if out := cliFails(t, node, home, "token", "mint", "--from", "alice", created.Token, "alice", "0.51"); !strings.Contains(out, "SupplyCapExceeded") {
		t.Fatalf("mint above the cap:\n%s", out)
	}
	var info apitypes.Token
	if err := json.Unmarshal([]byte(cli(t, node, home, "token", "info", created.Token, "--json")), &info); err != nil ||
		info.Name != "Gold" || info.Decimals != 2 || info.Supply != "9950" || info.Cap != "10000" {
		t.Fatalf("info %+v: %v", info, err)
	}
	if out := cli(t, node, home, "token", "info", created.Token); !strings.Contains(out, "supply     99.5 GLD") {
		t.Fatalf("info:\n%s", out)
	}
}
