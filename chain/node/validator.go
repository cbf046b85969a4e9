package node

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"github.com/fxamacker/cbor/v2"
	"log/slog"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p/discovery"
	"github.com/cowboy-foundation/cowboy/chain/consensus/wal"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Network makes a node a validator of a consensus network (the genesis
// lists several validators with BLS keys). Key is required.
type Network struct {
	Key *bls.SecretKey // consensus (BLS) key; also proves the VRF. A full node's: its p2p identity
	// Full makes the node a full node (fullnode.go): it follows the
	// validators in Bootstrap without voting; Key is its own node key.
	Full bool
	// AccountKey is the validator's account (validator.key): it signs the
	// transactions that submit equivocation evidence. Optional.
	AccountKey *ecdsa.PrivateKey
	Listen     string                   // QUIC listen address; default 127.0.0.1:26656
	Bootstrap  map[types.Address]string // validator address → QUIC address
	// Tick and TimeoutTicks set the view timeout (Tick × TimeoutTicks);
	// zero takes the genesis consensus section, else 100 ms × 20.
	Tick         time.Duration
	TimeoutTicks int
	// Retain is how many finalized blocks the consensus core keeps to
	// serve peers' fetches (default 256); a peer further behind uses block
	// sync. Tests lower it to exercise sync.
	Retain int
	// SnapshotInterval is how often, in heights, the node writes a state
	// snapshot for peers' state sync (snapshot.go): 0 takes the default
	// 1,000, a negative value disables snapshots.
	SnapshotInterval int64
	// SnapshotKeep is how many snapshots are kept (default 2).
	SnapshotKeep int
	// StateSync lets an empty full node start from a peer's snapshot
	// (Node.StateSync) instead of replaying from genesis.
	StateSync bool
	// Discovery runs peer discovery on the p2p socket (discover.go),
	// seeded by Bootnodes (records, "enr:…"). MaxPeers bounds the records
	// kept (default discovery.DefaultMaxPeers).
	Discovery bool
	Bootnodes []string
	MaxPeers  int
}

// ConsensusStatus is a consensus network node's progress, for the API.
type ConsensusStatus struct {
	Validator       types.Address // this node's validator address
	Index           int           // its position in the validator set
	Validators      int
	Round           uint64
	CommittedHeight uint64 // highest certified block (may still be abandoned)
	FinalizedHeight uint64 // highest final block (executed heights follow it)
	Peers           int    // validators heard from in the last 5 s
	Epoch           uint64 // the epoch whose validator set the core runs
	EpochEnd        uint64 // its last height
	SyncTarget      uint64 // highest height peers report final (or certified here)
	Role            string // "validator", or "full" on a full node (Index -1)
	BytesSent       uint64 // p2p message bytes sent since start
	BytesReceived   uint64 // and received
	// PeerCounts are the peers heard from in the last 5 s by role and by
	// where their address came from (full nodes; discover.go).
	PeerCounts []PeerCount
}

// Consensus reports the consensus status; ok is false on a --dev node.
func (n *Node) Consensus() (ConsensusStatus, bool) {
	n.consMu.Lock()
	defer n.consMu.Unlock()
	if n.cons == nil {
		return ConsensusStatus{}, false
	}
	return *n.cons, true
}

func (n *Node) setConsensus(s ConsensusStatus) {
	n.consMu.Lock()
	n.cons = &s
	n.consMu.Unlock()
}

// payload is what consensus orders for the node: the proposer's timestamp,
// the transactions, in order, and the proposer's executed head
// (consensus.ExecCommit, docs/CONSENSUS.md §8.8). The block header (with
// the state root after execution) is derived from it on finality by every
// node alike.
type payload = consensus.Payload

func decodePayload(b []byte) (*payload, error) {
	var p payload
	if err := codec.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("node: decode block payload: %w", err)
	}
	return &p, nil
}

// decodeCertified decodes the payload of a block that is certified or
// final: Verify checked its encoding on every honest validator before
// they voted, so it is not checked for canonical form again.
func decodeCertified(b []byte) (*payload, error) {
	var p payload
	if err := codec.UnmarshalStored(b, &p); err != nil {
		return nil, fmt.Errorf("node: decode block payload: %w", err)
	}
	return &p, nil
}

// payloadTime is a payload's timestamp, its transactions left encoded.
type payloadTime struct {
	_         struct{} `cbor:",toarray"`
	Timestamp uint64
	Txs       cbor.RawMessage
	Exec      cbor.RawMessage
}

// maxPayload bounds a block payload (the transport carries 16 MiB).
const maxPayload = 8 << 20

// maxClockDrift is how far ahead of this node's clock a proposal's
// timestamp may be for it to vote.
const maxClockDrift = 15 * time.Second

// validator drives a consensus.Core for the node: the loop of
// docs/CONSENSUS.md §8.4. Only the loop goroutine touches the core.
type validator struct {
	n       *Node
	log     *slog.Logger
	chainID uint64
	set     *consensus.ValidatorSet
	self    int
	addr    types.Address
	signer  consensus.Signer
	seed    types.Hash       // the epoch's seed
	genesis *consensus.Block // the consensus root at height 0

	genesisSeed types.Hash
	domain      uint64           // the epoch's signing domain (consensus.EpochDomain)
	ep          *execution.Epoch // the epoch the core runs
	epochLen    uint64
	epochEnd    uint64 // last height of the epoch; higher blocks are empty fillers
	minRound    uint64
	switching   bool // the epoch's last block is final; reconfigure once it is executed
	// syncSwitch: block sync made the last block final, so the switch
	// does not wait for a hand-off certificate; handoffSince is when the
	// wait for one began (readyToSwitch).
	syncSwitch   bool
	handoffSince time.Time
	left         bool // the old core has announced its highest QC (Core.Leave)
	peerFinal    map[int]uint64
	genTs        uint64
	tick         time.Duration
	timeout      int

	flog     *finalLog
	wal      *wal.WAL
	tr       *p2p.Transport
	core     *consensus.Core
	root     *consensus.Block // last finalized
	rootHash types.Hash

	out      peerQueues
	wg       sync.WaitGroup
	built    chan builtPayload
	cancelB  context.CancelFunc
	lastSeen map[int]time.Time
	lastFin  time.Time
	syncNext int
	syncAt   time.Time

	// Finalized blocks waiting for execution, oldest first; the executor
	// goroutine drains it.
	qmu   sync.Mutex
	queue []finalRecord
	qwake chan struct{}

	// Gossiped batches waiting for admission (admitGossip).
	txIn chan []byte

	guestSem chan struct{} // sync answers to full nodes in flight (guests.go)
	parked   []parkedSync  // full nodes' requests waiting for the next final block

	// Transactions waiting to be gossiped.
	gb *txBatcher
}

type outMsg struct {
	kind byte
	data []byte
}

type builtPayload struct {
	round   uint64
	payload []byte
}

// runValidator is Run for a consensus network.
func (n *Node) runValidator(ctx context.Context) error {
	v, err := n.newValidator()
	if err != nil {
		return err
	}
	defer v.close()
	return v.run(ctx)
}

func (n *Node) newValidator() (*validator, error) {
	nc := n.cfg.Network
	if nc == nil || nc.Key == nil {
		return nil, errors.New("node: a consensus network needs the validator's BLS key (--validator-key)")
	}
	g0, err := n.genesisHash()
	if err != nil {
		return nil, err
	}
	tick, timeout := nc.Tick, nc.TimeoutTicks
	if tick <= 0 {
		tick = time.Duration(n.gen.Consensus.TickMs) * time.Millisecond
		if tick <= 0 {
			tick = 100 * time.Millisecond
		}
	}
	if timeout <= 0 {
		if ms := n.gen.Consensus.ViewTimeoutMs; ms > 0 {
			timeout = max(int(time.Duration(ms)*time.Millisecond/tick), 2)
		} else {
			timeout = 20
		}
	}
	v := &validator{
		n: n, log: n.log.With("component", "consensus"), chainID: n.gen.ChainID,
		signer: consensus.BLSSigner{Key: nc.Key}, genesisSeed: n.gen.Seed(g0), epochLen: n.exec.Config().Validators.EpochLength,
		genesis: &consensus.Block{Payload: g0[:]}, genTs: n.gen.TimestampMs, tick: tick, timeout: timeout,
		built: make(chan builtPayload, 1), lastSeen: map[int]time.Time{}, peerFinal: map[int]uint64{},
		qwake: make(chan struct{}, 1), gb: newTxBatcher(), lastFin: time.Now(), txIn: make(chan []byte, gossipBacklog),
		guestSem: make(chan struct{}, guestServing),
	}
	ok := false
	defer func() {
		if !ok {
			v.close()
		}
	}()
	if v.flog, err = openFinalLog(ConsensusDBPath(n.cfg.Home)); err != nil {
		return nil, err
	}
	n.flog.Store(v.flog)
	if v.wal, err = wal.Open(WALPath(n.cfg.Home)); err != nil {
		return nil, err
	}
	// The root: the last finalized block. Blocks finalized before a crash
	// but not yet committed to the chain store are executed now, so that
	// the state (and the epoch read from it) is the root's.
	last, err := v.flog.Last()
	if err != nil {
		return nil, err
	}
	head, err := n.store.Head()
	if err != nil {
		return nil, err
	}
	rootQC := consensus.QC{BlockHash: v.genesis.Hash()}
	v.root = v.genesis
	if last != nil {
		v.root, rootQC = &last.Block, last.QC
		if last.Block.Height < head.Height {
			return nil, fmt.Errorf("node: the consensus log ends at height %d but the chain is at %d (was %s deleted?)", last.Block.Height, head.Height, ConsensusDBPath(n.cfg.Home))
		}
		for h := head.Height + 1; h <= last.Block.Height; h++ {
			r, err := v.flog.Get(h)
			if err != nil {
				return nil, fmt.Errorf("node: finalized block %d: %w", h, err)
			}
			if err := n.executeFinal(context.Background(), r); err != nil {
				return nil, fmt.Errorf("node: execute finalized block %d: %w", h, err)
			}
		}
	} else if head.Height != 0 {
		return nil, fmt.Errorf("node: the chain has %d blocks but no consensus log; this home was run as a devnet", head.Height)
	}
	v.rootHash = v.root.Hash()
	peers, err := v.configure()
	if err != nil {
		return nil, err
	}
	if err := v.newCore(rootQC); err != nil {
		return nil, err
	}
	listen := nc.Listen
	if listen == "" {
		listen = "127.0.0.1:26656"
	}
	if v.tr, err = p2p.New(p2p.Config{Key: nc.Key, Listen: listen, Peers: peers, Logger: v.log, Guests: maxGuests}); err != nil {
		return nil, err
	}
	ok = true
	return v, nil
}

// configure loads the epoch in force after the root from state: the
// validator set and seed, this node's place in it, the epoch's last height,
// and the first round the new core may use. It returns the transport peers.
func (v *validator) configure() ([]p2p.Peer, error) {
	ep, set, peers, err := v.n.epochInForce()
	if err != nil {
		return nil, err
	}
	mine := v.signer.(consensus.BLSSigner).Key.PublicKey().Bytes()
	v.self, v.addr = -1, types.Address{}
	for i, m := range ep.Members {
		if string(m.BLSKey) == string(mine) {
			v.self, v.addr = i, m.Address
		}
	}
	v.ep, v.set = ep, set
	v.domain = consensus.EpochDomain(v.chainID, ep.Number)
	v.seed = ep.Seed
	if ep.Number == 0 {
		v.seed = v.genesisSeed
	}
	v.epochEnd = epochEndOf(ep.StartHeight, v.epochLen)
	if v.self < 0 {
		v.log.Warn("this node's key is not in the validator set of the epoch; following as an observer", "epoch", ep.Number)
	}
	// Never sign in a round used under an earlier configuration: start
	// above every round in the WAL, remembered per epoch so that a restart
	// picks the same floor, then drop the older records.
	if v.minRound, err = v.flog.MinRound(ep.Number); err != nil {
		return nil, err
	}
	if v.minRound == 0 {
		v.minRound = v.root.Round + 1
		for _, r := range v.wal.Records() {
			v.minRound = max(v.minRound, r.Round()+1)
		}
		if ep.Number == 0 {
			v.minRound = 1 // the first epoch's WAL is its own
		}
		if err := v.flog.SetMinRound(ep.Number, v.minRound); err != nil {
			return nil, err
		}
		if ep.Number > 0 {
			if err := v.wal.Compact(v.minRound - 1); err != nil {
				return nil, err
			}
		}
	}
	v.peerFinal = map[int]uint64{}
	return peers, nil
}

func (v *validator) newCore(rootQC consensus.QC) error {
	core, err := consensus.New(consensus.Config{
		ChainID: v.domain, Validators: v.set, Seed: v.seed, Self: v.addr, Signer: v.signer,
		Verifier: consensus.BLS{}, App: v, Root: v.root, RootQC: rootQC, WAL: v.wal.Records(),
		TimeoutTicks: v.timeout, Retain: v.n.cfg.Network.Retain, MinRound: v.minRound,
	})
	if err != nil {
		return fmt.Errorf("node: start consensus: %w", err)
	}
	v.core = core
	return nil
}

// reconfigure starts the next epoch once its boundary block is final and
// executed: a new core on the boundary block with the set and seed the
// Validator Registry wrote, and the transport's peers replaced.
func (v *validator) reconfigure(ctx context.Context) error {
	head, err := v.n.store.Head()
	if err != nil || head.Height < v.epochEnd {
		return err
	}
	if ok, err := v.readyToSwitch(); !ok || err != nil {
		return err
	}
	if !v.left {
		// Tell peers still in the epoch the highest QC (the hand-off)
		// before leaving; the loop drains it now, the switch is on the
		// next tick.
		v.left = true
		v.core.Leave()
		return nil
	}
	rec, err := v.flog.Get(v.epochEnd)
	if err != nil {
		return err
	}
	old := v.ep.Number
	peers, err := v.configure()
	if err != nil {
		return err
	}
	if v.cancelB != nil {
		v.cancelB()
	}
	if err := v.newCore(rec.QC); err != nil {
		return err
	}
	v.switching, v.syncSwitch, v.left, v.handoffSince = false, false, false, time.Time{}
	v.tr.SetPeers(peers)
	v.restartSenders(ctx)
	v.log.Info("new epoch", "epoch", v.ep.Number, "previous", old, "validators", v.set.Len(), "index", v.self,
		"from_height", v.ep.StartHeight, "until_height", v.epochEnd, "first_round", v.minRound)
	return nil
}

func (v *validator) close() {
	if v.tr != nil {
		v.tr.Close()
	}
	if v.wal != nil {
		v.wal.Close()
	}
	if v.flog != nil {
		v.n.flog.CompareAndSwap(v.flog, nil)
		v.flog.Close()
	}
}

func (v *validator) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer v.wg.Wait()
	defer cancel()
	v.goTracked(func() {
		if err := v.tr.Run(ctx); err != nil {
			v.log.Error("p2p stopped", "err", err)
		}
	})
	v.restartSenders(ctx)
	if _, err := v.n.startDiscovery(ctx, v.tr, discovery.RoleValidator, v.goTracked); err != nil {
		return err // validators announce themselves; they keep their configured links
	}
	execErr := make(chan error, 1)
	v.goTracked(func() { execErr <- v.executor(ctx) })
	v.goTracked(func() { v.admitGossip(ctx) })
	g := v.gossip
	v.n.gossip.Store(&g)
	defer v.n.gossip.Store(nil)

	v.log.Info("validator running", "index", v.self, "address", v.addr, "validators", v.set.Len(),
		"p2p", v.tr.Addr().String(), "finalized", v.root.Height, "view_timeout", v.tick*time.Duration(v.timeout))
	v.hello(ctx)
	tick := time.NewTicker(v.tick)
	defer tick.Stop()
	hello := time.NewTicker(2 * time.Second)
	defer hello.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-execErr:
			return err
		case <-tick.C:
			v.core.Tick()
			if v.switching {
				if err := v.reconfigure(ctx); err != nil {
					return err
				}
			}
			v.maybeSync()
			v.serveParked(true)
			v.flushGossip()
		case <-v.gb.wake:
			v.flushGossip()
		case <-hello.C:
			v.hello(ctx)
			st := v.core.Status()
			v.log.Debug("consensus status", "epoch", v.ep.Number, "round", st.Round, "high_qc_round", st.HighQCRound,
				"committed", st.CommittedHeight, "finalized", st.FinalizedHeight, "switching", v.switching, "dropped", v.tr.Dropped())
		case in := <-v.tr.Inbound():
			if !p2p.IsGuest(in.From) {
				v.lastSeen[in.From] = time.Now()
			}
			v.onInbound(ctx, in)
		case b := <-v.built:
			if err := v.core.Propose(b.round, b.payload); err != nil && !errors.Is(err, consensus.ErrStale) {
				v.log.Warn("propose", "round", b.round, "err", err)
			}
		}
		if err := v.drain(ctx); err != nil {
			return err
		}
		v.publish()
	}
}

func (v *validator) goTracked(f func()) {
	v.wg.Add(1)
	go func() { defer v.wg.Done(); f() }()
}

// restartSenders (re)starts one sender per peer of the current set.
func (v *validator) restartSenders(ctx context.Context) {
	var peers []int
	for i := range v.set.Len() {
		if i != v.self {
			peers = append(peers, i)
		}
	}
	v.out.restart(ctx, peers, 1024, v.tr, v.log, v.goTracked)
}

// drain handles the core's outputs in the order the core requires: the WAL
// is durable before any message of the same batch leaves.
func (v *validator) drain(ctx context.Context) error {
	for v.core.HasReady() {
		rd := v.core.Ready()
		if err := v.wal.Append(rd.Persist...); err != nil {
			return fmt.Errorf("node: consensus WAL: %w", err)
		}
		for _, o := range rd.Messages {
			v.send(o.To, p2p.KindConsensus, o.Msg.Encode())
		}
		if len(rd.Finalized) > 0 {
			if err := v.onFinalized(rd.Finalized); err != nil {
				return err
			}
		}
		if rd.Build != nil {
			v.startBuild(ctx, rd.Build)
		}
		for _, ev := range rd.Evidence {
			v.log.Warn("equivocation evidence", "validator", ev.Validator, "kind", ev.Kind, "round", ev.A.Round)
			if h, err := v.n.submitEvidence(ev, v.ep.Number); err != nil {
				v.log.Warn("could not submit the evidence", "validator", ev.Validator, "err", err)
			} else {
				v.log.Info("evidence submitted", "validator", ev.Validator, "tx", h)
			}
		}
	}
	return nil
}

func (v *validator) publish() {
	st := v.core.Status()
	peers := 0
	for _, t := range v.lastSeen {
		if time.Since(t) < 5*time.Second {
			peers++
		}
	}
	target := max(st.CommittedHeight, st.FinalizedHeight)
	for _, h := range v.peerFinal {
		target = max(target, h)
	}
	sent, recv := v.tr.Traffic()
	v.n.setConsensus(ConsensusStatus{
		Validator: v.addr, Index: v.self, Validators: v.set.Len(), Round: st.Round,
		CommittedHeight: max(st.CommittedHeight, st.FinalizedHeight), FinalizedHeight: st.FinalizedHeight, Peers: peers,
		Epoch: v.ep.Number, EpochEnd: v.epochEnd, SyncTarget: target, BytesSent: sent, BytesReceived: recv, Role: RoleValidator,
	})
}
