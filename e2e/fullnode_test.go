package e2e

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/genesis"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/offchain/job"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// cowboyCLI runs the cowboy binary and returns its output.
func cowboyCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(binDir, "cowboy"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("cowboy %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// downAtCleanup stops the testnet in dir when the test ends (and kills
// whatever its pid files still name), logging each node's tail on failure.
func downAtCleanup(t *testing.T, dir string, man *node.Testnet) {
	t.Cleanup(func() {
		out, err := exec.Command(filepath.Join(binDir, "cowboy"), "testnet", "down", "--dir", dir, "--grace", "10s").CombinedOutput()
		if err != nil {
			t.Errorf("testnet down: %v\n%s", err, out)
		}
		// testnet down stops what its pid files name; make sure nothing outlives the test.
		for _, n := range man.Nodes {
			if b, err := os.ReadFile(filepath.Join(n.Home, "cowboyd.pid")); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if t.Failed() {
				if b, err := os.ReadFile(filepath.Join(n.Home, "cowboyd.log")); err == nil {
					t.Logf("%s log:\n%s", n.Name, tailLines(string(b), 30))
				}
			}
		}
	})
}

// TestTestnetFullNodes is issue 15's first "done" line through the CLI:
// `cowboy testnet init --validators 4 --full-nodes 2` and `testnet up`
// start four validators and two full nodes as processes; a transfer sent
// to full0's API is finalized (its receipt read back from full0), bob's
// balance is read from full1 (whose SSE stream carries the block),
// `testnet status` shows each node's role and height, and every node
// serves /metrics.
func TestTestnetFullNodes(t *testing.T) {
	const vals, fulls = 4, 2
	dir := t.TempDir()
	rpc, p2p := freeBases(t, vals+fulls)
	cowboyCLI(t, "testnet", "init", "--dir", dir, "--validators", strconv.Itoa(vals), "--full-nodes", strconv.Itoa(fulls),
		"--rpc-port", strconv.Itoa(rpc), "--p2p-port", strconv.Itoa(p2p),
		"--block-interval", "150ms", "--view-timeout", "800ms", "--tick", "50ms")
	man, err := node.LoadTestnet(dir)
	if err != nil {
		t.Fatal(err)
	}
	downAtCleanup(t, dir, man)
	if len(man.Nodes) != vals+fulls || man.Nodes[vals].Role != node.RoleFull {
		t.Fatalf("manifest: %+v", man.Nodes)
	}
	cowboyCLI(t, "testnet", "up", "--dir", dir, "--no-pvm", "--wait", "60s")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := func(i int) *sdk.Client { return sdk.New("http://" + man.Nodes[i].RPC) }
	full0, full1 := vals, vals+1

	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	alice := types.PubkeyToAddress(key.PublicKey)
	bob := types.Address{0xb0, 0xb1}
	fh, err := client(0).Chain().Faucet(ctx, alice, new(big.Int).Mul(big.NewInt(100), big.NewInt(1e18)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client(full0).Chain().WaitForReceipt(ctx, fh); err != nil {
		t.Fatalf("faucet grant on full0: %v", err)
	}
	// full1's event stream (SSE) will carry the block with the transfer.
	st1, err := client(full1).Chain().Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	streamed := make(chan types.Hash, 64)
	sctx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	go func() {
		_ = client(full1).Chain().Subscribe(sctx, st1.Height+1, func(b apitypes.Block) error {
			for _, h := range b.TxHashes {
				select {
				case streamed <- h:
				case <-sctx.Done():
				}
			}
			return nil
		})
	}()
	tx, err := client(full0).Account(key).Transfer(ctx, bob, big.NewInt(7), sdk.TxOptions{})
	if err != nil {
		t.Fatalf("transfer through full0: %v", err)
	}
	r, err := client(full0).Chain().WaitForReceipt(ctx, tx.Hash())
	if err != nil {
		t.Fatalf("transfer not final on full0: %v", err)
	}
	if _, err := client(full1).Chain().WaitForReceipt(ctx, tx.Hash()); err != nil {
		t.Fatalf("transfer not final on full1: %v", err)
	}
	for seen := false; !seen; {
		select {
		case h := <-streamed:
			seen = h == tx.Hash()
		case <-ctx.Done():
			t.Fatal("full1's event stream never carried the transfer")
		}
	}
	if bal, err := client(full1).Chain().Balance(ctx, bob); err != nil || bal.Cmp(big.NewInt(7)) != 0 {
		t.Fatalf("bob on full1: %v %v", bal, err)
	}
	// Done means: `cowboy account show --verify` against a full node
	// verifies, as a light client holding only the genesis (its proof is
	// anchored a block or two behind the head: poll until it shows bob's 7).
	verifyViaFull := func() (string, error) {
		out, err := exec.Command(filepath.Join(binDir, "cowboy"), "--node", "http://"+man.Nodes[full1].RPC, "account", "show", bob.String(),
			"--verify", "--genesis", node.GenesisPath(man.Nodes[full1].Home), "--json").CombinedOutput()
		return string(out), err
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		out, err := verifyViaFull()
		var v struct {
			Balance  string `json:"balance"`
			Verified struct {
				Height  uint64 `json:"height"`
				Signers int    `json:"qc_signers"`
			} `json:"verified"`
		}
		if err == nil && json.Unmarshal([]byte(out), &v) == nil && v.Balance == "7" {
			if v.Verified.Signers*3 <= vals*2 {
				t.Fatalf("verified against a QC of %d signers of %d:\n%s", v.Verified.Signers, vals, out)
			}
			t.Logf("account show --verify via full1: balance 7 at certified height %d, %d of %d signers", v.Verified.Height, v.Verified.Signers, vals)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("account show --verify via full1 never verified bob's balance: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	st, err := client(full1).Chain().Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Consensus == nil || st.Consensus.Role != node.RoleFull || st.Consensus.Index != -1 || st.Consensus.Validators != vals || r.BlockHeight == nil || st.FinalizedHeight < *r.BlockHeight {
		t.Fatalf("full1 status %+v consensus %+v", st, st.Consensus)
	}

	var rows []struct {
		Name    string `json:"name"`
		Role    string `json:"role"`
		Running bool   `json:"running"`
		Height  uint64 `json:"height"`
	}
	if err := json.Unmarshal([]byte(cowboyCLI(t, "testnet", "status", "--dir", dir, "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	for i, row := range rows {
		want := node.RoleValidator
		if i >= vals {
			want = node.RoleFull
		}
		if row.Role != want || !row.Running || row.Height == 0 {
			t.Fatalf("testnet status row %d: %+v", i, row)
		}
	}

	// A figure, logged and not asserted: submit-to-final latency through
	// a full node (receipt read on it) beside the same through a
	// validator, in this run, one sender each (receipts polled every
	// 100 ms by the sdk).
	carolKey, _ := crypto.GenerateKey()
	ch, err := client(0).Chain().Faucet(ctx, types.PubkeyToAddress(carolKey.PublicKey), new(big.Int).Mul(big.NewInt(100), big.NewInt(1e18)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client(1).Chain().WaitForReceipt(ctx, ch); err != nil {
		t.Fatal(err)
	}
	latency := func(k *ecdsa.PrivateKey, via int) time.Duration {
		start := time.Now()
		tx, err := client(via).Account(k).Transfer(ctx, bob, big.NewInt(1), sdk.TxOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client(via).Chain().WaitForReceipt(ctx, tx.Hash()); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	var viaFull, viaVal []time.Duration
	for range 3 {
		viaFull = append(viaFull, latency(key, full0))
		viaVal = append(viaVal, latency(carolKey, 1))
	}
	slices.Sort(viaFull)
	slices.Sort(viaVal)
	t.Logf("submit to final (receipt on the node submitted to), 3 transfers each: via full0 median %v %v, via node1 median %v %v",
		viaFull[1].Round(time.Millisecond), viaFull, viaVal[1].Round(time.Millisecond), viaVal)

	for _, n := range man.Nodes {
		m := scrape(t, nil, "http://"+n.RPC+"/metrics")
		for _, s := range nodeSeries {
			if _, ok := m[s]; !ok {
				t.Errorf("%s: /metrics lacks %s", n.Name, s)
			}
		}
		if _, ok := m["cowboy_node_info"]; !ok {
			t.Errorf("%s: /metrics lacks cowboy_node_info", n.Name)
		}
		if m["cowboy_consensus_height"] < 1 || m["cowboy_p2p_message_receive_bytes_total"] <= 0 || m["cowboy_sync_target_height"] < m["cowboy_consensus_height"] {
			t.Errorf("%s: metrics %v", n.Name, m)
		}
	}
}

// oneValidatorAndFullNode starts (through `cowboy testnet init` and `up`)
// a one-validator testnet with one full node holding the faucet key, with
// the devnet's runner and storage parameters, and returns the full node.
func oneValidatorAndFullNode(t *testing.T) *daemon {
	t.Helper()
	dir := t.TempDir()
	rpc, p2p := freeBases(t, 2)
	cowboyCLI(t, "testnet", "init", "--dir", dir, "--validators", "1", "--full-nodes", "1",
		"--rpc-port", strconv.Itoa(rpc), "--p2p-port", strconv.Itoa(p2p),
		"--block-interval", "150ms", "--view-timeout", "800ms", "--tick", "50ms")
	man, err := node.LoadTestnet(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The devnet's runner and storage parameters (10 CBY minimum runner
	// stake, short timeouts and storage epochs) in the shared genesis,
	// before anything starts.
	for _, nd := range man.Nodes {
		g, err := genesis.Load(node.GenesisPath(nd.Home))
		if err != nil {
			t.Fatal(err)
		}
		dev := genesis.Dev(0, types.Address{}, types.Address{})
		g.Offchain, g.Storage = dev.Offchain, dev.Storage
		if err := g.Save(node.GenesisPath(nd.Home)); err != nil {
			t.Fatal(err)
		}
	}
	fk, err := os.ReadFile(node.FaucetKeyPath(man.Nodes[0].Home))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(node.FaucetKeyPath(man.Nodes[1].Home), fk, 0o600); err != nil {
		t.Fatal(err)
	}
	downAtCleanup(t, dir, man)
	cowboyCLI(t, "testnet", "up", "--dir", dir, "--wait", "60s")
	full := &daemon{t: t, home: man.Nodes[1].Home, port: rpc + 1}
	if st, err := full.client().Chain().Status(context.Background()); err != nil || st.Consensus == nil || st.Consensus.Role != node.RoleFull {
		t.Fatalf("full0 status: %+v %v", st, err)
	}
	return full
}

// TestRunnerOnFullNode: a cowboy-runner pointed at a full node (of a
// one-validator testnet) registers, sees its job assigned over the full
// node's event stream and gets it verified and settled, all through the
// full node's API: the runner works unchanged against a full node. The
// full node holds the faucet key, so the faucet too is a transaction it
// relays.
func TestRunnerOnFullNode(t *testing.T) {
	full := oneValidatorAndFullNode(t)

	prices := priceServer(t, nil)
	executors := filepath.Join(t.TempDir(), "executors.toml")
	if err := os.WriteFile(executors, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := initRunnerTypes(t, full, "r1", executors, "http")
	r.start()
	spec := priceJob(prices.URL+"/btc", 3000)
	spec.Verification = job.VerificationConfig{Mode: job.ModeNone, Runners: 1}
	id, _, _, _ := submitJob(t, full, spec)
	j := waitChainJob(t, full, id, 90*time.Second, settled)
	if j.Status != job.StateFinalized || string(j.Result) != `{"price":97000.5}` {
		t.Fatalf("job: %+v result %q\nrunner log:\n%s", j, j.Result, tailLines(r.log(), 30))
	}
}
