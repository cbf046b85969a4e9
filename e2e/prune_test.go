package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// waitPruned polls c until the state at height 1 is refused as pruned.
func waitPruned(t *testing.T, c *sdk.Client, key []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	one := uint64(1)
	for {
		_, err := c.Chain().Proof(ctx, key, &one)
		var ae *sdk.APIError
		if errors.As(err, &ae) && ae.Code == apitypes.CodePruned && ae.Status == http.StatusGone {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("height 1 never pruned: last answer %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func addressOf(t *testing.T, d *daemon, home, name string) types.Address {
	t.Helper()
	out := cli(t, d, home, "keys", "show", name)
	for _, f := range strings.Fields(out) {
		if a, err := types.ParseAddress(f); err == nil {
			return a
		}
	}
	t.Fatalf("no address in %q", out)
	return types.Address{}
}

// A devnet started with --prune-keep prunes while it runs and still
// serves balances and proofs; --prune-keep 0 and --prune-keep with
// --archive are refused.
func TestDevnetPrunes(t *testing.T) {
	for _, bad := range [][]string{{"--prune-keep", "0"}, {"--prune-keep", "5", "--archive"}} {
		cmd := exec.Command(filepath.Join(binDir, "cowboyd"), append([]string{"--dev", "--home", t.TempDir(), "--rpc", "127.0.0.1:0", "--no-pvm"}, bad...)...)
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "--prune-keep") {
			t.Fatalf("cowboyd %v: err %v\n%s", bad, err, out)
		}
	}
	d := startNodeArgs(t, t.TempDir(), freePort(t), 50*time.Millisecond, "--no-pvm", "--prune-keep", "5")
	home := t.TempDir()
	cli(t, d, home, "keys", "new", "alice", "--light-kdf")
	if out := cli(t, d, home, "faucet", "alice", "--value", "7"); !strings.Contains(out, "success") {
		t.Fatalf("faucet: %s", out)
	}
	alice := addressOf(t, d, home, "alice")
	c := d.client()
	waitPruned(t, c, state.AccountKey(alice))
	if out := cli(t, d, home, "account", "show", "alice"); !strings.Contains(out, "Balance   7 CBY") {
		t.Fatalf("account show after pruning:\n%s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Chain().Proof(ctx, state.AccountKey(alice), nil); err != nil {
		t.Fatalf("head proof after pruning: %v", err)
	}
}

// A validator of a 3-validator testnet with config.json's prune_keep
// prunes while the network runs, and `account show --verify` through it
// still verifies against a certified header; an unpruned validator still
// serves height 1.
func TestTestnetValidatorPrunes(t *testing.T) {
	tn := newTestnet(t, 3)
	fc, err := node.LoadNodeConfig(tn.man.Nodes[1].Home)
	if err != nil {
		t.Fatal(err)
	}
	fc.PruneKeep = 5
	b, _ := json.Marshal(fc)
	if err := os.WriteFile(node.NodeConfigPath(tn.man.Nodes[1].Home), b, 0o600); err != nil {
		t.Fatal(err)
	}
	// 16-block epochs: by the time the proof is checked, the state of the
	// epoch-0 hand-off height (15) is pruned on node1, whose light client
	// answer must still carry that hand-off's validator-set proof.
	d, home, gen := tn.startWithAlice(16)
	alice := addressOf(t, d, home, "alice")
	waitPruned(t, tn.client(1), state.AccountKey(alice))
	tn.waitHeight(30, 60*time.Second, 1)

	waitVerifiedAlice(t, d, home, gen, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	one := uint64(1)
	if _, err := tn.client(0).Chain().Proof(ctx, state.AccountKey(alice), &one); err != nil {
		t.Fatalf("unpruned validator at height 1: %v", err)
	}
}
