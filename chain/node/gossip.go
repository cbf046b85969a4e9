package node

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Messaging between validators: per-peer send queues, inbound dispatch,
// and the batched relay of mempool transactions (gossip).

// send queues a message for one validator or, with consensus.Broadcast,
// for all; a full queue drops it (the protocol tolerates loss).
func (v *validator) send(to int, kind byte, data []byte) { v.out.send(to, kind, data) }

// peerQueues is one send queue and sender goroutine per peer, so that a
// dead peer costs only its own queue. Validators and full nodes use it
// from their loop goroutine.
type peerQueues struct {
	out  map[int]chan outMsg
	stop context.CancelFunc
}

// restart stops the previous senders and starts one per peer in peers,
// each with a queue of depth messages, through spawn (which tracks it).
func (q *peerQueues) restart(ctx context.Context, peers []int, depth int, tr *p2p.Transport, log *slog.Logger, spawn func(func())) {
	if q.stop != nil {
		q.stop()
	}
	sctx, stop := context.WithCancel(ctx)
	q.stop = stop
	q.out = map[int]chan outMsg{}
	for _, i := range peers {
		ch := make(chan outMsg, depth)
		q.out[i] = ch
		spawn(func() { runSender(sctx, tr, log, i, ch) })
	}
}

// send queues a message for peer to or, with consensus.Broadcast, for
// every peer; a full queue drops it.
func (q *peerQueues) send(to int, kind byte, data []byte) {
	for i, ch := range q.out {
		if to != consensus.Broadcast && to != i {
			continue
		}
		select {
		case ch <- outMsg{kind, data}:
		default:
		}
	}
}

// gossip queues a transaction admitted to this node's mempool for relay to
// every validator; the loop sends the queue as one batch per tick (or as
// soon as it holds maxGossipBatch), which costs one stream per peer
// instead of one per transaction. Called from API goroutines.
func (v *validator) gossip(tx *types.Tx) { v.gb.add(tx) }

// txBatcher collects transactions to gossip; its owner's loop takes the
// batch when wake fires or on its tick. Validators and full nodes use it.
type txBatcher struct {
	mu   sync.Mutex
	buf  []types.Bytes
	wake chan struct{}
}

func newTxBatcher() *txBatcher { return &txBatcher{wake: make(chan struct{}, 1)} }

func (b *txBatcher) add(tx *types.Tx) {
	b.mu.Lock()
	b.buf = append(b.buf, tx.Encode())
	first, full := len(b.buf) == 1, len(b.buf) >= maxGossipBatch
	b.mu.Unlock()
	wake := func() {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
	switch {
	case full:
		wake()
	case first:
		// The first transaction of a batch goes out within gossipDelay,
		// not at the next tick: the next leader may be another validator.
		time.AfterFunc(gossipDelay, wake)
	}
}

// take returns the encoded batch (nil if empty) and starts a new one.
func (b *txBatcher) take() []byte {
	b.mu.Lock()
	batch := b.buf
	b.buf = nil
	b.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	return codec.MustMarshal(batch)
}

// gossipBacklog is how many gossiped batches may wait for admission. A
// dropped batch leaves its senders' later nonces gapped on this node until
// the origin's own block includes the missing ones, so it is generous:
// batches are small (one every gossipDelay per peer), and at most 1,024 ×
// 512 transactions.
const gossipBacklog = 1024

// gossipDelay is how long a gossip batch collects transactions.
const gossipDelay = 10 * time.Millisecond

const maxGossipBatch = 512

// flushGossip sends the queued transactions as one KindTx batch.
func (v *validator) flushGossip() {
	if batch := v.gb.take(); batch != nil {
		v.send(consensus.Broadcast, p2p.KindTx, batch)
	}
}

// runSender delivers one peer's queue.
func runSender(ctx context.Context, tr *p2p.Transport, log *slog.Logger, to int, ch chan outMsg) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-ch:
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := tr.Send(sctx, to, m.kind, m.data)
			cancel()
			if err != nil && ctx.Err() == nil {
				log.Debug("send", "to", to, "err", err)
			}
		}
	}
}

func (v *validator) onInbound(ctx context.Context, in p2p.Inbound) {
	if p2p.IsGuest(in.From) {
		if !v.fromGuest(in) {
			v.log.Debug("message of a full node ignored", "from", in.From, "kind", in.Kind)
		}
		return
	}
	switch in.Kind {
	case p2p.KindConsensus:
		m, err := consensus.DecodeMessage(in.Data)
		if err != nil {
			v.log.Debug("bad consensus message", "from", in.From, "err", err)
			return
		}
		if err := v.core.Step(in.From, m); err != nil {
			v.log.Debug("consensus message refused", "from", in.From, "err", err)
		}
	case p2p.KindTx:
		// Admission (signature recovery above all) runs off this loop, so
		// that a flood of transactions never delays a vote; when the
		// admitter is behind, the batch is dropped like a lost message
		// (the sender's node still holds and proposes those transactions).
		select {
		case v.txIn <- in.Data:
		default:
			v.log.Debug("gossiped batch dropped: admission behind", "from", in.From)
			v.n.admit.dropped.Add(1)
		}
	case p2p.KindSync:
		v.onSyncRequest(in)
	case p2p.KindSyncReply:
		if err := v.onSyncReply(in); err != nil {
			v.log.Warn("block sync reply refused", "from", in.From, "err", err)
		}
	case p2p.KindHello:
		v.onHello(ctx, in)
	}
}

// admitGossip admits gossiped batches: transactions already in the pool
// are skipped, new ones have their signatures checked in parallel, then
// all are offered to the pool in the batch's order (one sender's nonces
// arrive in order).
func (v *validator) admitGossip(ctx context.Context) {
	for {
		var data []byte
		select {
		case <-ctx.Done():
			return
		case data = <-v.txIn:
		}
		v.n.admitBatch(v.log, data)
	}
}

// admitBatch admits one gossiped batch as relayed transactions and
// returns those it admitted (full nodes relay them on: fullrelay.go).
func (n *Node) admitBatch(log *slog.Logger, data []byte) []*types.Tx {
	var batch []types.Bytes
	if err := codec.Unmarshal(data, &batch); err != nil {
		return nil
	}
	txs := make([]*types.Tx, 0, len(batch))
	var fresh []*types.Tx
	for _, raw := range batch {
		tx, checked, err := n.decode(raw)
		if err != nil {
			break // a peer sending garbage loses the rest of its batch
		}
		if _, ok := n.pool.Get(tx.Hash()); ok {
			continue
		}
		txs = append(txs, tx)
		if !checked {
			fresh = append(fresh, tx)
		}
	}
	bad := map[types.Hash]bool{}
	for i, err := range n.checkAll(fresh) {
		if err != nil {
			bad[fresh[i].Hash()] = true
		}
	}
	var admitted []*types.Tx
	for _, tx := range txs {
		if bad[tx.Hash()] {
			continue
		}
		if _, err := n.submit(tx, false); err != nil {
			log.Debug("gossiped transaction refused", "tx", tx.Hash(), "err", err)
			continue
		}
		admitted = append(admitted, tx)
	}
	return admitted
}
