package main

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"syscall"
	"time"
)

// chain is what the load generator needs from a target.
type chain interface {
	// Setup prepares the target once (funding accounts, say).
	Setup(ctx context.Context) error
	// Prepare returns about n transactions to send, per worker and, inside
	// a worker, per slot: a slot's transactions must be accepted in order
	// (one account's nonces), so a refused one is retried before the next.
	Prepare(ctx context.Context, workers, n int) ([][][]wireTx, error)
	// Submit sends one transaction through the worker's node. A refusal at
	// admission returns ok=false and its code; err is a transport failure.
	Submit(ctx context.Context, worker int, tx wireTx) (ok bool, code string, err error)
	// Final is the highest final height (for Cowboy: executed, receipts
	// readable).
	Final(ctx context.Context) (uint64, error)
	// Block returns a final block's timestamp and transaction ids.
	Block(ctx context.Context, h uint64) (time.Time, []string, error)
}

// multiNode is a chain with several nodes: worker w submits through node
// w mod Nodes().
type multiNode interface{ Nodes() int }

// rounder is a chain that reports consensus rounds: rounds beyond one per
// block are view changes (timeouts).
type rounder interface {
	Round(ctx context.Context) (round, height uint64, err error)
}

type wireTx struct {
	id   string
	body []byte
}

// refusedBackoff is how long a closed-loop worker waits after the chain
// refused a transaction for load (Cowboy's pool_full, CometBFT's full
// mempool), as a well-behaved client does, before it sends again. Without
// it the closed loop turns into a busy loop of refusals on a full pool:
// the generator and the nodes, which share the machine's cores, spend
// them on refused requests instead of committing transactions, and S
// measures the spin. Both chains get the same treatment; open-loop points
// keep their schedule.
const refusedBackoff = 20 * time.Millisecond

type loadConfig struct {
	Workers  int
	Rate     float64 // tx/s over all workers; 0 = closed loop
	Duration time.Duration
	Drain    time.Duration
}

type blockSeen struct {
	height uint64
	ts     time.Time // the block's timestamp (when it was proposed)
	seen   time.Time // when the watcher first saw it final
	txs    int
}

// watcher follows finality and records when each transaction was first
// seen final.
type watcher struct {
	mu     sync.Mutex
	finals map[string]time.Time
	blocks []blockSeen
}

func (w *watcher) run(ctx context.Context, ch chain, from uint64, log *slog.Logger) {
	next := from + 1
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h, err := ch.Final(ctx)
		if err != nil {
			continue
		}
		for ; next <= h; next++ {
			ts, ids, err := ch.Block(ctx, next)
			if err != nil {
				if ctx.Err() == nil {
					log.Warn("fetch block", "height", next, "err", err)
				}
				break
			}
			now := time.Now()
			w.mu.Lock()
			for _, id := range ids {
				if _, ok := w.finals[id]; !ok {
					w.finals[id] = now
				}
			}
			w.blocks = append(w.blocks, blockSeen{height: next, ts: ts, seen: now, txs: len(ids)})
			w.mu.Unlock()
		}
	}
}

func run(ctx context.Context, ch chain, cfg loadConfig, log *slog.Logger) (*Result, error) {
	n := int(cfg.Rate*cfg.Duration.Seconds()) + cfg.Workers
	if cfg.Rate == 0 {
		n = int(12000 * cfg.Duration.Seconds()) // closed loop: more than any target takes
	}
	queues, err := ch.Prepare(ctx, cfg.Workers, n)
	if err != nil {
		return nil, err
	}
	h0, err := ch.Final(ctx)
	if err != nil {
		return nil, err
	}
	var r0, c0 uint64
	rd, hasRounds := ch.(rounder)
	if hasRounds {
		if r0, c0, err = rd.Round(ctx); err != nil {
			return nil, err
		}
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w := &watcher{finals: map[string]time.Time{}}
	watchDone := make(chan struct{})
	go func() { defer close(watchDone); w.run(wctx, ch, h0, log) }()

	type workerOut struct {
		sent       map[string]time.Time
		submitted  int
		refused    map[string]int
		staleFirst int
		err        error
	}
	nodes := 1
	if mn, ok := ch.(multiNode); ok {
		nodes = mn.Nodes()
	}
	perNode := make([]NodeResult, nodes)
	for i := range perNode {
		perNode[i].Node = i
	}
	sctx, stopSample := context.WithCancel(ctx)
	defer stopSample()
	sampled := make(chan struct{})
	if ps, ok := ch.(poolSampler); ok {
		go func() { defer close(sampled); samplePools(sctx, ps, perNode) }()
	} else {
		close(sampled)
	}
	outs := make([]workerOut, cfg.Workers)
	cpu0 := selfCPU()
	t0 := time.Now()
	end := t0.Add(cfg.Duration)
	var wg sync.WaitGroup
	for wi := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := &outs[wi]
			o.sent, o.refused = map[string]time.Time{}, map[string]int{}
			slots := queues[wi]
			tried := make([]bool, len(slots)) // a slot's first submission is made
			var gap time.Duration
			if cfg.Rate > 0 {
				gap = time.Duration(float64(time.Second) * float64(cfg.Workers) / cfg.Rate)
			}
			next := t0.Add(time.Duration(wi) * gap / time.Duration(cfg.Workers))
			for k := 0; ; k++ {
				if gap > 0 {
					if d := time.Until(next); d > 0 {
						time.Sleep(d)
					}
					next = next.Add(gap)
				}
				now := time.Now()
				if now.After(end) || ctx.Err() != nil {
					return
				}
				s := k % len(slots)
				if len(slots[s]) == 0 {
					empty := true
					for _, q := range slots {
						empty = empty && len(q) == 0
					}
					if empty {
						return
					}
					continue
				}
				tx := slots[s][0]
				ok, code, err := ch.Submit(ctx, wi, tx)
				o.submitted++
				first := !tried[s]
				tried[s] = true
				if err != nil {
					o.refused["transport"]++
					continue
				}
				if !ok {
					o.refused[code]++
					if first && (code == "nonce_too_low" || code == "already_known" || code == "replacement_underpriced") {
						o.staleFirst++
					}
					if code == "nonce_too_low" || code == "already_known" || code == "replacement_underpriced" {
						// It, or another transaction with its nonce, is in
						// already: a wallet moves on to the next nonce.
						slots[s] = slots[s][1:]
					} else if gap == 0 {
						time.Sleep(refusedBackoff)
					}
					continue // else the same transaction again when the slot comes round
				}
				o.sent[tx.id] = now
				slots[s] = slots[s][1:]
			}
		}()
	}
	wg.Wait()
	t1 := time.Now()
	genCPU := selfCPU() - cpu0
	stopSample()
	<-sampled
	res := &Result{RefusedBy: map[string]int{}}
	sent := map[string]time.Time{}
	submitted := 0
	for wi, o := range outs {
		nr := &perNode[wi%nodes]
		nr.Senders += len(queues[wi])
		nr.Offered += o.submitted
		nr.Accepted += len(o.sent)
		nr.StaleFirst += o.staleFirst
		if nr.RefusedBy == nil {
			nr.RefusedBy = map[string]int{}
		}
		for c, k := range o.refused {
			nr.RefusedBy[c] += k
		}
		submitted += o.submitted
		for id, t := range o.sent {
			sent[id] = t
		}
		for c, k := range o.refused {
			res.RefusedBy[c] += k
			res.Refused += k
		}
	}
	res.Accepted = len(sent)
	res.OfferedTPS = float64(submitted) / t1.Sub(t0).Seconds()
	// Drain: wait until every accepted transaction is final, or the limit.
	deadline := time.Now().Add(cfg.Drain)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		w.mu.Lock()
		done := 0
		for id := range sent {
			if _, ok := w.finals[id]; ok {
				done++
			}
		}
		w.mu.Unlock()
		if done == len(sent) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	stopWatch()
	<-watchDone
	if hasRounds {
		if r1, c1, err := rd.Round(ctx); err == nil {
			res.ViewChanges = int(r1-r0) - int(c1-c0)
		}
	}

	var lat []float64
	for id, ts := range sent {
		if f, ok := w.finals[id]; ok {
			lat = append(lat, f.Sub(ts).Seconds())
		}
	}
	if len(sent) > 0 {
		res.FinalFraction = float64(len(lat)) / float64(len(sent))
	}
	res.LatencyP50, res.LatencyP90 = quantile(lat, 0.5), quantile(lat, 0.9)
	// Throughput and interval from the blocks stamped inside the window,
	// past its first quarter (the pipeline filling up is not steady state).
	sort.Slice(w.blocks, func(i, j int) bool { return w.blocks[i].height < w.blocks[j].height })
	var gaps []float64
	committed, final := 0, 0
	for _, b := range w.blocks {
		res.MaxBlockTxs = max(res.MaxBlockTxs, b.txs)
	}
	from := t0.Add(t1.Sub(t0) / 4)
	for i, b := range w.blocks {
		if !b.seen.Before(from) && !b.seen.After(t1) {
			final += b.txs
		}
		if b.ts.Before(from) || b.ts.After(t1) {
			continue
		}
		committed += b.txs
		res.Blocks++
		if i > 0 {
			gaps = append(gaps, b.ts.Sub(w.blocks[i-1].ts).Seconds())
		}
	}
	res.StampedTPS = float64(committed) / t1.Sub(from).Seconds()
	res.CommittedTPS = float64(final) / t1.Sub(from).Seconds()
	res.BlockInterval = quantile(gaps, 0.5)
	res.Nodes = perNode
	res.GeneratorCPU = genCPU.Seconds()
	for _, nr := range perNode {
		log.Info("node", "node", nr.Node, "senders", nr.Senders, "offered", nr.Offered, "accepted", nr.Accepted,
			"refused", nr.RefusedBy, "stale_first", nr.StaleFirst,
			"executable_mean", fmt.Sprintf("%.0f", nr.ExecutableMean), "executable_max", nr.ExecutableMax,
			"ordered_mean", fmt.Sprintf("%.0f", nr.OrderedMean), "ordered_max", nr.OrderedMax,
			"gapped_mean", fmt.Sprintf("%.0f", nr.GappedMean), "gapped_max", nr.GappedMax,
			"pool_refused", nr.PoolRefused, "gossip_dropped", nr.GossipDropped,
			"cpu_s", fmt.Sprintf("%.2f", nr.CPU), "exec_s", fmt.Sprintf("%.2f", nr.ExecSeconds), "commit_s", fmt.Sprintf("%.2f", nr.CommitSecs),
			"txs_executed", nr.TxsExecuted)
	}
	log.Info("point done", "generator_cpu_s", fmt.Sprintf("%.2f", res.GeneratorCPU), "offered_tps", fmt.Sprintf("%.0f", res.OfferedTPS), "accepted", res.Accepted, "refused", res.RefusedBy,
		"committed_tps", fmt.Sprintf("%.0f", res.CommittedTPS), "stamped_tps", fmt.Sprintf("%.0f", res.StampedTPS), "blocks", res.Blocks, "max_block_txs", res.MaxBlockTxs,
		"max_interval_s", fmt.Sprintf("%.2f", quantile(gaps, 1)), "view_changes", res.ViewChanges)
	return res, nil
}

// selfCPU is the CPU time this process has used (user and system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
