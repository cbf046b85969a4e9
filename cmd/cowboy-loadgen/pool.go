package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// NodeResult is one node's share of a point: what the generator offered
// through it and, for a chain that exports them (Cowboy's /metrics), what
// its pool held while the point ran and what admission refused.
type NodeResult struct {
	Node      int            `json:"node"`
	Senders   int            `json:"senders"`    // accounts submitting through this node (each through one node only)
	Offered   int            `json:"offered"`    // submissions, resubmissions included
	Accepted  int            `json:"accepted"`   // distinct transactions admitted
	RefusedBy map[string]int `json:"refused_by"` // as the generator saw them
	// StaleFirst counts senders whose first transaction of the point was
	// refused nonce_too_low, already_known or replacement_underpriced:
	// the nonce the point started from was already used.
	StaleFirst int `json:"stale_first"`
	// Pool samples (every sampleEvery while the point runs).
	Samples        int     `json:"samples,omitempty"`
	ExecutableMean float64 `json:"executable_mean,omitempty"`
	ExecutableMax  float64 `json:"executable_max,omitempty"`
	OrderedMean    float64 `json:"ordered_mean,omitempty"` // in blocks proposed or final, not yet executed
	OrderedMax     float64 `json:"ordered_max,omitempty"`
	GappedMean     float64 `json:"gapped_mean,omitempty"`
	GappedMax      float64 `json:"gapped_max,omitempty"`
	// Admission refusals counted by the node over the point, by
	// "code/source" (client or relay), and gossip batches it dropped.
	PoolRefused   map[string]float64 `json:"pool_refused,omitempty"`
	GossipDropped float64            `json:"gossip_dropped,omitempty"`
	// Where the node's CPU went over the point, in seconds: all of it
	// (process_cpu_seconds_total), and the wall time spent executing and
	// committing blocks (mostly CPU); the rest is admission, HTTP,
	// gossip and consensus.
	CPU         float64 `json:"cpu_s,omitempty"`
	ExecSeconds float64 `json:"exec_s,omitempty"`
	CommitSecs  float64 `json:"commit_s,omitempty"`
	TxsExecuted float64 `json:"txs_executed,omitempty"`
}

// poolSampler is a chain whose nodes export their pool's content.
type poolSampler interface {
	// Scrape returns node i's series that describe its pool, by series
	// name with labels (as the text exposition format writes them).
	Scrape(ctx context.Context, node int) (map[string]float64, error)
	Nodes() int
}

const sampleEvery = 250 * time.Millisecond

// samplePools scrapes every node each sampleEvery until ctx ends and
// folds the samples into res; the refusal counters are differenced
// between the first and the last scrape.
func samplePools(ctx context.Context, ps poolSampler, res []NodeResult) {
	var wg sync.WaitGroup
	for i := range ps.Nodes() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &res[i]
			var first, last map[string]float64
			t := time.NewTicker(sampleEvery)
			defer t.Stop()
			for {
				m, err := ps.Scrape(ctx, i)
				if err == nil {
					if first == nil {
						first = m
					}
					last = m
					e, g := m[`cowboy_mempool_txs{state="executable"}`], m[`cowboy_mempool_txs{state="gapped"}`]
					r.Samples++
					r.ExecutableMean += e
					r.GappedMean += g
					o := m[`cowboy_mempool_txs{state="ordered"}`]
					r.OrderedMean += o
					r.OrderedMax = max(r.OrderedMax, o)
					r.ExecutableMax, r.GappedMax = max(r.ExecutableMax, e), max(r.GappedMax, g)
				}
				select {
				case <-ctx.Done():
					if r.Samples > 0 {
						r.ExecutableMean /= float64(r.Samples)
						r.GappedMean /= float64(r.Samples)
						r.OrderedMean /= float64(r.Samples)
					}
					r.PoolRefused = map[string]float64{}
					for k, v := range last {
						if code, src, ok := refusalKey(k); ok && v-first[k] > 0 {
							r.PoolRefused[code+"/"+src] = v - first[k]
						}
					}
					diff := func(k string) float64 { return last[k] - first[k] }
					r.GossipDropped = diff("cowboy_mempool_gossip_batches_dropped_total")
					r.CPU = diff("process_cpu_seconds_total")
					r.ExecSeconds = diff("cowboy_state_block_execution_seconds_sum")
					r.CommitSecs = diff("cowboy_state_commit_seconds_sum")
					r.TxsExecuted = diff("cowboy_state_txs_executed_total")
					return
				case <-t.C:
				}
			}
		}()
	}
	wg.Wait()
}

// refusalKey parses cowboy_mempool_refused_total{code="…",source="…"}.
func refusalKey(k string) (code, src string, ok bool) {
	rest, ok := strings.CutPrefix(k, "cowboy_mempool_refused_total{")
	if !ok {
		return "", "", false
	}
	for _, kv := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
		name, v, _ := strings.Cut(kv, "=")
		v = strings.Trim(v, `"`)
		switch name {
		case "code":
			code = v
		case "source":
			src = v
		}
	}
	return code, src, code != ""
}

// scrapeMempool reads the cowboy_mempool_* series of one /metrics page,
// and the series that say where the node's CPU went.
func scrapeMempool(ctx context.Context, hc *http.Client, url string) (map[string]float64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "cowboy_mempool_") && !strings.HasPrefix(line, "cowboy_state_") && !strings.HasPrefix(line, "process_cpu_seconds_total") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}
