package node_test

import (
	"context"
	"crypto/ecdsa"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/fees"
	"github.com/cowboy-foundation/cowboy/chain/node"
	"github.com/cowboy-foundation/cowboy/chain/node/nodetest"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
	"github.com/cowboy-foundation/cowboy/sdk"
)

// network is n validators in one process, each with its own home, bbolt
// files, WAL and QUIC endpoint on loopback, real BLS.
type network struct {
	testnet *node.Testnet
	nodes   []*node.Node
	cancel  context.CancelFunc
	done    chan error
}

func freeUDP(tb testing.TB, n int) []string {
	tb.Helper()
	var out []string
	var conns []net.PacketConn
	for range n {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		conns = append(conns, c)
		out = append(out, c.LocalAddr().String())
	}
	for _, c := range conns {
		c.Close()
	}
	return out
}

func startNetwork(tb testing.TB, n int, interval time.Duration) *network {
	tb.Helper()
	return startNetworkOpts(tb, node.TestnetOptions{Validators: n}, interval)
}

func startNetworkOpts(tb testing.TB, o node.TestnetOptions, interval time.Duration) *network {
	tb.Helper()
	return startNetworkTimeout(tb, o, interval, 20)
}

// startNetworkTimeout starts the network with a view timeout of
// timeoutTicks 50 ms ticks.
func startNetworkTimeout(tb testing.TB, o node.TestnetOptions, interval time.Duration, timeoutTicks int) *network {
	tb.Helper()
	o.Dir = tb.TempDir()
	n := o.Validators
	t, err := node.InitTestnet(o)
	if err != nil {
		tb.Fatal(err)
	}
	addrs := freeUDP(tb, n)
	boot := map[types.Address]string{}
	for i, nd := range t.Nodes {
		boot[nd.Address] = addrs[i]
	}
	nw := &network{done: make(chan error, n), testnet: t}
	ctx, cancel := context.WithCancel(context.Background())
	nw.cancel = cancel
	for i, nd := range t.Nodes {
		key, err := bls.LoadKeyFile(node.ConsensusKeyPath(nd.Home))
		if err != nil {
			tb.Fatal(err)
		}
		var w io.Writer = io.Discard
		if os.Getenv("COWBOY_NODE_TEST_LOG") != "" {
			w = os.Stderr
		}
		nn, err := node.Open(node.Config{
			Home: nd.Home, BlockInterval: interval, Logger: slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", i),
			Network: &node.Network{Key: key, Listen: addrs[i], Bootstrap: boot, Tick: 50 * time.Millisecond, TimeoutTicks: timeoutTicks},
		})
		if err != nil {
			tb.Fatal(err)
		}
		nw.nodes = append(nw.nodes, nn)
		go func() { nw.done <- nn.Run(ctx) }()
	}
	tb.Cleanup(nw.stop)
	return nw
}

func (nw *network) stop() {
	if nw.cancel == nil {
		return
	}
	nw.cancel()
	for range nw.nodes {
		<-nw.done
	}
	for _, n := range nw.nodes {
		n.Close()
	}
	nw.cancel = nil
}

func (nw *network) waitHeight(tb testing.TB, i int, h uint64, timeout time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		head, err := nw.nodes[i].Store().Head()
		if err != nil {
			tb.Fatal(err)
		}
		if head.Height >= h {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("node %d stuck at %d, want %d", i, head.Height, h)
		}
		select {
		case <-nw.nodes[i].NewHead():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// BenchmarkNetwork4Blocks: four validators on loopback with no block-time
// pacing (1 ms interval) finalize blocks as fast as consensus allows; each
// iteration is one block on validator 0. Reports blocks/s and the mean
// latency from a block's proposal timestamp to its execution on validator
// 0 (two rounds of voting plus execution and commit).
func BenchmarkNetwork4Blocks(b *testing.B) {
	nw := startNetwork(b, 4, time.Millisecond)
	nw.waitHeight(b, 0, 3, 30*time.Second)
	head, _ := nw.nodes[0].Store().Head()
	start := head.Height
	var latency time.Duration
	seen := start
	b.ResetTimer()
	for seen < start+uint64(b.N) {
		ch := nw.nodes[0].NewHead()
		h, _ := nw.nodes[0].Store().Head()
		now := time.Now()
		for ; seen < h.Height; seen++ {
			latency += now.Sub(time.UnixMilli(int64(h.Timestamp)))
		}
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			b.Fatal("no block for 10 s")
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "blocks/s")
	b.ReportMetric(float64(latency.Milliseconds())/float64(seen-start), "ms/finality")
}

// BenchmarkDevnetEmptyBlocks is the baseline for BenchmarkNetwork4Blocks:
// a --dev node producing empty blocks back to back (execution and commit
// with fsync, no consensus).
func BenchmarkDevnetEmptyBlocks(b *testing.B) {
	d := nodetest.New(b)
	b.ResetTimer()
	for range b.N {
		d.Produce(b)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "blocks/s")
}

// BenchmarkNetwork4Transfers: transfers per second at saturation through a
// four-validator network with 100 ms blocks. Each iteration submits 1,000
// pre-signed transfers from 50 accounts to validator 0 (which gossips them)
// and waits until validator 3 has executed all of them. Compare with
// BenchmarkTransferPipeline (one --dev validator) in the same run.
func BenchmarkNetwork4Transfers(b *testing.B) {
	nw := startNetwork(b, 4, 100*time.Millisecond)
	nw.waitHeight(b, 0, 2, 30*time.Second)
	n0 := nw.nodes[0]
	senders := make([]*ecdsa.PrivateKey, 50)
	nonces := make([]uint64, len(senders))
	var last types.Hash
	for i := range senders {
		senders[i], _ = crypto.GenerateKey()
		h, err := n0.Faucet(types.PubkeyToAddress(senders[i].PublicKey), sdk.MustCBY("1000"))
		if err != nil {
			b.Fatal(err)
		}
		last = h
	}
	// The batches go to validator 0 and are awaited on validator 3: both
	// must have executed the funding, or validator 0 (whose executed head
	// may trail validator 3's) refuses the first batch for want of balance.
	waitTx(b, n0, last)
	waitTx(b, nw.nodes[3], last)
	chainID := n0.Genesis().ChainID
	var cpu time.Duration // process CPU time while the timer runs
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		txs := make([]*types.Tx, 0, benchBatch)
		for k := 0; k < benchBatch; k++ {
			i := k % len(senders)
			to := types.Address{0xbe, byte(k), byte(k >> 8)}
			tx, _ := types.NewTx(types.TxData{ChainID: chainID, Nonce: nonces[i], To: &to, Value: big.NewInt(1),
				CyclesLimit: fees.TransferCycles, MaxFeePerCycle: 1e11, MaxFeePerCell: 1e11, TipPerCycle: 1})
			s, _ := types.SignTx(tx, senders[i])
			txs = append(txs, s)
			nonces[i]++
		}
		raws := make([][]byte, len(txs))
		for i, tx := range txs {
			raws[i] = tx.Encode()
		}
		b.StartTimer()
		c0 := cpuTime()
		for _, raw := range raws {
			if _, err := n0.SubmitTx(raw); err != nil {
				b.Fatal(err)
			}
		}
		for _, tx := range txs {
			waitTx(b, nw.nodes[3], tx.Hash())
		}
		cpu += cpuTime() - c0
	}
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "tx/s")
	// CPU per transfer over all four nodes (the machine's load does not
	// change it much, unlike tx/s): the figure that carries over.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*benchBatch), "cpu-µs/tx")
	cs, _ := nw.nodes[3].Consensus()
	b.Logf("after %d batches: finalized height %d in %d rounds", b.N, cs.FinalizedHeight, cs.Round)
}

func waitTx(tb testing.TB, n *node.Node, h types.Hash) {
	tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := n.Store().View(func(v *store.View) error { _, _, _, err := v.FindTx(h); return err })
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("transaction %s not executed: %v", h, err)
		}
		select {
		case <-n.NewHead():
		case <-time.After(100 * time.Millisecond):
		}
	}
}
