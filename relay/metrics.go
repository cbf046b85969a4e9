package relay

import (
	"github.com/cowboy-foundation/cowboy/relay/internal/store"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

type metrics struct {
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	bytesIn      prometheus.Counter
	bytesOut     prometheus.Counter
	authFailures prometheus.Counter
	hashFailures prometheus.Counter
	conns        prometheus.Gauge
	challenges   *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry, st *store.Store) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "cbfs_relay", Name: "requests_total",
			Help: "Requests served, by operation and status."}, []string{"op", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "cbfs_relay", Name: "request_duration_seconds",
			Help: "Request latency by operation.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)}, []string{"op"}),
		bytesIn:      prometheus.NewCounter(prometheus.CounterOpts{Namespace: "cbfs_relay", Name: "received_bytes_total", Help: "Object bytes received."}),
		bytesOut:     prometheus.NewCounter(prometheus.CounterOpts{Namespace: "cbfs_relay", Name: "sent_bytes_total", Help: "Object bytes sent."}),
		authFailures: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "cbfs_relay", Name: "auth_failures_total", Help: "Requests refused for authorization."}),
		hashFailures: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "cbfs_relay", Name: "hash_failures_total", Help: "Reads that found stored data not matching its hash."}),
		conns:        prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "cbfs_relay", Name: "connections", Help: "Open QUIC connections."}),
		challenges: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "cbfs_relay", Name: "storage_challenges_total",
			Help: "Storage Manager challenge work by kind (answer, refuse, claim, unanswerable) and result (ok, error)."}, []string{"kind", "result"}),
	}
	used := func(i int) func() float64 {
		return func() float64 {
			u, c, o := st.Usage()
			return float64([]uint64{u, c, o}[i])
		}
	}
	reg.MustRegister(m.requests, m.duration, m.bytesIn, m.bytesOut, m.authFailures, m.hashFailures, m.conns, m.challenges,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "cbfs_relay", Name: "used_bytes", Help: "Bytes stored."}, used(0)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "cbfs_relay", Name: "capacity_bytes", Help: "Configured capacity (0 = unlimited)."}, used(1)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "cbfs_relay", Name: "objects", Help: "Objects stored."}, used(2)),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}
