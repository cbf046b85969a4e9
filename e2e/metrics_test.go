package e2e

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// nodeSeries are the series every cowboyd serves on /metrics.
var nodeSeries = []string{
	"cowboy_consensus_height", "cowboy_consensus_finalized_height", "cowboy_consensus_committed_height",
	"cowboy_consensus_round", "cowboy_consensus_validators", "cowboy_consensus_epoch",
	"cowboy_p2p_peers", "cowboy_p2p_message_send_bytes_total", "cowboy_p2p_message_receive_bytes_total",
	"cowboy_mempool_size", "cowboy_mempool_gossip_batches_dropped_total", "cowboy_sync_target_height", "cowboy_sync_behind_blocks", "cowboy_sync_syncing",
	"cowboy_state_block_execution_seconds", "cowboy_state_commit_seconds",
	"cowboy_state_txs_executed_total", "cowboy_state_blocks_committed_total",
}

// scrape fetches url through hc (nil: http.DefaultClient) and returns each family's value: a gauge's or
// counter's value, a histogram's sample count.
func scrape(t testing.TB, hc *http.Client, url string) map[string]float64 {
	t.Helper()
	if hc == nil {
		hc = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.Metric {
			if len(m.Label) == 0 {
				continue
			}
			var ls []string
			for _, l := range m.Label {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(ls)
			if v := metricValue(m); v != nil {
				out[name+"{"+strings.Join(ls, ",")+"}"] = *v
			}
		}
		if len(f.Metric) != 1 {
			continue
		}
		if v := metricValue(f.Metric[0]); v != nil {
			out[name] = *v
		}
	}
	return out
}

// metricValue is a gauge's or counter's value, a histogram's sample count.
func metricValue(m *dto.Metric) *float64 {
	var v float64
	switch {
	case m.Gauge != nil:
		v = m.Gauge.GetValue()
	case m.Counter != nil:
		v = m.Counter.GetValue()
	case m.Histogram != nil:
		v = float64(m.Histogram.GetSampleCount())
	default:
		return nil
	}
	return &v
}

// TestMetricsDevnet scrapes a real devnet process twice, on the API
// listener and on --metrics, around a transfer and a transaction parked in
// the mempool behind a nonce gap: every series is present, and the heights,
// timings, executed transactions and mempool size move.
func TestMetricsDevnet(t *testing.T) {
	home := t.TempDir()
	port, mport := freePort(t), freePort(t)
	d := startNodeArgs(t, home, port, 200*time.Millisecond, "--metrics", fmt.Sprintf("127.0.0.1:%d", mport))
	c := d.client()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	first := scrape(t, nil, d.url()+"/metrics")
	for _, name := range nodeSeries {
		if _, ok := first[name]; !ok {
			t.Errorf("series %s missing from /metrics", name)
		}
	}
	if first["cowboy_mempool_size"] != 0 {
		t.Fatalf("mempool_size %v before any transaction", first["cowboy_mempool_size"])
	}

	key, _ := crypto.GenerateKey()
	alice := types.PubkeyToAddress(key.PublicKey)
	h, err := c.Chain().Faucet(ctx, alice, big.NewInt(1e18))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chain().WaitForReceipt(ctx, h); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Account(key).Transfer(ctx, types.Address{0xb0}, big.NewInt(5), sdk.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chain().WaitForReceipt(ctx, tx.Hash()); err != nil {
		t.Fatal(err)
	}
	gap := tx.Nonce() + 2 // nonce+1 never arrives: this one waits in the pool
	if _, err := c.Account(key).Transfer(ctx, types.Address{0xb0}, big.NewInt(5), sdk.TxOptions{Nonce: &gap}); err != nil {
		t.Fatal(err)
	}
	st, err := c.Chain().Status(ctx)
	if err != nil {
		t.Fatal(err)
	}

	second := scrape(t, nil, fmt.Sprintf("http://127.0.0.1:%d/metrics", mport))
	if second["cowboy_consensus_height"] < float64(st.Height) || second["cowboy_consensus_height"] <= first["cowboy_consensus_height"] {
		t.Errorf("height %v → %v (status says %d)", first["cowboy_consensus_height"], second["cowboy_consensus_height"], st.Height)
	}
	for _, name := range []string{"cowboy_consensus_finalized_height", "cowboy_consensus_committed_height", "cowboy_sync_target_height",
		"cowboy_state_block_execution_seconds", "cowboy_state_commit_seconds", "cowboy_state_blocks_committed_total"} {
		if second[name] <= first[name] {
			t.Errorf("%s did not move: %v → %v", name, first[name], second[name])
		}
	}
	// The faucet grant and the transfer.
	if got := second["cowboy_state_txs_executed_total"] - first["cowboy_state_txs_executed_total"]; got < 2 {
		t.Errorf("txs_executed_total grew by %v, want ≥ 2", got)
	}
	if second["cowboy_mempool_size"] != 1 {
		t.Errorf("mempool_size %v with one gapped transaction pending", second["cowboy_mempool_size"])
	}
	if g, e := second[`cowboy_mempool_txs{state="gapped"}`], second[`cowboy_mempool_txs{state="executable"}`]; g != 1 || e != 0 {
		t.Errorf("mempool_txs gapped %v executable %v, want 1 and 0", g, e)
	}
	// A nonce already used is refused at admission, and counted by its code.
	stale := tx.Nonce()
	if _, err := c.Account(key).Transfer(ctx, types.Address{0xb1}, big.NewInt(6), sdk.TxOptions{Nonce: &stale}); err == nil {
		t.Fatal("a transfer reusing an included nonce was admitted")
	}
	third := scrape(t, nil, d.url()+"/metrics")
	if k := `cowboy_mempool_refused_total{code="nonce_too_low",source="client"}`; third[k] != 1 {
		t.Errorf("%s = %v after one stale nonce, want 1", k, third[k])
	}
	if second["cowboy_consensus_validators"] != 1 || second["cowboy_sync_syncing"] != 0 {
		t.Errorf("devnet: validators %v syncing %v", second["cowboy_consensus_validators"], second["cowboy_sync_syncing"])
	}
}
