package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/apitypes"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/internal/netns"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// The network-namespace scenarios run each validator in a namespace of its
// own (internal/netns): addresses 10.250.0.10+i in 10.250.0.0/24, a
// one-way delay of 25 ms on every packet (50 ms RTT) and 1% loss, no route
// out of the lab. They need root; as another user they skip.

// wan is the link of every scenario: 50 ms RTT, 1% loss per packet.
var wan = netns.Link{Delay: 25 * time.Millisecond, Loss: 0.01}

// nsnet is a testnet whose validators run in a netns lab.
type nsnet struct {
	t    *testing.T
	lab  *netns.Lab
	man  *node.Testnet
	hc   *http.Client
	logs []*syncBuf // each validator's output, shown when the test fails
}

// syncBuf is a log buffer written by a process and read by the test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// newLab builds a lab of n hosts, removed when the test ends (pass, fail
// or panic: t.Cleanup runs in every case; a killed test process leaves
// namespaces that the next run's Sweep removes).
func newLab(t *testing.T, n int, link netns.Link) *netns.Lab {
	t.Helper()
	if err := netns.Sweep(); err != nil {
		t.Logf("sweep leftovers: %v", err)
	}
	lab, err := netns.New(n, link, nil)
	if lab != nil {
		t.Cleanup(func() {
			if err := lab.Close(); err != nil {
				t.Errorf("remove the lab: %v", err)
			}
		})
	}
	if errors.Is(err, netns.ErrUnsupported) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// newNSNet writes an n-validator testnet with `cowboy testnet init --hosts`
// (the genesis' default timing unless extra init flags say otherwise) and
// starts every validator in its namespace.
func newNSNet(t *testing.T, n int, link netns.Link, initFlags ...string) *nsnet {
	t.Helper()
	tn := newNSNetFull(t, n, 0, link, initFlags...)
	for i := range n {
		tn.start(i)
	}
	return tn
}

// newNSNetFull writes a testnet of vals validators and fulls full nodes,
// each in a namespace of its own, and starts none of them.
func newNSNetFull(t *testing.T, vals, fulls int, link netns.Link, initFlags ...string) *nsnet {
	t.Helper()
	n := vals + fulls
	lab := newLab(t, n, link)
	var hosts []string
	for i := range n {
		hosts = append(hosts, netns.HostAddr(i).String())
	}
	dir := t.TempDir()
	args := append([]string{"testnet", "init", "--dir", dir, "--validators", strconv.Itoa(vals), "--full-nodes", strconv.Itoa(fulls),
		"--hosts", strings.Join(hosts, ","), "--rpc-port", "8645", "--p2p-port", "26656"}, initFlags...)
	if out, err := exec.Command(filepath.Join(binDir, "cowboy"), args...).CombinedOutput(); err != nil {
		t.Fatalf("testnet init: %v\n%s", err, out)
	}
	man, err := node.LoadTestnet(dir)
	if err != nil {
		t.Fatal(err)
	}
	tn := &nsnet{t: t, lab: lab, man: man, hc: lab.HTTPClient(), logs: make([]*syncBuf, n)}
	t.Cleanup(func() {
		if t.Failed() {
			for i, l := range tn.logs {
				if l != nil {
					t.Logf("node%d log:\n%s", i, tailLines(l.String(), 25))
				}
			}
		}
	})
	return tn
}

func (tn *nsnet) start(i int) {
	tn.t.Helper()
	c := tn.lab.Command(i, filepath.Join(binDir, "cowboyd"), "--home", tn.man.Nodes[i].Home, "--no-pvm", "--log-level", "info")
	lg := &syncBuf{}
	c.Stdout, c.Stderr = lg, lg
	if _, err := tn.lab.Start(c); err != nil {
		tn.t.Fatal(err)
	}
	tn.logs[i] = lg
}

func (tn *nsnet) client(i int) *sdk.Client {
	return sdk.New("http://" + tn.man.Nodes[i].RPC).WithHTTPClient(&http.Client{Transport: tn.hc.Transport, Timeout: 10 * time.Second})
}

func (tn *nsnet) status(i int) *apitypes.Status {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := tn.client(i).Chain().Status(ctx)
	if err != nil {
		return nil
	}
	return st
}

// height is node i's executed height, -1 if it does not answer.
func (tn *nsnet) height(i int) int64 {
	if st := tn.status(i); st != nil {
		return int64(st.Height)
	}
	return -1
}

func (tn *nsnet) heights(nodes []int) []int64 {
	var hs []int64
	for _, i := range nodes {
		hs = append(hs, tn.height(i))
	}
	return hs
}

func (tn *nsnet) waitHeight(h int64, timeout time.Duration, nodes ...int) {
	tn.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		hs := tn.heights(nodes)
		if slices.Min(hs) >= h {
			return
		}
		if time.Now().After(deadline) {
			tn.t.Fatalf("nodes %v did not reach height %d within %v (at %v)", nodes, h, timeout, hs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkSameChain compares the block hash of every height up to the lowest
// head across nodes.
func (tn *nsnet) checkSameChain(nodes ...int) int64 {
	tn.t.Helper()
	top := slices.Min(tn.heights(nodes))
	ctx := context.Background()
	for h := int64(1); h <= top; h++ {
		var want types.Hash
		for k, i := range nodes {
			b, err := tn.client(i).Chain().Block(ctx, strconv.FormatInt(h, 10), false)
			if err != nil {
				tn.t.Fatalf("node%d block %d: %v", i, h, err)
			}
			if k == 0 {
				want = b.Hash
			} else if b.Hash != want {
				tn.t.Fatalf("fork at height %d: node%d has %s, node%d has %s", h, nodes[0], want, i, b.Hash)
			}
		}
	}
	return top
}

// fund gives a new account 1,000 CBY from node0's faucet.
func (tn *nsnet) fund() *ecdsa.PrivateKey {
	tn.t.Helper()
	key, _ := crypto.GenerateKey()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := tn.client(0).Chain().Faucet(ctx, types.PubkeyToAddress(key.PublicKey), new(big.Int).Mul(big.NewInt(1000), big.NewInt(1e18)))
	if err != nil {
		tn.t.Fatal(err)
	}
	if _, err := tn.client(0).Chain().WaitForReceipt(ctx, h); err != nil {
		tn.t.Fatal(err)
	}
	return key
}

// finality submits count transfers one after another, each through node
// i%n, and returns how long each took from submission until its receipt
// (written only when its block is final and executed) was served by that
// node, polled every 10 ms. With jitter > 0 each submission first waits a
// uniform random time below jitter, so arrivals fall anywhere in the block
// cycle instead of right after the previous block.
func (tn *nsnet) finality(key *ecdsa.PrivateKey, count int, nodes []int, jitter time.Duration) []time.Duration {
	tn.t.Helper()
	var out []time.Duration
	for k := range count {
		c := tn.client(nodes[k%len(nodes)])
		if jitter > 0 {
			time.Sleep(rand.N(jitter))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		start := time.Now()
		tx, err := c.Account(key).Transfer(ctx, types.Address{0xb0, 0xb0}, big.NewInt(int64(k+1)), sdk.TxOptions{})
		if err != nil {
			cancel()
			tn.t.Fatalf("transfer %d: %v", k, err)
		}
		for {
			r, err := c.Chain().Tx(ctx, tx.Hash())
			if err == nil && r.Status == apitypes.TxIncluded {
				break
			}
			if ctx.Err() != nil {
				cancel()
				tn.t.Fatalf("transfer %d (%s) not final within 30 s", k, tx.Hash())
			}
			time.Sleep(10 * time.Millisecond)
		}
		out = append(out, time.Since(start))
		cancel()
	}
	return out
}

// blockInterval is the mean time between the last n blocks' timestamps
// on node i.
func (tn *nsnet) blockInterval(i, n int) time.Duration {
	tn.t.Helper()
	ctx := context.Background()
	top, err := tn.client(i).Chain().Block(ctx, "latest", false)
	if err != nil {
		tn.t.Fatal(err)
	}
	from := max(int64(top.Header.Height)-int64(n), 1)
	first, err := tn.client(i).Chain().Block(ctx, strconv.FormatInt(from, 10), false)
	if err != nil {
		tn.t.Fatal(err)
	}
	blocks := int64(top.Header.Height) - from
	if blocks <= 0 {
		return 0
	}
	return time.Duration(int64(top.Header.Timestamp-first.Header.Timestamp)*int64(time.Millisecond)) / time.Duration(blocks)
}

// percentile returns the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	k := (len(s)*p + 99) / 100
	return s[max(k-1, 0)]
}

func summary(ds []time.Duration) string {
	return fmt.Sprintf("n=%d p50=%v p90=%v max=%v", len(ds), percentile(ds, 50).Round(time.Millisecond),
		percentile(ds, 90).Round(time.Millisecond), slices.Max(ds).Round(time.Millisecond))
}

func all(n int) []int {
	var xs []int
	for i := range n {
		xs = append(xs, i)
	}
	return xs
}

// TestNetnsFourValidators is the short namespace scenario for `make test`:
// four validators at 50 ms RTT and 1% loss finalize transfers sent through
// each of them, agree on every block, and their /metrics show consensus
// moving (round, peers, p2p traffic, heights).
func TestNetnsFourValidators(t *testing.T) {
	tn := newNSNet(t, 4, wan)
	nodes := all(4)
	tn.waitHeight(2, 60*time.Second, nodes...)
	metricsURL := "http://" + tn.man.Nodes[1].RPC + "/metrics"
	first := scrape(t, tn.hc, metricsURL)

	key := tn.fund()
	lat := tn.finality(key, 8, nodes, 0)
	t.Logf("4 validators, 50 ms RTT, 1%% loss: finality %s; block interval %v", summary(lat), tn.blockInterval(0, 20))
	for k, d := range lat {
		if d > 10*time.Second {
			t.Errorf("transfer %d took %v to finalize", k, d)
		}
	}
	tn.checkSameChain(nodes...)

	second := scrape(t, tn.hc, metricsURL)
	for _, name := range nodeSeries {
		if _, ok := second[name]; !ok {
			t.Errorf("series %s missing", name)
		}
	}
	for _, name := range []string{"cowboy_consensus_height", "cowboy_consensus_finalized_height", "cowboy_consensus_round",
		"cowboy_p2p_message_send_bytes_total", "cowboy_p2p_message_receive_bytes_total", "cowboy_state_txs_executed_total"} {
		if second[name] <= first[name] {
			t.Errorf("%s did not move: %v → %v", name, first[name], second[name])
		}
	}
	if second["cowboy_p2p_peers"] != 3 || second["cowboy_consensus_validators"] != 4 {
		t.Errorf("peers %v validators %v, want 3 and 4", second["cowboy_p2p_peers"], second["cowboy_consensus_validators"])
	}
}

func soak(t *testing.T) {
	if os.Getenv("COWBOY_SOAK") == "" {
		t.Skip("set COWBOY_SOAK=1 (make soak)")
	}
}

// TestNetnsSoakSevenValidators: seven validators at 50 ms RTT and 1% loss.
func TestNetnsSoakSevenValidators(t *testing.T) {
	soak(t)
	tn := newNSNet(t, 7, wan)
	nodes := all(7)
	tn.waitHeight(2, 90*time.Second, nodes...)
	key := tn.fund()
	lat := tn.finality(key, 14, nodes, 0)
	t.Logf("7 validators, 50 ms RTT, 1%% loss: finality %s; block interval %v", summary(lat), tn.blockInterval(0, 20))
	tn.checkSameChain(nodes...)
}

// TestNetnsPartitions (make test, ~30 s): one validator cut off (the chain goes on; healed,
// it catches up), then two of four cut off from the other two (nothing is
// finalized anywhere, no fork; healed, the chain resumes, a transfer sent
// during the halt is final, and every node holds the same block at every
// height).
func TestNetnsPartitions(t *testing.T) {
	tn := newNSNet(t, 4, wan)
	nodes := all(4)
	tn.waitHeight(2, 60*time.Second, nodes...)
	key := tn.fund()

	// One validator isolated: three of four still make a quorum.
	tn.lab.Isolate(3)
	h := slices.Max(tn.heights([]int{0, 1, 2}))
	tn.waitHeight(h+5, 60*time.Second, 0, 1, 2)
	tn.finality(key, 2, []int{0, 1, 2}, 0)
	behind := tn.height(3)
	tn.lab.Heal()
	target := slices.Max(tn.heights([]int{0, 1, 2}))
	start := time.Now()
	tn.waitHeight(target, 90*time.Second, 3)
	t.Logf("isolated node3 at %d, network at %d: caught up %v after heal", behind, target, time.Since(start).Round(time.Millisecond))
	tn.checkSameChain(nodes...)

	// Two against two: no side has a quorum (3 of 4).
	tn.lab.Partition([]int{0, 1}, []int{2, 3})
	time.Sleep(3 * time.Second) // rounds in flight settle
	halted := tn.heights(nodes)
	finals := make([]uint64, 4)
	for i := range nodes {
		if st := tn.status(i); st != nil {
			finals[i] = st.FinalizedHeight
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	pending, err := tn.client(0).Account(key).Transfer(ctx, types.Address{0xca, 0x70}, big.NewInt(7), sdk.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second)
	for i := range nodes {
		st := tn.status(i)
		if st == nil {
			t.Fatalf("node%d does not answer during the partition", i)
		}
		if int64(st.Height) != halted[i] || st.FinalizedHeight != finals[i] {
			t.Fatalf("node%d finalized during a 2/2 partition: height %d → %d, finalized %d → %d", i, halted[i], st.Height, finals[i], st.FinalizedHeight)
		}
	}
	tn.checkSameChain(nodes...)
	tn.lab.Heal()
	start = time.Now()
	tn.waitHeight(slices.Max(halted)+3, 90*time.Second, nodes...)
	t.Logf("2/2 partition halted at %v; resumed %v after heal", halted, time.Since(start).Round(time.Millisecond))
	for _, i := range nodes {
		if _, err := tn.client(i).Chain().WaitForReceipt(ctx, pending.Hash()); err != nil {
			t.Fatalf("transfer sent during the halt, on node%d: %v", i, err)
		}
	}
	top := tn.checkSameChain(nodes...)
	t.Logf("no fork: %d heights identical on all 4 nodes", top)
}
