package node_test

import (
	"testing"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// TestVotedTxsMarkedOrdered: on a four-validator network, a validator
// that votes for a block marks its transactions ordered in its pool
// (cowboy_mempool_txs{state="ordered"}: what of a full pool is already on
// its way into blocks, docs/BENCHMARKS.md issue 14), and the marks leave
// with the transactions once the block executes.
// Batches of transfers are sent until some validator is seen holding
// ordered transactions (each batch is in a block for at least a quorum
// round trip before it executes; polled every millisecond), so a fast
// machine only takes another batch; without the marks no batch shows any.
func TestVotedTxsMarkedOrdered(t *testing.T) {
	if testing.Short() {
		t.Skip("four validators")
	}
	nw, key := startFunded(t, 500*time.Millisecond)
	n0 := nw.nodes[0]
	const batch = 40
	var nonce uint64
	var last types.Hash
	seen := false
	deadline := time.Now().Add(60 * time.Second)
	for !seen && time.Now().Before(deadline) {
		for range batch {
			tx := signedTransfer(t, n0, key, nonce)
			if _, err := n0.SubmitTx(tx.Encode()); err != nil {
				t.Fatal(err)
			}
			last = tx.Hash()
			nonce++
		}
		// Watch until the batch is executed everywhere.
		for !seen && time.Now().Before(deadline) {
			pending := 0
			for _, n := range nw.nodes {
				st := n.MempoolStats()
				seen = seen || st.Ordered > 0
				pending += n.Pool().Len()
			}
			if pending == 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	if !seen {
		t.Fatalf("%d transfers voted for and executed; no validator ever marked one ordered", nonce)
	}
	waitTx(t, n0, last)
	for i, n := range nw.nodes {
		waitTx(t, n, last)
		for n.Pool().Len() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if st := n.MempoolStats(); st.Ordered != 0 || n.Pool().Len() != 0 {
			t.Fatalf("node %d after every transfer executed: %d in the pool, %d marked ordered", i, n.Pool().Len(), st.Ordered)
		}
	}
	t.Logf("%d transfers in batches of %d before a mark was seen", nonce, batch)
}
