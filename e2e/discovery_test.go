package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// waitRecord waits for a running node's discovery record (HOME/node.enr).
func waitRecord(ctx context.Context, t *testing.T, home string) string {
	t.Helper()
	for {
		b, err := os.ReadFile(node.NodeRecordPath(home))
		if rec := strings.TrimSpace(string(b)); err == nil && strings.HasPrefix(rec, "enr:") {
			return rec
		}
		if ctx.Err() != nil {
			t.Fatalf("no discovery record in %s", home)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTestnetDiscoveryAndFullPeers is issue 15 items 5 and 1 end to end,
// with processes: two validators (snapshots every 30 heights) and full0
// run as `testnet init` configures them. full1 is given no validator
// address, only validator 0's discovery record: it finds the others
// through the DHT, learns every validator's address, and reaches the
// head. full2 is given only full0's record and --state-sync: it restores a
// snapshot served by a full node (its bootstrap list is empty and it
// state-syncs before it dials any validator), then follows the chain.
func TestTestnetDiscoveryAndFullPeers(t *testing.T) {
	const vals, fulls = 2, 3
	dir := t.TempDir()
	rpc, p2p := freeBases(t, vals+fulls)
	cowboyCLI(t, "testnet", "init", "--dir", dir, "--validators", strconv.Itoa(vals), "--full-nodes", strconv.Itoa(fulls),
		"--rpc-port", strconv.Itoa(rpc), "--p2p-port", strconv.Itoa(p2p),
		"--block-interval", "100ms", "--view-timeout", "800ms", "--tick", "50ms")
	man, err := node.LoadTestnet(dir)
	if err != nil {
		t.Fatal(err)
	}
	downAtCleanup(t, dir, man)
	var first []string
	for i := range vals + 1 {
		// full0's snapshots rotate every 3 s or so (100 ms blocks, 2 kept).
		setNodeConfig(t, man.Nodes[i].Home, map[string]any{"snapshot_interval": 30})
		first = append(first, man.Nodes[i].Name)
	}
	cowboyCLI(t, "testnet", "up", "--dir", dir, "--no-pvm", "--wait", "60s", "--only", strings.Join(first, ","))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	full0, full1, full2 := man.Nodes[vals], man.Nodes[vals+1], man.Nodes[vals+2]
	setNodeConfig(t, full1.Home, map[string]any{"bootstrap": []string{}, "bootnodes": []string{waitRecord(ctx, t, man.Nodes[0].Home)}})
	setNodeConfig(t, full2.Home, map[string]any{"bootstrap": []string{}, "bootnodes": []string{waitRecord(ctx, t, full0.Home)}, "state_sync": true})

	v0 := sdk.New("http://" + man.Nodes[0].RPC)
	for {
		st, err := v0.Chain().Status(ctx)
		if err == nil && st.FinalizedHeight >= 45 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("validators never reached height 45: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cowboyCLI(t, "testnet", "up", "--dir", dir, "--no-pvm", "--wait", "60s", "--only", full1.Name+","+full2.Name)

	for _, f := range []node.TestnetNode{full1, full2} {
		c := sdk.New("http://" + f.RPC)
		for {
			vs, err1 := v0.Chain().Status(ctx)
			fs, err2 := c.Chain().Status(ctx)
			if err1 == nil && err2 == nil && fs.Height >= vs.Height && fs.Consensus != nil && (f.Name != full1.Name || fs.Consensus.Peers >= 1) {
				break
			}
			if ctx.Err() != nil {
				logb, _ := os.ReadFile(filepath.Join(f.Home, "cowboyd.log"))
				t.Fatalf("%s never reached the head: %v %v %+v\n%s", f.Name, err1, err2, fs, tailLines(string(logb), 30))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// full1 knows every validator's address (some from discovery, the
	// rest from the verified answers of the first one it reached).
	log1, _ := os.ReadFile(filepath.Join(full1.Home, "cowboyd.log"))
	if !strings.Contains(string(log1), `via=discovery`) || strings.Count(string(log1), "validator address learnt") < vals {
		t.Fatalf("full1 did not learn every validator, the first through discovery:\n%s", tailLines(string(log1), 30))
	}
	// full1's /metrics counts the validators it hears from by source.
	for {
		body := ""
		if resp, err := http.Get("http://" + full1.RPC + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
		}
		if strings.Contains(body, `cowboy_p2p_peers_by_source{role="validator",source="discovered"}`) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("full1's /metrics has no discovered validator peers:\n%s", body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	log2, _ := os.ReadFile(filepath.Join(full2.Home, "cowboyd.log"))
	for _, want := range []string{"full node found for state sync", "state restored from snapshot", "peer=65536"} {
		if !strings.Contains(string(log2), want) {
			t.Fatalf("full2's log lacks %q:\n%s", want, tailLines(string(log2), 40))
		}
	}
	if _, err := sdk.New("http://"+full2.RPC).Chain().Block(ctx, "1", false); err == nil {
		t.Fatal("the state-synced full2 serves block 1, below its snapshot")
	}
}
