package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestNetnsSoakFullNodes (make soak) is issue 15 item 7's full-node
// scenarios, with 4 and then 7 validators and three full nodes, each in a
// namespace of its own at 50 ms RTT and 1% loss: full A follows the
// validators its bootstrap list names; full B is given only validator 0's
// discovery record and finds the rest through the DHT across the lab;
// transfers sent through A and B are finalized and every node agrees on
// every block; then full C joins late with only A's record and state
// sync: it restores a snapshot a full node serves and reaches the head.
func TestNetnsSoakFullNodes(t *testing.T) {
	soak(t)
	for _, vals := range []int{4, 7} {
		t.Run(fmt.Sprintf("validators=%d", vals), func(t *testing.T) { netnsFullNodes(t, vals) })
	}
}

func netnsFullNodes(t *testing.T, vals int) {
	tn := newNSNetFull(t, vals, 3, wan)
	a, b, c := vals, vals+1, vals+2
	for i := range vals + 1 {
		setNodeConfig(t, tn.man.Nodes[i].Home, map[string]any{"snapshot_interval": 10})
	}
	for i := range vals + 1 {
		tn.start(i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	setNodeConfig(t, tn.man.Nodes[b].Home, map[string]any{"bootstrap": []string{}, "bootnodes": []string{waitRecord(ctx, t, tn.man.Nodes[0].Home)}})
	tn.start(b)
	followers := append(all(vals), a, b)
	tn.waitHeight(2, 2*time.Minute, followers...)

	key := tn.fund() // final on validator 0; A executes it a hop later
	tn.waitHeight(tn.height(0), time.Minute, a)
	// Through A, then through B once B has executed as far as A (the
	// sdk reads the sender's nonce from the node it sends through; a full
	// node is a hop behind another node's receipt).
	lat := tn.finality(key, 3, []int{a}, 0)
	tn.waitHeight(tn.height(a), time.Minute, b)
	lat = append(lat, tn.finality(key, 3, []int{b}, 0)...)
	// The same-run baseline: transfers through validator 0.
	tn.waitHeight(tn.height(b), time.Minute, 0)
	base := tn.finality(key, 3, []int{0}, 0)
	t.Logf("%d validators + full nodes, 50 ms RTT, 1%% loss: finality through a full node %s; through a validator %s", vals, summary(lat), summary(base))
	tn.checkSameChain(followers...)

	// C joins late through a snapshot served by a full node.
	tn.waitHeight(25, 2*time.Minute, a)
	setNodeConfig(t, tn.man.Nodes[c].Home, map[string]any{"bootstrap": []string{}, "bootnodes": []string{waitRecord(ctx, t, tn.man.Nodes[a].Home)}, "state_sync": true})
	tn.start(c)
	tn.waitHeight(tn.height(0), 2*time.Minute, c)
	if lg := tn.logs[c].String(); !strings.Contains(lg, "state restored from snapshot") || !strings.Contains(lg, "full node found for state sync") {
		t.Fatalf("full C did not state-sync from a full node:\n%s", tailLines(lg, 30))
	}
	top := tn.height(c)
	v, err1 := tn.client(0).Chain().Block(ctx, fmt.Sprint(top), false)
	w, err2 := tn.client(c).Chain().Block(ctx, fmt.Sprint(top), false)
	if err1 != nil || err2 != nil || v.Hash != w.Hash {
		t.Fatalf("block %d: validator %v (%v), late full node %v (%v)", top, v, err1, w, err2)
	}
}
