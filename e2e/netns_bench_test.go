package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/internal/netns"
)

// TestNetnsBenchFinality (COWBOY_NETNS_BENCH=1; scripts/bench-netns.sh,
// make bench) measures, in one run and the same namespace topology (50 ms
// RTT, 1% loss): Cowboy's submit→final latency with 4 and with 7
// validators, and CometBFT 0.38's broadcast_tx_commit latency with 4
// validators running its built-in kvstore app. Each system runs with its
// default timing (Cowboy: 1 s block interval; CometBFT: timeout_commit 1 s);
// both once more with 500 ms pacing (Cowboy's finality waits for the next
// block's certificate, docs/CONSENSUS.md §2–3, so it scales with the
// interval).
func TestNetnsBenchFinality(t *testing.T) {
	if os.Getenv("COWBOY_NETNS_BENCH") == "" {
		t.Skip("set COWBOY_NETNS_BENCH=1 (scripts/bench-netns.sh)")
	}
	const txs = 20
	var results []string

	cometbft := cometBFTBinary()
	if cometbft == "" {
		t.Fatal("no cometbft binary: set COMETBFT or run scripts/bench-netns.sh, which installs it")
	}
	cbft := map[string][]time.Duration{}
	for _, commit := range []string{"1s", "500ms"} {
		t.Run("cometbft4-"+commit, func(t *testing.T) {
			pace, _ := time.ParseDuration(commit)
			lat, jit := cometBFTCommitLatency(t, cometbft, 4, txs, commit, pace)
			cbft[commit], cbft[commit+" random"] = lat, jit
			results = append(results, fmt.Sprintf("CometBFT 0.38 kvstore, 4 validators, timeout_commit %s: broadcast_tx_commit %s; random arrival %s", commit, summary(lat), summary(jit)))
		})
	}
	cowboy := map[string][]time.Duration{}
	for _, c := range []struct {
		n        int
		interval string // genesis block interval; "" keeps the default (1 s)
	}{{4, ""}, {7, ""}, {4, "500ms"}} {
		name := fmt.Sprintf("cowboy%d", c.n)
		var flags []string
		if c.interval != "" {
			name += "-" + c.interval
			flags = []string{"--block-interval", c.interval}
		}
		t.Run(name, func(t *testing.T) {
			tn := newNSNet(t, c.n, wan, flags...)
			tn.waitHeight(2, 90*time.Second, all(c.n)...)
			key := tn.fund()
			pace, _ := time.ParseDuration(cmp.Or(c.interval, "1s"))
			lat := tn.finality(key, txs, all(c.n), 0)
			jit := tn.finality(key, txs, all(c.n), pace)
			if c.n == 4 {
				cowboy[pace.String()], cowboy[pace.String()+" random"] = lat, jit
			}
			interval := c.interval
			if interval == "" {
				interval = "default 1s"
			}
			results = append(results, fmt.Sprintf("Cowboy, %d validators, block interval %s: submit→final %s; random arrival %s; measured block interval %v",
				c.n, interval, summary(lat), summary(jit), tn.blockInterval(0, 20).Round(time.Millisecond)))
			tn.checkSameChain(all(c.n)...)
		})
	}
	for _, r := range results {
		t.Log(r)
		fmt.Println("NETNS-BENCH", r)
	}
	// Same pacing on both sides: Cowboy's block interval against
	// CometBFT's timeout_commit.
	for _, pace := range []string{"1s", "1s random", "500ms", "500ms random"} {
		a, b := cowboy[pace], cbft[pace]
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		r := fmt.Sprintf("ratio Cowboy/CometBFT, 4 validators, %s: p50 %.2f, p90 %.2f", pace,
			percentile(a, 50).Seconds()/percentile(b, 50).Seconds(), percentile(a, 90).Seconds()/percentile(b, 90).Seconds())
		t.Log(r)
		fmt.Println("NETNS-BENCH", r)
	}
}

// cometBFTBinary finds cometbft: $COMETBFT, PATH, then $GOPATH/bin.
func cometBFTBinary() string {
	if p := os.Getenv("COMETBFT"); p != "" {
		return p
	}
	if p, err := exec.LookPath("cometbft"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(string(trimNL(out)), "bin", "cometbft")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// cometBFTCommitLatency runs n CometBFT validators (kvstore) in a lab and
// times count broadcast_tx_commit calls, each sent to node k%n from its own
// namespace, as Cowboy's transfers are.
//
// It measures twice on the same network: back to back, then with each
// call delayed by a uniform random time below jitter (random arrival).
func cometBFTCommitLatency(t *testing.T, bin string, n, count int, timeoutCommit string, jitter time.Duration) (seq, random []time.Duration) {
	lab := newLab(t, n, wan)
	dir := t.TempDir()
	out, err := exec.Command(bin, "testnet", "--v", strconv.Itoa(n), "--o", dir, "--starting-ip-address", netns.HostAddr(0).String(),
		"--populate-persistent-peers").CombinedOutput()
	if err != nil {
		t.Fatalf("cometbft testnet: %v\n%s", err, out)
	}
	// CometBFT 0.38 reads timeout_commit only from config.toml.
	for i := range n {
		path := filepath.Join(dir, "node"+strconv.Itoa(i), "config", "config.toml")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`(?m)^timeout_commit = ".*"$`)
		if !re.Match(b) {
			t.Fatalf("%s has no timeout_commit", path)
		}
		if err := os.WriteFile(path, re.ReplaceAll(b, []byte(`timeout_commit = "`+timeoutCommit+`"`)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logs := make([]*syncBuf, n)
	for i := range n {
		rpc := "tcp://" + netns.HostAddr(i).String() + ":26657"
		c := lab.Command(i, bin, "start", "--home", filepath.Join(dir, "node"+strconv.Itoa(i)), "--proxy_app", "kvstore",
			"--rpc.laddr", rpc, "--log_level", "error")
		logs[i] = &syncBuf{}
		c.Stdout, c.Stderr = logs[i], logs[i]
		if _, err := lab.Start(c); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, l := range logs {
				t.Logf("cometbft node%d:\n%s", i, tailLines(l.String(), 20))
			}
		}
	})
	hc := lab.HTTPClient()
	hc.Timeout = 30 * time.Second
	url := func(i int, path string) string {
		return "http://" + netns.HostAddr(i).String() + ":26657" + path
	}
	// Wait until every node has committed block 2.
	deadline := time.Now().Add(90 * time.Second)
	for i := range n {
		for {
			var st struct {
				Result struct {
					SyncInfo struct {
						Height string `json:"latest_block_height"`
					} `json:"sync_info"`
				} `json:"result"`
			}
			if cbftGet(hc, url(i, "/status"), &st) == nil {
				if h, _ := strconv.Atoi(st.Result.SyncInfo.Height); h >= 2 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("cometbft node%d did not reach height 2", i)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	measure := func(jitter time.Duration) []time.Duration {
		var lat []time.Duration
		for k := range count {
			if jitter > 0 {
				time.Sleep(rand.N(jitter))
			}
			var r struct {
				Result struct {
					CheckTx  struct{ Code int } `json:"check_tx"`
					TxResult struct{ Code int } `json:"tx_result"`
					Height   string             `json:"height"`
				} `json:"result"`
				Error *struct{ Message, Data string } `json:"error"`
			}
			tx := fmt.Sprintf(`"bench%d-%d=v%d"`, time.Now().UnixNano(), k, k)
			start := time.Now()
			err := cbftGet(hc, url(k%n, "/broadcast_tx_commit?tx="+neturl.QueryEscape(tx)), &r)
			d := time.Since(start)
			if err != nil || r.Error != nil || r.Result.CheckTx.Code != 0 || r.Result.TxResult.Code != 0 || r.Result.Height == "" || r.Result.Height == "0" {
				t.Fatalf("tx %d: err %v, reply %+v", k, err, r)
			}
			lat = append(lat, d)
		}
		return lat
	}
	return measure(0), measure(jitter)
}

func cbftGet(hc *http.Client, url string, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
