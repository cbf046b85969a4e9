// Package metrics owns cowboyd's Prometheus series: the node's heights,
// consensus round, peers, mempool size, p2p traffic and sync progress
// (read from the node at scrape time) and its block execution and state
// commit timings (pushed by the node through node.Metrics). Names follow
// the Prometheus conventions and mirror CometBFT's where they mean the
// same thing (cometbft_consensus_height → cowboy_consensus_height).
package metrics

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cowboy-foundation/cowboy/chain/node"
)

// Namespace prefixes every series.
const Namespace = "cowboy"

// Metrics is a node's registry. It implements node.Metrics; create it
// before node.Open, pass it in node.Config, then Attach the opened node.
type Metrics struct {
	reg        *prometheus.Registry
	log        *slog.Logger
	execution  prometheus.Histogram
	commit     prometheus.Histogram
	txs        prometheus.Counter
	blocksExec prometheus.Counter
}

var _ node.Metrics = (*Metrics)(nil)

// New builds the registry with the Go and process collectors. The node
// series read through Attach; before it they are absent.
func New(log *slog.Logger) *Metrics {
	if log == nil {
		log = slog.Default()
	}
	m := &Metrics{reg: prometheus.NewRegistry(), log: log}
	// Block execution ranges from tens of µs (empty) to seconds (5,000
	// actor calls): 100 µs doubling to ~13 s.
	m.execution = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: "state", Name: "block_execution_seconds",
		Help: "Time to execute one block's transactions.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18)})
	m.commit = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: "state", Name: "commit_seconds",
		Help: "Time to write a block and its state changes to the database (fsynced).", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)})
	m.txs = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "state", Name: "txs_executed_total",
		Help: "Transactions executed in committed blocks."})
	m.blocksExec = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "state", Name: "blocks_committed_total",
		Help: "Blocks executed and committed by this process."})
	m.reg.MustRegister(m.execution, m.commit, m.txs, m.blocksExec,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// BlockExecuted implements node.Metrics.
func (m *Metrics) BlockExecuted(d time.Duration, txs int) {
	m.execution.Observe(d.Seconds())
	m.txs.Add(float64(txs))
}

// StateCommitted implements node.Metrics.
func (m *Metrics) StateCommitted(d time.Duration) {
	m.commit.Observe(d.Seconds())
	m.blocksExec.Inc()
}

// Attach registers the series read from n at scrape time. Call it once.
func (m *Metrics) Attach(n *node.Node) {
	m.reg.MustRegister(&nodeCollector{n: n, log: m.log})
}

// Registry is the underlying registry (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(m.log.Handler(), slog.LevelWarn)})
}
