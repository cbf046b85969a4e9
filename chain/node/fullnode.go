package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p/discovery"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// A full node follows a consensus network without a vote: it asks the
// validators (as a p2p guest) for finalized blocks with their finality
// proofs, checks each batch against the validator set in force at those
// heights (verifySynced; the set is read from its own executed state, so
// an epoch's hand-off is checked with the set the previous epoch's blocks
// elected), executes the blocks, and serves the API. Transactions its API
// admits are gossiped to every validator. It never proposes or votes.

// Roles reported in ConsensusStatus.Role and the API's status.
const (
	RoleValidator = "validator"
	RoleFull      = "full"
)

const (
	// followPoll is how often a full node asks for new blocks when it has
	// no request outstanding.
	followPoll = 100 * time.Millisecond
	// syncStall is how long a full node waits for a sync answer before it
	// scores the peer down and asks another. Validators answer from disk,
	// at once or, with nothing new, within guestPark; an answer carries at
	// most about 4 MiB.
	syncStall = 5 * time.Second
	// resendEvery is how often a full node relays its pending transactions
	// again: a batch lost (every validator unreachable when it left) must
	// not leave a client's transaction stuck here. Validators skip the
	// ones they hold.
	resendEvery = 3 * time.Second
)

type peerFault struct {
	peer int
	err  error
}

type follower struct {
	n        *Node
	log      *slog.Logger
	chainID  uint64
	epochLen uint64
	flog     *finalLog
	tr       *p2p.Transport

	ep       *execution.Epoch
	set      *consensus.ValidatorSet
	domain   uint64
	epochEnd uint64
	root     *consensus.Block // last finalized block, verified
	rootHash types.Hash

	// learnt holds validators' addresses that validators reported, used
	// where the bootstrap list has none.
	learnt map[types.Address]string

	scores   *peerScores
	target   uint64 // highest finalized height a validator reported
	lastSeen map[int]time.Time
	asked    int // peer of the outstanding request
	askedAt  time.Time
	waiting  bool

	lastResend time.Time

	faults chan peerFault // frame faults from the transport

	// Discovery and full peers (discover.go, fullserve.go).
	disc      *discovery.Service
	fullPeers []p2p.Peer     // full nodes followed, indices from fullBase
	fullIdx   map[string]int // BLS key → index in fullPeers' range
	source    map[int]string // where a peer's address came from
	lastLearn time.Time
	serving   chan struct{} // answers to other full nodes in flight
	// behind holds when a full peer last reported a finalized height not
	// above this node's root: it is not asked for blocks for a while.
	behind map[int]time.Time
	gb     *txBatcher
	out    peerQueues
	wg     sync.WaitGroup

	// Relay among full nodes (fullrelay.go) and hand-offs still asked for
	// (fullhandoff.go).
	fout     peerQueues
	txIn     chan []byte
	handoffs []pendingHandoff
}

// runFull is Run for a full node.
func (n *Node) runFull(ctx context.Context) error {
	f, err := n.newFollower()
	if err != nil {
		return err
	}
	defer f.close()
	return f.run(ctx)
}

func (n *Node) newFollower() (*follower, error) {
	nc := n.cfg.Network
	if nc == nil || nc.Key == nil {
		return nil, errors.New("node: a full node needs its node key (node.key)")
	}
	f := &follower{
		n: n, log: n.log.With("component", "fullnode"), chainID: n.gen.ChainID, epochLen: n.exec.Config().Validators.EpochLength,
		scores: newPeerScores(), learnt: map[types.Address]string{}, lastSeen: map[int]time.Time{}, faults: make(chan peerFault, 64), gb: newTxBatcher(),
		fullIdx: map[string]int{}, source: map[int]string{}, serving: make(chan struct{}, guestServing), behind: map[int]time.Time{},
		txIn: make(chan []byte, relayBacklog),
	}
	ok := false
	defer func() {
		if !ok {
			f.close()
		}
	}()
	var err error
	if f.flog, err = openFinalLog(ConsensusDBPath(n.cfg.Home)); err != nil {
		return nil, err
	}
	n.flog.Store(f.flog) // light-client proofs are served from it (lightproof.go)
	if err := f.loadRoot(); err != nil {
		return nil, err
	}
	if err := f.executePending(context.Background()); err != nil {
		return nil, err
	}
	peers, err := f.configure()
	if err != nil {
		return nil, err
	}
	listen := nc.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	if f.tr, err = p2p.New(p2p.Config{Key: nc.Key, Listen: listen, Peers: peers, Logger: f.log, OnFault: f.onFault, Guests: maxGuests}); err != nil {
		return nil, err
	}
	ok = true
	return f, nil
}

// loadRoot sets the root to the last block in the finalized log, or the
// genesis.
func (f *follower) loadRoot() error {
	last, err := f.flog.Last()
	if err != nil {
		return err
	}
	if last != nil {
		f.root = &last.Block
		f.rootHash = last.Block.Hash()
		return nil
	}
	head, err := f.n.store.Head()
	if err != nil {
		return err
	}
	if head.Height != 0 {
		return fmt.Errorf("node: the chain has %d blocks but no consensus log; this home was run as a devnet", head.Height)
	}
	g0, err := f.n.genesisHash()
	if err != nil {
		return err
	}
	f.root = &consensus.Block{Payload: g0[:]}
	f.rootHash = f.root.Hash()
	return nil
}

// executePending executes the logged finalized blocks above the head.
func (f *follower) executePending(ctx context.Context) error {
	head, err := f.n.store.Head()
	if err != nil {
		return err
	}
	for h := head.Height + 1; h <= f.root.Height; h++ {
		r, err := f.flog.Get(h)
		if err != nil {
			return fmt.Errorf("node: finalized block %d: %w", h, err)
		}
		if err := f.n.executeFinal(ctx, r); err != nil {
			return fmt.Errorf("node: execute finalized block %d: %w", h, err)
		}
	}
	return nil
}

// configure reads the validator set in force after the executed head and
// returns the transport's peers.
func (f *follower) configure() ([]p2p.Peer, error) {
	ep, set, peers, err := f.n.epochInForce()
	if err != nil {
		return nil, err
	}
	for k := range f.source {
		if !isFullPeer(k) {
			delete(f.source, k) // validator indices name another set now
		}
	}
	for i := range peers {
		if peers[i].Addr != "" {
			f.source[i] = sourceBootstrap
		} else if peers[i].Addr = f.learnt[ep.Members[i].Address]; peers[i].Addr != "" {
			f.source[i] = sourceDiscovered
		}
	}
	f.ep, f.set = ep, set
	f.domain = consensus.EpochDomain(f.chainID, ep.Number)
	f.epochEnd = epochEndOf(ep.StartHeight, f.epochLen)
	f.scores = newPeerScores() // indices name other validators now
	return peers, nil
}

func (f *follower) close() {
	if f.tr != nil {
		f.tr.Close()
	}
	if f.flog != nil {
		f.n.flog.CompareAndSwap(f.flog, nil)
		f.flog.Close()
	}
}

// onFault is the transport's report of a refused frame (reader goroutine).
func (f *follower) onFault(peer int, err error) {
	select {
	case f.faults <- peerFault{peer, err}:
	default:
	}
}

func (f *follower) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer f.wg.Wait()
	defer cancel()
	f.goTracked(func() {
		if err := f.tr.Run(ctx); err != nil {
			f.log.Error("p2p stopped", "err", err)
		}
	})
	f.restartSenders(ctx)
	f.goTracked(func() { f.admitRelayed(ctx) })
	var err error
	if f.disc, err = f.n.startDiscovery(ctx, f.tr, discovery.RoleFull, f.goTracked); err != nil {
		return err
	}
	g := f.gb.add
	f.n.gossip.Store(&g)
	defer f.n.gossip.Store(nil)
	f.log.Info("full node running", "validators", f.set.Len(), "epoch", f.ep.Number, "finalized", f.root.Height, "p2p", f.tr.Addr().String())
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	f.publish()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			f.flush()
			if err := f.step(ctx); err != nil {
				return err
			}
		case <-f.gb.wake:
			f.flush()
		case in := <-f.tr.Inbound():
			f.lastSeen[in.From] = time.Now()
			switch {
			case in.Kind == p2p.KindTx:
				f.onRelayedTxs(in)
			case !f.serveRequest(in):
				f.onInbound(ctx, in)
			}
		case flt := <-f.faults:
			f.penalize(flt.peer, penaltyFrame, flt.err)
		}
		f.publish()
	}
}

func (f *follower) goTracked(fn func()) {
	f.wg.Add(1)
	go func() { defer f.wg.Done(); fn() }()
}

// restartSenders (re)starts one sender per validator of the current set.
func (f *follower) restartSenders(ctx context.Context) {
	peers := make([]int, f.set.Len())
	for i := range peers {
		peers[i] = i
	}
	f.out.restart(ctx, peers, 256, f.tr, f.log, f.goTracked)
}

// flush gossips the API's transactions, and those relayed to it, to every
// validator and every full peer.
func (f *follower) flush() {
	if batch := f.gb.take(); batch != nil {
		f.out.send(consensus.Broadcast, p2p.KindTx, batch)
		f.sendFull(batch)
	}
}

// step executes what is verified, moves to the next epoch's set once its
// boundary block is executed, notices a stalled peer, and asks for more.
func (f *follower) step(ctx context.Context) error {
	if err := f.executePending(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		// The blocks are final: retry until they execute.
		f.log.Error("executing finalized blocks failed; retrying", "err", err)
		return nil
	}
	if f.root.Height == f.epochEnd {
		if err := f.reconfigure(ctx); err != nil {
			return err
		}
	}
	if f.waiting && time.Since(f.askedAt) > syncStall {
		f.penalize(f.asked, penaltyStall, fmt.Errorf("no answer to a sync request in %v", syncStall))
		f.waiting = false
	}
	if time.Since(f.lastLearn) > time.Second {
		f.lastLearn = time.Now()
		if f.learnDiscovered() {
			f.restartFullSenders(ctx)
		}
	}
	if !f.waiting {
		f.request()
	}
	if time.Since(f.lastResend) > resendEvery {
		f.lastResend = time.Now()
		f.resend()
	}
	return nil
}

// resend relays the transactions the next block could include, again.
func (f *follower) resend() {
	if f.n.pool.Len() == 0 {
		return
	}
	var txs []*types.Tx
	if err := f.n.store.View(func(v *store.View) error {
		bf, err := execution.Basefees(v)
		if err != nil {
			return err
		}
		txs, err = f.n.selectTxs(v, bf, nil)
		return err
	}); err != nil {
		f.log.Warn("select pending transactions to relay", "err", err)
		return
	}
	for _, tx := range txs[:min(len(txs), maxGossipBatch)] {
		f.gb.add(tx)
	}
}

// reconfigure switches to the set the executed epoch boundary elected.
func (f *follower) reconfigure(ctx context.Context) error {
	old := f.ep.Number
	f.wantHandoff()
	peers, err := f.configure()
	if err != nil {
		return err
	}
	f.tr.SetPeers(append(peers, f.fullPeers...))
	f.restartSenders(ctx)
	f.waiting = false
	f.log.Info("new epoch", "epoch", f.ep.Number, "previous", old, "validators", f.set.Len(), "from_height", f.ep.StartHeight, "until_height", f.epochEnd)
	return nil
}

func (f *follower) publish() {
	peers := 0
	var counts []PeerCount
	for i, t := range f.lastSeen {
		if time.Since(t) >= 5*time.Second {
			continue
		}
		role := RoleValidator
		switch {
		case isFullPeer(i) || p2p.IsGuest(i):
			role = RoleFull
		default:
			peers++ // validators, as before
		}
		counts = addPeerCount(counts, role, f.sourceOf(i))
	}
	sent, recv := f.tr.Traffic()
	f.n.setConsensus(ConsensusStatus{
		Index: -1, Validators: f.set.Len(), Round: f.root.Round, CommittedHeight: f.root.Height, FinalizedHeight: f.root.Height,
		Peers: peers, Epoch: f.ep.Number, EpochEnd: f.epochEnd, SyncTarget: max(f.target, f.root.Height),
		BytesSent: sent, BytesReceived: recv, Role: RoleFull, PeerCounts: counts,
	})
}
