package metrics

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cowboy-foundation/cowboy/chain/node"
)

func desc(subsystem, name, help string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, subsystem, name), help, nil, nil)
}

// The node's state, read when scraped so a series is never stale.
var (
	descHeight = desc("consensus", "height",
		"Height of the last block executed and committed to the database.")
	descFinalized = desc("consensus", "finalized_height",
		"Highest block final by consensus (executed heights follow it).")
	descCommitted = desc("consensus", "committed_height",
		"Highest block certified by a quorum (may still be abandoned).")
	descRound = desc("consensus", "round",
		"Current consensus round (view).")
	descValidators = desc("consensus", "validators",
		"Validators in the set the consensus core runs.")
	descEpoch = desc("consensus", "epoch",
		"Epoch whose validator set the consensus core runs.")
	descPeers = desc("p2p", "peers",
		"Validators heard from in the last 5 seconds.")
	descPeersBy = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "p2p", "peers_by_source"),
		"Peers a full node heard from in the last 5 seconds, by role (validator, full) and by where their address came from (bootstrap, discovered, inbound).",
		[]string{"role", "source"}, nil)
	descSent = desc("p2p", "message_send_bytes_total",
		"Message bytes (kind and payload) sent to peers; QUIC/TLS overhead excluded.")
	descRecv = desc("p2p", "message_receive_bytes_total",
		"Message bytes (kind and payload) received from peers; QUIC/TLS overhead excluded.")
	descMempool = desc("mempool", "size",
		"Transactions waiting in the mempool.")
	descMempoolTxs = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "mempool", "txs"),
		"Transactions in the mempool by state: ordered (in a proposed or final block not yet executed), executable (a contiguous run from the sender's state nonce, not ordered yet) or gapped (waiting for a missing earlier nonce).",
		[]string{"state"}, nil)
	descRefused = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "mempool", "refused_total"),
		"Transactions refused at admission, by refusal code and source (client: submitted to this node; relay: gossiped by a peer).",
		[]string{"code", "source"}, nil)
	descGossipDropped = desc("mempool", "gossip_batches_dropped_total",
		"Gossiped transaction batches dropped unread because admission was behind.")
	descSyncTarget = desc("sync", "target_height",
		"Highest height known final on the network (peers' reports, or this node's consensus).")
	descSyncBehind = desc("sync", "behind_blocks",
		"Blocks between the sync target and the executed height; 0 when caught up.")
	descSyncing = desc("sync", "syncing",
		"1 while the node is more than 2 blocks behind the network, else 0.")
	descRole = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "node", "info"),
		"Always 1; the role label says what the node is: validator, full (a full node) or devnet.", []string{"role"}, nil)
)

// nodeCollector reads one node's status at scrape time.
type nodeCollector struct {
	n   *node.Node
	log *slog.Logger
}

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descHeight, descFinalized, descCommitted, descRound, descValidators, descEpoch,
		descPeers, descPeersBy, descSent, descRecv, descMempool, descMempoolTxs, descRefused, descGossipDropped, descSyncTarget, descSyncBehind, descSyncing, descRole} {
		ch <- d
	}
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	head, err := c.n.Store().Head()
	if err != nil {
		// A scrape during shutdown: report what needs no database.
		c.log.Warn("metrics: read chain head", "err", err)
		ch <- prometheus.NewInvalidMetric(descHeight, err)
		return
	}
	height := head.Height
	gauge(descHeight, height)
	gauge(descMempool, uint64(c.n.Pool().Len()))
	ms := c.n.MempoolStats()
	ch <- prometheus.MustNewConstMetric(descMempoolTxs, prometheus.GaugeValue, float64(ms.Executable), "executable")
	ch <- prometheus.MustNewConstMetric(descMempoolTxs, prometheus.GaugeValue, float64(ms.Ordered), "ordered")
	ch <- prometheus.MustNewConstMetric(descMempoolTxs, prometheus.GaugeValue, float64(ms.Gapped), "gapped")
	for _, r := range ms.Refused {
		src := "client"
		if r.Relayed {
			src = "relay"
		}
		ch <- prometheus.MustNewConstMetric(descRefused, prometheus.CounterValue, float64(r.N), r.Code, src)
	}
	counter(descGossipDropped, ms.GossipBatchesDropped)
	// A devnet has no consensus: its head is final as soon as committed.
	cs, ok := c.n.Consensus()
	if !ok {
		cs = node.ConsensusStatus{Validators: 1, FinalizedHeight: height, CommittedHeight: height, SyncTarget: height, Role: "devnet"}
	}
	ch <- prometheus.MustNewConstMetric(descRole, prometheus.GaugeValue, 1, cs.Role)
	final := max(cs.FinalizedHeight, height)
	gauge(descFinalized, final)
	gauge(descCommitted, max(cs.CommittedHeight, final))
	gauge(descRound, cs.Round)
	gauge(descValidators, uint64(cs.Validators))
	gauge(descEpoch, cs.Epoch)
	gauge(descPeers, uint64(cs.Peers))
	for _, pc := range cs.PeerCounts {
		ch <- prometheus.MustNewConstMetric(descPeersBy, prometheus.GaugeValue, float64(pc.N), pc.Role, pc.Source)
	}
	counter(descSent, cs.BytesSent)
	counter(descRecv, cs.BytesReceived)
	target := max(cs.SyncTarget, final)
	gauge(descSyncTarget, target)
	gauge(descSyncBehind, target-height)
	syncing := uint64(0)
	if target > height+2 {
		syncing = 1
	}
	gauge(descSyncing, syncing)
}
