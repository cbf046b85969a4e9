package node

import (
	"errors"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// admitStats counts what admission refused, by the refusal's stable code
// and by where the transaction came from (a client of this node, or a
// peer's gossip), and the gossiped batches dropped unread because
// admission was behind. /metrics exports them (chain/metrics), so that a
// load run can tell what a full pool is full of and why transactions were
// turned away (docs/BENCHMARKS.md, issue 14).
type admitStats struct {
	mu      sync.Mutex
	refused map[Refusal]uint64
	dropped atomic.Uint64
}

// Refusal names one kind of admission refusal.
type Refusal struct {
	Code    string // the error's stable code ("pool_full"…), or "other"
	Relayed bool   // gossiped by a peer, not submitted by a client
}

// RefusalCount is how many transactions admission refused for one reason.
type RefusalCount struct {
	Refusal
	N uint64
}

func (s *admitStats) refuse(err error, relayed bool) {
	code := "other"
	if te := (*types.Error)(nil); errors.As(err, &te) {
		code = te.Code
	}
	s.mu.Lock()
	if s.refused == nil {
		s.refused = map[Refusal]uint64{}
	}
	s.refused[Refusal{code, relayed}]++
	s.mu.Unlock()
}

// MempoolStats is the mempool's content and admission's refusals so far.
type MempoolStats struct {
	// Ordered transactions are in a block proposed or final but not yet
	// executed; of the others, executable ones form a contiguous run from
	// their sender's state nonce and gapped ones wait for a missing
	// earlier nonce.
	Executable, Ordered, Gapped int
	// Refused, sorted by code then source.
	Refused []RefusalCount
	// GossipBatchesDropped counts gossiped batches dropped because
	// admission was behind (each may leave gaps in this pool).
	GossipBatchesDropped uint64
}

// MempoolStats reports the pool's content and the refusals so far.
func (n *Node) MempoolStats() MempoolStats {
	exe, ord, gap := n.pool.Counts()
	st := MempoolStats{Executable: exe, Ordered: ord, Gapped: gap, GossipBatchesDropped: n.admit.dropped.Load()}
	n.admit.mu.Lock()
	for r, k := range n.admit.refused {
		st.Refused = append(st.Refused, RefusalCount{r, k})
	}
	n.admit.mu.Unlock()
	sort.Slice(st.Refused, func(i, j int) bool {
		a, b := st.Refused[i], st.Refused[j]
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return !a.Relayed && b.Relayed
	})
	return st
}
