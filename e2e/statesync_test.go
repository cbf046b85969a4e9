package e2e

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// setNodeConfig merges keys into a node home's config.json.
func setNodeConfig(t *testing.T, home string, kv map[string]any) {
	t.Helper()
	path := node.NodeConfigPath(home)
	m := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range kv {
		m[k] = v
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTestnetStateSync is issue 15 item 2 end to end: three validators
// write a snapshot every 10 heights; a full node started late with
// state_sync restores the newest verifiable one (never replaying from
// genesis: it holds no block 1), follows to the head, serves alice's
// balance as the validators do, and `account show --verify` against it
// verifies.
func TestTestnetStateSync(t *testing.T) {
	const vals = 3
	dir := t.TempDir()
	rpc, p2p := freeBases(t, vals+1)
	cowboyCLI(t, "testnet", "init", "--dir", dir, "--validators", strconv.Itoa(vals), "--full-nodes", "1",
		"--rpc-port", strconv.Itoa(rpc), "--p2p-port", strconv.Itoa(p2p),
		"--block-interval", "100ms", "--view-timeout", "800ms", "--tick", "50ms")
	man, err := node.LoadTestnet(dir)
	if err != nil {
		t.Fatal(err)
	}
	downAtCleanup(t, dir, man)
	var valNames []string
	for i := range vals {
		setNodeConfig(t, man.Nodes[i].Home, map[string]any{"snapshot_interval": 10})
		valNames = append(valNames, man.Nodes[i].Name)
	}
	full := man.Nodes[vals]
	setNodeConfig(t, full.Home, map[string]any{"state_sync": true})
	cowboyCLI(t, "testnet", "up", "--dir", dir, "--no-pvm", "--wait", "60s", "--only", strings.Join(valNames, ","))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	v0 := sdk.New("http://" + man.Nodes[0].RPC)
	key, _ := crypto.GenerateKey()
	alice := types.PubkeyToAddress(key.PublicKey)
	fh, err := v0.Chain().Faucet(ctx, alice, new(big.Int).Mul(big.NewInt(7), big.NewInt(1e18)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v0.Chain().WaitForReceipt(ctx, fh); err != nil {
		t.Fatal(err)
	}
	for {
		st, err := v0.Chain().Status(ctx)
		if err == nil && st.FinalizedHeight >= 25 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("validators never reached height 25: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	cowboyCLI(t, "testnet", "up", "--dir", dir, "--no-pvm", "--wait", "60s", "--only", full.Name)
	fc := sdk.New("http://" + full.RPC)
	for {
		vs, err1 := v0.Chain().Status(ctx)
		fs, err2 := fc.Chain().Status(ctx)
		if err1 == nil && err2 == nil && fs.Height >= vs.Height {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the state-synced full node never reached the head: %v %v", err1, err2)
		}
		time.Sleep(100 * time.Millisecond)
	}
	logb, _ := os.ReadFile(filepath.Join(full.Home, "cowboyd.log"))
	if !strings.Contains(string(logb), "state restored from snapshot") {
		t.Fatalf("full node did not state-sync:\n%s", tailLines(string(logb), 30))
	}
	if _, err := fc.Chain().Block(ctx, "1", false); err == nil {
		t.Fatal("a state-synced node serves block 1, below its snapshot")
	}
	want := new(big.Int).Mul(big.NewInt(7), big.NewInt(1e18))
	for _, c := range []*sdk.Client{fc, v0} {
		if bal, err := c.Chain().Balance(ctx, alice); err != nil || bal.Cmp(want) != 0 {
			t.Fatalf("alice's balance: %v %v", bal, err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		out, err := exec.Command(filepath.Join(binDir, "cowboy"), "--node", "http://"+full.RPC, "account", "show", alice.String(),
			"--verify", "--genesis", node.GenesisPath(full.Home), "--json").CombinedOutput()
		var v struct {
			Balance string `json:"balance"`
		}
		if err == nil && json.Unmarshal(out, &v) == nil && v.Balance == want.String() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("account show --verify via the state-synced node: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
