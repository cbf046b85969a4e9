package node

import (
	"runtime"
	"sync"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// checkedTxs remembers, by hash, transactions this node decoded and that
// passed the stateless checks (Executor.CheckTx, which recovers the
// sender), so that each transaction is decoded and its signature
// recovered once per node: at admission, or on first sight in a proposal.
// Verifying a proposal, selecting around pending blocks and executing a
// finalized block then reuse the decoded transaction and its cached
// sender. The hash is keccak256 of the exact encoding, so a hit is the
// same bytes. Bounded: the oldest entries go first.
type checkedTxs struct {
	mu    sync.Mutex
	m     map[types.Hash]*types.Tx
	order []types.Hash // insertion order, a ring of len max
	next  int
	max   int
}

func newCheckedTxs(max int) *checkedTxs {
	return &checkedTxs{m: make(map[types.Hash]*types.Tx, max), order: make([]types.Hash, max), max: max}
}

func (c *checkedTxs) get(h types.Hash) (*types.Tx, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tx, ok := c.m[h]
	return tx, ok
}

func (c *checkedTxs) put(tx *types.Tx) {
	h := tx.Hash()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[h]; ok {
		return
	}
	if old := c.order[c.next]; old != (types.Hash{}) {
		delete(c.m, old)
	}
	c.order[c.next] = h
	c.next = (c.next + 1) % c.max
	c.m[h] = tx
}

// decode returns the transaction encoded by raw and whether it already
// passed CheckTx on this node (then its sender is cached with it).
func (n *Node) decode(raw []byte) (*types.Tx, bool, error) {
	h := types.Keccak256(raw)
	if tx, ok := n.checked.get(h); ok {
		return tx, true, nil
	}
	if tx, ok := n.pool.Get(h); ok {
		return tx, true, nil
	}
	tx, err := types.DecodeTx(raw)
	return tx, false, err
}

// checkAll runs CheckTx on txs in parallel (signature recovery is the
// cost; the curve library recovers one signature per call, so the batch is
// spread over the cores) and remembers those that pass. errs[i] is
// transaction i's error.
func (n *Node) checkAll(txs []*types.Tx) []error {
	errs := make([]error, len(txs))
	workers := min(runtime.GOMAXPROCS(0), (len(txs)+15)/16)
	if workers <= 1 {
		for i, tx := range txs {
			errs[i] = n.checkOne(tx)
		}
		return errs
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(txs); i += workers {
				errs[i] = n.checkOne(txs[i])
			}
		}()
	}
	wg.Wait()
	return errs
}

func (n *Node) checkOne(tx *types.Tx) error {
	if _, err := n.exec.CheckTx(tx); err != nil {
		return err
	}
	n.checked.put(tx)
	return nil
}
