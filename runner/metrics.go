package runner

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the daemon's Prometheus series, on a registry of its own so
// that several daemons (tests) can live in one process.
type metrics struct {
	reg            *prometheus.Registry
	jobs           *prometheus.CounterVec   // type, outcome
	execSeconds    *prometheus.HistogramVec // type
	commitSeconds  *prometheus.HistogramVec // type: assignment seen → commitment on chain
	executorErrors *prometheus.CounterVec   // type, kind
	earnings       prometheus.Counter       // CBY
	stake          prometheus.Gauge         // CBY
	reputation     prometheus.Gauge
	heartbeatLag   prometheus.Gauge // blocks since the chain saw our heartbeat
	height         prometheus.Gauge
	inFlight       prometheus.Gauge
	pushes         *prometheus.CounterVec // result
	txs            *prometheus.CounterVec // kind, result
	// volumeBytesRead: plaintext bytes read from jobs' input volumes.
	volumeBytesRead prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.jobs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cowboy_runner_jobs_total",
		Help: "Jobs finished by this runner, by job type and outcome (finalized, outvoted, missing, failed, declined, rejected_locally, missed, dropped)."}, []string{"type", "outcome"})
	m.execSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cowboy_runner_execution_seconds",
		Help: "Executor wall time per job.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}, []string{"type"})
	m.commitSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cowboy_runner_commit_latency_seconds",
		Help: "Time from seeing an assignment to seeing our commitment on chain.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}, []string{"type"})
	m.executorErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cowboy_runner_executor_errors_total",
		Help: "Executor failures by job type and kind (bad_input, bound_exceeded, upstream, refused, result_check, other)."}, []string{"type", "kind"})
	m.earnings = prometheus.NewCounter(prometheus.CounterOpts{Name: "cowboy_runner_earnings_cby_total",
		Help: "CBY paid to this runner by settled jobs (as observed by this process)."})
	m.stake = prometheus.NewGauge(prometheus.GaugeOpts{Name: "cowboy_runner_stake_cby", Help: "Self-bond in the Runner Registry."})
	m.reputation = prometheus.NewGauge(prometheus.GaugeOpts{Name: "cowboy_runner_reputation",
		Help: "Reputation in the Runner Registry (selection needs at least 50; late commits cost 5)."})
	m.heartbeatLag = prometheus.NewGauge(prometheus.GaugeOpts{Name: "cowboy_runner_heartbeat_lag_blocks",
		Help: "Blocks since the chain last recorded this runner's heartbeat."})
	m.height = prometheus.NewGauge(prometheus.GaugeOpts{Name: "cowboy_runner_chain_height", Help: "Last chain height processed."})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{Name: "cowboy_runner_jobs_in_flight", Help: "Jobs assigned and not finished."})
	m.pushes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cowboy_runner_aggregator_pushes_total",
		Help: "Results pushed to this runner's aggregator API, by result (accepted, rejected, retry)."}, []string{"result"})
	m.txs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cowboy_runner_txs_total",
		Help: "Transactions sent, by kind (register, heartbeat, commit, submit, reveal) and result (sent, resent, failed)."}, []string{"kind", "result"})
	m.volumeBytesRead = prometheus.NewCounter(prometheus.CounterOpts{Name: "cowboy_runner_volume_read_bytes_total",
		Help: "Plaintext bytes read from jobs' CBFS input volumes."})
	m.reg.MustRegister(m.volumeBytesRead)
	m.reg.MustRegister(m.jobs, m.execSeconds, m.commitSeconds, m.executorErrors, m.earnings, m.stake, m.reputation, m.heartbeatLag,
		m.height, m.inFlight, m.pushes, m.txs, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
