package node

import (
	"context"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
)

// Transaction relay among full nodes (docs/CONSENSUS.md §8.11). A full
// node gossips the transactions its API admits to the validators and to
// the full nodes it follows; a full node that receives a batch from
// another full node (a full peer, or a guest that dialled in) admits it
// as relayed transactions and gossips those it admitted on, to the
// validators and its own full peers. A transaction already in a pool is
// skipped there, so a batch stops at the first node that holds it: a full
// node that reaches no validator still gets its clients' transactions to
// the chain through one that does.

// relayBacklog bounds the received batches waiting for admission; more
// are dropped like lost messages (the sender relays them again).
const relayBacklog = 64

// onRelayedTxs queues a batch another full node sent (loop goroutine).
func (f *follower) onRelayedTxs(in p2p.Inbound) {
	if !isFullPeer(in.From) && !p2p.IsGuest(in.From) {
		return // validators send a full node no transactions
	}
	select {
	case f.txIn <- in.Data:
	default:
		f.log.Debug("relayed batch dropped: admission behind", "from", in.From)
		f.n.admit.dropped.Add(1)
	}
}

// admitRelayed admits received batches off the loop and queues what it
// admitted for gossip.
func (f *follower) admitRelayed(ctx context.Context) {
	for {
		var data []byte
		select {
		case <-ctx.Done():
			return
		case data = <-f.txIn:
		}
		for _, tx := range f.n.admitBatch(f.log, data) {
			f.gb.add(tx)
		}
	}
}

// restartFullSenders (re)starts one sender per full peer.
func (f *follower) restartFullSenders(ctx context.Context) {
	peers := make([]int, len(f.fullPeers))
	for i, p := range f.fullPeers {
		peers[i] = p.Index
	}
	f.fout.restart(ctx, peers, 64, f.tr, f.log, f.goTracked)
}

// sendFull queues a batch for every full peer.
func (f *follower) sendFull(batch []byte) {
	f.fout.send(consensus.Broadcast, p2p.KindTx, batch)
}
