package node

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/consensus/p2p"
	"github.com/cowboy-foundation/cowboy/chain/consensus/wal"
	"github.com/cowboy-foundation/cowboy/chain/execution"
	"github.com/cowboy-foundation/cowboy/chain/state"
	"github.com/cowboy-foundation/cowboy/chain/store"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Network makes a node a validator of a consensus network (the genesis
// lists several validators with BLS keys). Key is required.
type Network struct {
	Key *bls.SecretKey // consensus (BLS) key; also proves the VRF
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

// payload is what consensus orders for the node: the proposer's timestamp
// and the transactions, in order. The block header (with the state root
// after execution) is derived from it on finality by every node alike.
type payload struct {
	_         struct{} `cbor:",toarray"`
	Timestamp uint64
	Txs       []types.Bytes
}

func decodePayload(b []byte) (*payload, error) {
	var p payload
	if err := codec.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("node: decode block payload: %w", err)
	}
	return &p, nil
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
	peerFinal   map[int]uint64
	genTs       uint64
	tick        time.Duration
	timeout     int

	flog     *finalLog
	wal      *wal.WAL
	tr       *p2p.Transport
	core     *consensus.Core
	root     *consensus.Block // last finalized
	rootHash types.Hash

	out      map[int]chan outMsg
	stopOut  context.CancelFunc
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

	// Transactions waiting to be gossiped.
	gmu   sync.Mutex
	gbuf  []types.Bytes
	gwake chan struct{}
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
	var g0 types.Hash
	if err := n.store.View(func(v *store.View) error {
		b, err := v.Block(0)
		if err == nil {
			g0 = b.Hash()
		}
		return err
	}); err != nil {
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
		out: map[int]chan outMsg{}, built: make(chan builtPayload, 1), lastSeen: map[int]time.Time{}, peerFinal: map[int]uint64{},
		qwake: make(chan struct{}, 1), gwake: make(chan struct{}, 1), lastFin: time.Now(), txIn: make(chan []byte, gossipBacklog),
	}
	ok := false
	defer func() {
		if !ok {
			v.close()
		}
	}()
	var err error
	if v.flog, err = openFinalLog(ConsensusDBPath(n.cfg.Home)); err != nil {
		return nil, err
	}
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
	if v.tr, err = p2p.New(p2p.Config{Key: nc.Key, Listen: listen, Peers: peers, Logger: v.log}); err != nil {
		return nil, err
	}
	ok = true
	return v, nil
}

// configure loads the epoch in force after the root from state: the
// validator set and seed, this node's place in it, the epoch's last height,
// and the first round the new core may use. It returns the transport peers.
func (v *validator) configure() ([]p2p.Peer, error) {
	var ep *execution.Epoch
	if err := v.n.store.View(func(sv *store.View) error {
		var err error
		ep, err = execution.ReadEpoch(sv)
		return err
	}); err != nil {
		return nil, err
	}
	if ep == nil {
		return nil, errors.New("node: no validator set in state (the genesis lists no BLS validators)")
	}
	vals := make([]consensus.Validator, len(ep.Members))
	peers := make([]p2p.Peer, len(ep.Members))
	mine := v.signer.(consensus.BLSSigner).Key.PublicKey().Bytes()
	v.self, v.addr = -1, types.Address{}
	for i, m := range ep.Members {
		vals[i] = consensus.Validator{Address: m.Address, PubKey: m.BLSKey, Stake: m.Weight}
		peers[i] = p2p.Peer{Index: i, Addr: v.n.cfg.Network.Bootstrap[m.Address], Key: m.BLSKey}
		if string(m.BLSKey) == string(mine) {
			v.self, v.addr = i, m.Address
		}
	}
	set, err := consensus.NewValidatorSet(vals, consensus.BLS{})
	if err != nil {
		return nil, err
	}
	v.ep, v.set = ep, set
	v.domain = consensus.EpochDomain(v.chainID, ep.Number)
	v.seed = ep.Seed
	if ep.Number == 0 {
		v.seed = v.genesisSeed
	}
	// The epoch ends at the first multiple of the epoch length at or after
	// its start; blocks above it are empty fillers that only finalize it.
	v.epochEnd = ((ep.StartHeight-1)/v.epochLen + 1) * v.epochLen
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
	v.switching = false
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
			v.flushGossip()
		case <-v.gwake:
			v.flushGossip()
		case <-hello.C:
			v.hello(ctx)
			st := v.core.Status()
			v.log.Debug("consensus status", "epoch", v.ep.Number, "round", st.Round, "high_qc_round", st.HighQCRound,
				"committed", st.CommittedHeight, "finalized", st.FinalizedHeight, "switching", v.switching, "dropped", v.tr.Dropped())
		case in := <-v.tr.Inbound():
			v.lastSeen[in.From] = time.Now()
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
	if v.stopOut != nil {
		v.stopOut()
	}
	sctx, stop := context.WithCancel(ctx)
	v.stopOut = stop
	v.out = map[int]chan outMsg{}
	for i := range v.set.Len() {
		if i == v.self {
			continue
		}
		ch := make(chan outMsg, 1024)
		v.out[i] = ch
		v.goTracked(func() { v.sender(sctx, i, ch) })
	}
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
	v.n.setConsensus(ConsensusStatus{
		Validator: v.addr, Index: v.self, Validators: v.set.Len(), Round: st.Round,
		CommittedHeight: max(st.CommittedHeight, st.FinalizedHeight), FinalizedHeight: st.FinalizedHeight, Peers: peers,
		Epoch: v.ep.Number, EpochEnd: v.epochEnd,
	})
}

// send queues a message for one validator or, with consensus.Broadcast,
// for all; a full queue drops it (the protocol tolerates loss).
func (v *validator) send(to int, kind byte, data []byte) {
	for i, ch := range v.out {
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
func (v *validator) gossip(tx *types.Tx) {
	v.gmu.Lock()
	v.gbuf = append(v.gbuf, tx.Encode())
	first, full := len(v.gbuf) == 1, len(v.gbuf) >= maxGossipBatch
	v.gmu.Unlock()
	wake := func() {
		select {
		case v.gwake <- struct{}{}:
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
	v.gmu.Lock()
	batch := v.gbuf
	v.gbuf = nil
	v.gmu.Unlock()
	if len(batch) > 0 {
		v.send(consensus.Broadcast, p2p.KindTx, codec.MustMarshal(batch))
	}
}

// sender delivers one peer's queue. A dead peer costs only its own queue.
func (v *validator) sender(ctx context.Context, to int, ch chan outMsg) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-ch:
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := v.tr.Send(sctx, to, m.kind, m.data)
			cancel()
			if err != nil && ctx.Err() == nil {
				v.log.Debug("send", "to", to, "err", err)
			}
		}
	}
}

func (v *validator) onInbound(ctx context.Context, in p2p.Inbound) {
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
		var batch []types.Bytes
		if err := codec.Unmarshal(data, &batch); err != nil {
			continue
		}
		txs := make([]*types.Tx, 0, len(batch))
		var fresh []*types.Tx
		for _, raw := range batch {
			tx, checked, err := v.n.decode(raw)
			if err != nil {
				break // a peer sending garbage loses the rest of its batch
			}
			if _, ok := v.n.pool.Get(tx.Hash()); ok {
				continue
			}
			txs = append(txs, tx)
			if !checked {
				fresh = append(fresh, tx)
			}
		}
		bad := map[types.Hash]bool{}
		for i, err := range v.n.checkAll(fresh) {
			if err != nil {
				bad[fresh[i].Hash()] = true
			}
		}
		for _, tx := range txs {
			if bad[tx.Hash()] {
				continue
			}
			if _, err := v.n.submit(tx, false); err != nil {
				v.log.Debug("gossiped transaction refused", "tx", tx.Hash(), "err", err)
			}
		}
	}
}

// submitEvidence sends equivocation evidence to the Validator Registry in
// a transaction signed by this validator's account key (Network.AccountKey),
// which pays its fee; the registry slashes and jails the offender.
func (n *Node) submitEvidence(ev consensus.Evidence, epoch uint64) (types.Hash, error) {
	key := n.cfg.Network.AccountKey
	if key == nil {
		return types.Hash{}, errors.New("no account key to pay for it (validator.key)")
	}
	from := types.PubkeyToAddress(key.PublicKey)
	payload, err := types.EncodeInstruction(&types.ValidatorEvidence{Evidence: ev.Encode(), Epoch: epoch})
	if err != nil {
		return types.Hash{}, err
	}
	to := types.ValidatorRegistryAddress
	var d types.TxData
	if err := n.store.View(func(sv *store.View) error {
		acc, err := state.ReadAccount(sv, from)
		if err != nil {
			return err
		}
		bf, err := execution.Basefees(sv)
		if err != nil {
			return err
		}
		const cycles, cells = 2_000_000, 20_000
		est := n.gen.Fees.Suggest(bf, cycles, cells, 0, 0)
		d = types.TxData{ChainID: n.gen.ChainID, Nonce: n.pool.PendingNonce(from, acc.Nonce), To: &to, Value: new(big.Int),
			CyclesLimit: cycles, CellsLimit: cells, MaxFeePerCycle: est.MaxFeePerCycle, MaxFeePerCell: est.MaxFeePerCell,
			TipPerCycle: est.TipPerCycle, TipPerCell: est.TipPerCell, Payload: payload}
		return nil
	}); err != nil {
		return types.Hash{}, err
	}
	tx, err := types.NewTx(d)
	if err != nil {
		return types.Hash{}, err
	}
	signed, err := types.SignTx(tx, key)
	if err != nil {
		return types.Hash{}, err
	}
	return n.submit(signed, true)
}

// Verify is the consensus.Application: what an honest validator checks
// before voting for a block. Execution happens on finality, so this checks
// what can be checked without the parent's state: the payload decodes, the
// timestamp moves forward and is not far ahead of this node's clock, and
// every transaction is well formed and signed for this chain.
func (v *validator) Verify(b *consensus.Block, path []*consensus.Block) error {
	if len(b.Payload) > maxPayload {
		return fmt.Errorf("payload of %d bytes", len(b.Payload))
	}
	p, err := decodePayload(b.Payload)
	if err != nil {
		return err
	}
	parent := v.root
	if len(path) > 0 {
		parent = path[len(path)-1]
	}
	pts, err := v.timestampOf(parent)
	if err != nil {
		return err
	}
	if p.Timestamp <= pts {
		return fmt.Errorf("timestamp %d not after the parent's %d", p.Timestamp, pts)
	}
	if limit := uint64(time.Now().Add(maxClockDrift).UnixMilli()); p.Timestamp > limit {
		return fmt.Errorf("timestamp %d ahead of this node's clock", p.Timestamp)
	}
	if len(p.Txs) > v.n.cfg.MaxBlockTxs {
		return fmt.Errorf("%d transactions, limit %d", len(p.Txs), v.n.cfg.MaxBlockTxs)
	}
	if b.Height > v.epochEnd && len(p.Txs) > 0 {
		return fmt.Errorf("height %d is past the epoch's last block %d: only empty blocks", b.Height, v.epochEnd)
	}
	// Transactions this node admitted or saw before were checked then;
	// the others are checked in parallel.
	seen := make(map[types.Hash]bool, len(p.Txs))
	var fresh []*types.Tx
	var at []int
	for i, raw := range p.Txs {
		tx, checked, err := v.n.decode(raw)
		if err != nil {
			return fmt.Errorf("tx %d: %w", i, err)
		}
		if seen[tx.Hash()] {
			return fmt.Errorf("tx %d (%s) twice", i, tx.Hash())
		}
		seen[tx.Hash()] = true
		if !checked {
			fresh, at = append(fresh, tx), append(at, i)
		}
	}
	for k, err := range v.n.checkAll(fresh) {
		if err != nil {
			return fmt.Errorf("tx %d (%s): %w", at[k], fresh[k].Hash(), err)
		}
	}
	return nil
}

func (v *validator) timestampOf(b *consensus.Block) (uint64, error) {
	if b.Height == 0 {
		return v.genTs, nil
	}
	p, err := decodePayload(b.Payload)
	if err != nil {
		return 0, err
	}
	return p.Timestamp, nil
}

// onFinalized logs finalized blocks durably and queues them for execution.
//
// Blocks past the epoch's last block are empty fillers of the old
// configuration: they finalize the last block and are dropped. When the
// last block is final only as an ancestor of a filler, its record gets a
// proof through the fillers (FinalityProof.Via), so that peers syncing can
// check it.
func (v *validator) onFinalized(fs []consensus.Finalized) error {
	var recs []finalRecord
	for i, f := range fs {
		if f.Block.Height > v.epochEnd || v.switching {
			break
		}
		r := finalRecord{Block: *f.Block, QC: f.QC, Proof: f.Proof}
		if f.Block.Height == v.epochEnd {
			v.switching = true
			if last := fs[len(fs)-1]; r.Proof == nil && last.Proof != nil {
				p := *last.Proof
				p.Via = nil
				for _, g := range fs[i+1:] {
					p.Via = append(p.Via, g.Block.ID())
				}
				r.Proof = &p
			}
		}
		recs = append(recs, r)
	}
	if len(recs) == 0 {
		return nil
	}
	if err := v.flog.Put(recs...); err != nil {
		return err
	}
	v.advance(recs)
	return nil
}

func (v *validator) advance(recs []finalRecord) {
	last := recs[len(recs)-1]
	prevRound := v.root.Round
	v.root = &last.Block
	v.rootHash = last.Block.Hash()
	v.lastFin = time.Now()
	v.qmu.Lock()
	v.queue = append(v.queue, recs...)
	v.qmu.Unlock()
	select {
	case v.qwake <- struct{}{}:
	default:
	}
	// Drop WAL records the new root makes irrelevant, every 100 rounds.
	if last.Block.Round/100 != prevRound/100 {
		if err := v.wal.Compact(last.Block.Round); err != nil {
			v.log.Warn("compact consensus WAL", "err", err)
		}
	}
}

// executor executes finalized blocks in order and commits them to the
// chain store. A failure is retried: the block is final, so the node must
// execute it; only a deterministic outcome may be committed.
func (v *validator) executor(ctx context.Context) error {
	for {
		v.qmu.Lock()
		var next *finalRecord
		if len(v.queue) > 0 {
			next = &v.queue[0]
		}
		v.qmu.Unlock()
		if next == nil {
			select {
			case <-ctx.Done():
				return nil
			case <-v.qwake:
				continue
			}
		}
		if err := v.n.executeFinal(ctx, next); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			v.log.Error("executing finalized block failed; retrying", "height", next.Block.Height, "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		v.qmu.Lock()
		v.queue = slices.Delete(v.queue, 0, 1)
		v.qmu.Unlock()
	}
}

// executeFinal executes a finalized consensus block on top of the chain
// head and commits it. Its header is derived from the consensus block and
// the execution result alone, so every node commits the same header.
// Randomness comes from the parent's beacon value R_{n-1}: the block's own
// VRF output is revealed with it and is usable from the next block on.
func (n *Node) executeFinal(ctx context.Context, r *finalRecord) error {
	b := &r.Block
	head, err := n.store.Head()
	if err != nil {
		return err
	}
	if b.Height <= head.Height {
		return nil // committed before a restart
	}
	if b.Height != head.Height+1 {
		return fmt.Errorf("node: finalized block %d does not follow the head %d", b.Height, head.Height)
	}
	p, err := decodePayload(b.Payload)
	if err != nil {
		p = &payload{} // cannot happen for a block honest validators voted for
	}
	txs := n.appendTxs(nil, p.Txs)
	seed := head.VRFOutput // R_{n-1}
	if head.Height == 0 {
		seed = n.gen.Seed(head.Hash())
	}
	ts := max(p.Timestamp, head.Timestamp+1)
	env := execution.BlockEnv{Height: b.Height, Timestamp: ts, Proposer: b.Proposer, Seed: seed, Signers: b.Justify.Signers}
	var res *execution.Result
	if err := n.store.View(func(v *store.View) error {
		var err error
		res, err = n.exec.Apply(ctx, v, env, txs, execution.Ordered)
		return err
	}); err != nil {
		return err
	}
	blk, err := n.store.Commit(res.Writes, func(root types.Hash) (*types.Block, []*types.Receipt, error) {
		blk := res.Block(n.gen.ChainID, head, env, root)
		// The consensus fields: the round, the VRF reveal and the QC that
		// justified the block.
		blk.Header.Round, blk.Header.VRFOutput, blk.Header.VRFProof = b.Round, b.VRFOutput, b.VRFProof
		blk.Header.ParentQC = codec.MustMarshal(&b.Justify)
		return blk, res.Receipts, nil
	})
	if err != nil {
		return err
	}
	ntx := len(blk.Txs)
	n.pace.observe(ntx, time.Now())
	n.resizePool()
	if ntx > 0 {
		n.log.Info("block", "height", blk.Header.Height, "txs", ntx, "round", b.Round, "hash", blk.Hash())
	} else {
		n.log.Debug("block", "height", blk.Header.Height, "round", b.Round, "hash", blk.Hash())
	}
	return n.afterCommit(res)
}
