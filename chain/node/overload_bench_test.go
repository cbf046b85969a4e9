package node_test

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/mempool"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// BenchmarkNetwork4Overload is issue 14's saturation sweep in one process:
// four validators on loopback with the testnet's 1 s block interval, a
// closed-loop point (every submitter sends as soon as the pool takes its
// last transaction; its committed rate is S), then open-loop points
// offering 1×, 2× and 4× S. For each point it logs the committed
// transfers per second on validator 3, the median block interval and the
// process CPU time per committed transfer (all four nodes and the
// generator), and reports the 4× point as a fraction of S ("x4/sat").
// CHAIN_BENCH_DURATION sets the seconds per point (default 6). The sweep
// takes minutes, so it runs only with CHAIN_BENCH_SWEEP=1
// (scripts/bench-chain.sh sets it) and -benchtime 1x: one iteration is the
// whole sweep.
func BenchmarkNetwork4Overload(b *testing.B) {
	if os.Getenv("CHAIN_BENCH_SWEEP") == "" {
		b.Skip("set CHAIN_BENCH_SWEEP=1 (scripts/bench-chain.sh): a sweep takes minutes")
	}
	secs := 6
	if s, err := strconv.Atoi(os.Getenv("CHAIN_BENCH_DURATION")); err == nil && s > 0 {
		secs = s
	}
	point := time.Duration(secs) * time.Second
	for range b.N {
		// The view timeout of a `cowboy testnet` (20 ticks of 100 ms).
		nw := startNetworkTimeout(b, node.TestnetOptions{Validators: 4}, time.Second, 40)
		nw.waitHeight(b, 0, 2, 60*time.Second)
		g := newLoadGen(b, nw, 512)
		sat := g.run(b, "sat", 0, point)
		var x4 loadPoint
		for _, m := range []int{1, 2, 4} {
			p := g.run(b, "x"+strconv.Itoa(m), float64(m)*sat.committed, point)
			if m == 4 {
				x4 = p
			}
		}
		b.ReportMetric(sat.committed, "sat-tx/s")
		b.ReportMetric(x4.committed, "x4-tx/s")
		b.ReportMetric(x4.committed/sat.committed, "x4/sat")
		b.ReportMetric(sat.cpuPerTx, "sat-cpu-µs/tx")
		nw.stop()
	}
}

// loadGen submits transfers to the four validators (one sender's nonces
// always through the same node), each sender's next transaction signed
// once and resent after a refusal, so a refusal never leaves a gap.
type loadGen struct {
	nw      *network
	chainID uint64
	senders []*genSender

	mu      sync.Mutex
	refused map[string]int // by error code, this point
}

type genSender struct {
	mu    sync.Mutex
	key   *ecdsa.PrivateKey
	node  *node.Node
	nonce uint64
	next  []byte // signed, not yet admitted
}

type loadPoint struct {
	committed float64 // transfers per second on validator 3
	cpuPerTx  float64 // process CPU µs per committed transfer
}

func newLoadGen(tb testing.TB, nw *network, n int) *loadGen {
	tb.Helper()
	n0 := nw.nodes[0]
	g := &loadGen{nw: nw, chainID: n0.Genesis().ChainID}
	var last types.Hash
	for i := range n {
		key, _ := crypto.GenerateKey()
		for {
			h, err := n0.Faucet(types.PubkeyToAddress(key.PublicKey), sdk.MustCBY("1000"))
			if errors.Is(err, mempool.ErrPoolFull) || errors.Is(err, mempool.ErrAccountFull) {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			if err != nil {
				tb.Fatal(err)
			}
			last = h
			break
		}
		g.senders = append(g.senders, &genSender{key: key, node: nw.nodes[i%len(nw.nodes)]})
	}
	waitTx(tb, nw.nodes[3], last)
	return g
}

// submit offers the sender's next transfer once; it reports whether the
// node admitted it.
func (g *loadGen) submit(tb testing.TB, s *genSender) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == nil {
		to := types.Address{0xbe, byte(s.nonce), byte(s.nonce >> 8)}
		tx, _ := types.NewTx(types.TxData{ChainID: g.chainID, Nonce: s.nonce, To: &to, Value: big.NewInt(1),
			CyclesLimit: fees.TransferCycles, MaxFeePerCycle: 1e11, MaxFeePerCell: 1e11, TipPerCycle: 1})
		signed, err := types.SignTx(tx, s.key)
		if err != nil {
			tb.Error(err)
			return false
		}
		s.next = signed.Encode()
	}
	if _, err := s.node.SubmitTx(s.next); err != nil && !errors.Is(err, mempool.ErrAlreadyKnown) {
		code := err.Error()
		var te *types.Error
		if errors.As(err, &te) {
			code = te.Code
		}
		g.mu.Lock()
		g.refused[code]++
		g.mu.Unlock()
		return false
	}
	s.next = nil
	s.nonce++
	return true
}

// run offers load for d: closed loop if rate is 0, else open loop at rate
// attempts per second. The first quarter of d is warm-up; the rest is
// measured on validator 3.
func (g *loadGen) run(tb testing.TB, name string, rate float64, d time.Duration) loadPoint {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var offered, admitted atomic.Int64
	g.mu.Lock()
	g.refused = map[string]int{}
	g.mu.Unlock()
	var wg sync.WaitGroup
	if rate == 0 {
		for w := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; ctx.Err() == nil; i += 64 {
					offered.Add(1)
					if g.submit(tb, g.senders[i%len(g.senders)]) {
						admitted.Add(1)
					} else {
						time.Sleep(2 * time.Millisecond)
					}
				}
			}()
		}
	} else {
		const tick = 10 * time.Millisecond
		jobs := make(chan *genSender, 1<<14)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := range jobs {
					offered.Add(1)
					if g.submit(tb, s) {
						admitted.Add(1)
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(jobs)
			t := time.NewTicker(tick)
			defer t.Stop()
			start, sent, i := time.Now(), 0, 0
			for {
				select {
				case <-ctx.Done():
					return
				case now := <-t.C:
					due := int(rate * now.Sub(start).Seconds())
					for ; sent < due; sent++ {
						select {
						case jobs <- g.senders[i%len(g.senders)]:
						default: // the submitters are behind: this attempt is dropped, as a client timing out
						}
						i++
					}
				}
			}
		}()
	}
	time.Sleep(d / 4)
	n3 := g.nw.nodes[3]
	h0, _ := n3.Store().Head()
	c0, _ := n3.Consensus()
	t0, cpu0 := time.Now(), cpuTime()
	<-ctx.Done()
	h1, _ := n3.Store().Head()
	c1, _ := n3.Consensus()
	t1, cpu1 := time.Now(), cpuTime()
	pending := g.nw.nodes[0].Pool().Len()
	wg.Wait()
	txs, gaps := 0, []time.Duration{}
	prev := h0.Timestamp
	_ = n3.Store().View(func(v *store.View) error {
		for h := h0.Height + 1; h <= h1.Height; h++ {
			blk, err := v.Block(h)
			if err != nil {
				return err
			}
			txs += len(blk.Txs)
			gaps = append(gaps, time.Duration(blk.Header.Timestamp-prev)*time.Millisecond)
			prev = blk.Header.Timestamp
		}
		return nil
	})
	span := t1.Sub(t0).Seconds()
	p := loadPoint{committed: float64(txs) / span}
	if txs > 0 {
		p.cpuPerTx = float64((cpu1 - cpu0).Microseconds()) / float64(txs)
	}
	tb.Logf("%-4s offered %6.0f/s admitted %6.0f/s committed %6.0f/s  blocks %d rounds %d  interval p50 %v max %v  cpu %.0f µs/tx  pool %d",
		name, float64(offered.Load())/d.Seconds(), float64(admitted.Load())/d.Seconds(), p.committed,
		h1.Height-h0.Height, c1.Round-c0.Round, median(gaps), maxDur(gaps), p.cpuPerTx, pending)
	g.mu.Lock()
	tb.Logf("%-4s refused: %v", name, g.refused)
	g.mu.Unlock()
	// Let the backlog drain so that the next point starts from a quiet pool.
	drain := time.Now().Add(30 * time.Second)
	for g.nw.nodes[0].Pool().Len() > 0 && time.Now().Before(drain) {
		time.Sleep(100 * time.Millisecond)
	}
	return p
}

// cpuTime is the user+system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

func maxDur(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
