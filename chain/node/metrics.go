package node

import "time"

// Metrics receives the node's block timings. cowboyd passes a Prometheus
// implementation (chain/metrics); a nil Config.Metrics records nothing.
// Heights, round, peers, mempool size and traffic are read from the node
// when scraped (Consensus, Store, Pool), so only timings are pushed.
type Metrics interface {
	// BlockExecuted reports the time to execute one block's transactions.
	BlockExecuted(d time.Duration, txs int)
	// StateCommitted reports the time to write a block and its state
	// changes to the database.
	StateCommitted(d time.Duration)
}

func (n *Node) observeExecution(start time.Time, txs int) {
	if m := n.cfg.Metrics; m != nil {
		m.BlockExecuted(time.Since(start), txs)
	}
}

func (n *Node) observeCommit(start time.Time) {
	if m := n.cfg.Metrics; m != nil {
		m.StateCommitted(time.Since(start))
	}
}
