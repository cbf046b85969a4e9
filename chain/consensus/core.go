package consensus

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Broadcast is the Outbound.To of a message for every validator.
const Broadcast = -1

// maxFutureRounds bounds how far ahead of its round a Core buffers votes
// and timeouts, so that a byzantine validator cannot make it allocate state
// for arbitrary rounds. Certificates (QCs in proposals and NEW_VIEWs) are
// accepted from any round, so a lagging validator still catches up.
const maxFutureRounds = 1000

// maxFetchBytes bounds the payload bytes of one Blocks answer (the
// transport's message limit is 16 MiB).
const maxFetchBytes = 8 << 20

// ErrStale is returned by Propose when the round it built for is over.
var ErrStale = errors.New("consensus: build request is stale")

// Application plugs block contents into consensus.
type Application interface {
	// Verify checks a proposed block's payload before this validator votes
	// for it. path holds the blocks between the last finalized block and b,
	// oldest first, ending with b's parent; it is empty when b's parent is
	// the last finalized block. Verify must be deterministic.
	Verify(b *Block, path []*Block) error
}

// Storage is the write-ahead log a node keeps for its core. The core never
// calls it: the node loop appends Ready.Persist (durably) before it sends
// Ready.Messages, compacts it as blocks are finalized, and hands Records to
// New as Config.WAL on start. chain/consensus/wal implements it on a file.
type Storage interface {
	Append(records ...Record) error
	Records() []Record
	Compact(finalizedRound uint64) error
}

// BuildRequest asks the application for a payload for a block at Height in
// Round on top of Parent (Path as in Application.Verify, ending with Parent
// unless Parent is finalized). Answer with Core.Propose.
type BuildRequest struct {
	Round  uint64
	Height uint64
	Parent *Block
	Path   []*Block
}

// Outbound is a message to send: to validator index To, or to all
// validators if To == Broadcast.
type Outbound struct {
	To  int
	Msg *Message
}

// Finalized is a finalized block with the QC that certifies it. Blocks are
// reported exactly once each, in height order.
type Finalized struct {
	Block *Block
	Hash  Hash
	QC    QC
	// Proof is set on the block the finality rule fired for (the last of
	// each batch; its ancestors are final with it): the certified child in
	// the next round. A node keeps it to prove finality to peers that sync.
	Proof *FinalityProof
}

// FinalityProof shows that a block B is final: Child is the consensus
// identity of B's child, proposed in round B.Round+1, and ChildQC its
// quorum certificate (docs/CONSENSUS.md §2, finality rule).
type FinalityProof struct {
	_       struct{} `cbor:",toarray"`
	Child   BlockID
	ChildQC QC
	// Via, when not empty, are the blocks between B and the finalized
	// block the rule fired for (oldest first): B is final as its ancestor.
	Via []BlockID
}

type pendingFinal struct {
	qc    *QC
	proof *FinalityProof
}

// Ready is the batch of outputs since the last call to Core.Ready. Handle
// it in field order: Persist (durably) before sending Messages.
type Ready struct {
	Persist   []Record
	Messages  []Outbound
	Finalized []Finalized
	HighQC    *QC // new highest QC (the committed tip), if it changed
	Build     *BuildRequest
	Evidence  []Evidence
}

// Empty reports whether there is nothing to do.
func (r *Ready) Empty() bool {
	return len(r.Persist) == 0 && len(r.Messages) == 0 && len(r.Finalized) == 0 &&
		r.HighQC == nil && r.Build == nil && len(r.Evidence) == 0
}

// Config configures a Core. Validators, Signer (unless an observer),
// Verifier, App and Root are required.
type Config struct {
	ChainID    uint64
	Validators *ValidatorSet
	Seed       types.Hash    // epoch seed: leader schedule and VRF input
	Self       types.Address // this validator; an address outside the set makes an observer
	Signer     Signer
	Verifier   Verifier
	App        Application
	// Root is the last finalized block (the genesis block at first start)
	// and RootQC its certificate; the genesis certificate is
	// {BlockHash: Root.Hash(), Height: Root.Height, Round: 0}.
	Root   *Block
	RootQC QC
	// WAL is everything this validator signed, as handed out in
	// Ready.Persist, oldest first. Records of rounds at or below Root.Round
	// may be dropped.
	WAL          []Record
	TimeoutTicks int // ticks without progress before NEW_VIEW; default 20, stretched up to 3× after failed rounds
	FetchDepth   int // ancestors asked for per block fetch; default 64
	Retain       int // finalized blocks kept in memory to serve fetches; default 256
	// MinRound is the first round this core may act in. A node that
	// reconfigures (a new validator set after an epoch boundary) starts the
	// new core above every round it signed in before, so that it never
	// signs two messages for one round across configurations.
	MinRound uint64
}

func (c *Config) fill() {
	if c.TimeoutTicks <= 0 {
		c.TimeoutTicks = 20
	}
	if c.FetchDepth <= 0 {
		c.FetchDepth = 64
	}
	if c.Retain <= 0 {
		c.Retain = 256
	}
}

type entry struct {
	b     *Block
	hash  Hash
	qc    *QC // certificate, once known
	final bool
}

type voteKey struct {
	hash   Hash
	height uint64
}

type voteSet struct {
	votes map[uint32]*Vote
	stake uint64
	done  bool
}

type roundState struct {
	sets          map[voteKey]*voteSet
	byVoter       map[uint32][]*Vote
	evidenced     map[uint32]bool
	first         *Proposal // first valid proposal seen; the one this validator votes for
	firstHash     Hash
	proposals     map[Hash]bool
	rejected      bool // the application rejected first
	deferred      bool // the application could not check first yet (ErrNotReady)
	propEvidenced bool
	newViews      map[uint32]*NewView
	nvStake       uint64
	tc            *TC
}

// Status is a snapshot of a Core's progress.
type Status struct {
	Round           uint64
	HighQCRound     uint64
	CommittedHeight uint64 // height of the highest certified block
	FinalizedHeight uint64
	FinalizedHash   Hash
	FinalizedRound  uint64
	Conflicts       int // finalization attempts that conflicted with the finalized chain (must stay 0)
}

// Core is the consensus state machine of one validator. It is not safe
// for concurrent use.
type Core struct {
	cfg  Config
	vs   *ValidatorSet
	self int

	round        uint64
	elapsed      int
	failures     int // consecutive rounds left without a QC; stretches the timeout
	votedRound   uint64
	timeoutRound uint64
	lastVote     *Vote
	myTimeout    *NewView
	myProposal   *Proposal
	building     uint64
	buildQC      QC
	buildTC      *TC

	highQC   QC
	blocks   map[Hash]*entry
	certs    map[Hash]*QC // verified QCs of blocks not yet known
	rounds   map[uint64]*roundState
	latestNV map[uint32]uint64
	root     *entry
	retained []*entry // finalized blocks kept, oldest first
	wanted   map[Hash]int
	pending  map[Hash]pendingFinal // finalization waiting for missing blocks
	leaders  map[uint64][]int      // schedule windows by first round

	conflicts int
	out       Ready
}

// New builds a Core and replays the WAL.
func New(cfg Config) (*Core, error) {
	cfg.fill()
	if cfg.Validators == nil || cfg.Verifier == nil || cfg.App == nil || cfg.Root == nil {
		return nil, errors.New("consensus: Validators, Verifier, App and Root are required")
	}
	c := &Core{
		cfg: cfg, vs: cfg.Validators, self: cfg.Validators.Index(cfg.Self),
		blocks: map[Hash]*entry{}, certs: map[Hash]*QC{}, rounds: map[uint64]*roundState{},
		latestNV: map[uint32]uint64{}, wanted: map[Hash]int{}, pending: map[Hash]pendingFinal{}, leaders: map[uint64][]int{},
	}
	if c.self >= 0 && cfg.Signer == nil {
		return nil, errors.New("consensus: a validator needs a Signer")
	}
	rh := cfg.Root.Hash()
	if cfg.RootQC.BlockHash != rh || cfg.RootQC.Height != cfg.Root.Height || cfg.RootQC.Round != cfg.Root.Round {
		return nil, errors.New("consensus: RootQC does not certify Root")
	}
	rqc := cfg.RootQC
	c.root = &entry{b: cfg.Root, hash: rh, qc: &rqc, final: true}
	c.blocks[rh] = c.root
	c.retained = []*entry{c.root}
	c.highQC = rqc
	var proposed uint64
	for i := range cfg.WAL {
		r := &cfg.WAL[i]
		if r.Round() <= cfg.Root.Round {
			continue
		}
		switch {
		case r.Vote != nil:
			if r.Vote.Round >= c.votedRound {
				c.votedRound, c.lastVote = r.Vote.Round, r.Vote
			}
			if r.Justify != nil {
				c.raiseHighQC(r.Justify)
			}
		case r.Timeout != nil:
			if r.Timeout.Round >= c.timeoutRound {
				c.timeoutRound, c.myTimeout = r.Timeout.Round, r.Timeout
			}
			c.raiseHighQC(&r.Timeout.HighQC)
		case r.Proposal != nil:
			if r.Proposal.Block.Round >= proposed {
				proposed, c.myProposal = r.Proposal.Block.Round, r.Proposal
			}
			c.raiseHighQC(&r.Proposal.Block.Justify)
		}
	}
	c.out.HighQC = nil
	c.round = max(c.highQC.Round+1, c.votedRound, c.timeoutRound, proposed, cfg.Root.Round+1, cfg.MinRound)
	if c.myProposal != nil {
		p := c.myProposal
		c.addBlock(&p.Block, p.Block.Hash(), -1)
		if p.Block.Round == c.round {
			c.broadcast(&Message{Proposal: p})
		}
	}
	if c.lastVote != nil && c.lastVote.Round == c.round {
		c.broadcast(&Message{Vote: c.lastVote})
	}
	if c.myTimeout != nil && c.myTimeout.Round == c.round {
		c.broadcast(&Message{NewView: c.myTimeout})
	}
	if c.blocks[c.highQC.BlockHash] == nil {
		c.want(c.highQC.BlockHash, -1)
	}
	c.maybePropose()
	return c, nil
}

func (c *Core) raiseHighQC(qc *QC) {
	if qc.Round > c.highQC.Round {
		c.highQC = *qc
		q := *qc
		c.out.HighQC = &q
	}
}

// Status reports progress.
func (c *Core) Status() Status {
	return Status{
		Round: c.round, HighQCRound: c.highQC.Round, CommittedHeight: c.highQC.Height,
		FinalizedHeight: c.root.b.Height, FinalizedHash: c.root.hash, FinalizedRound: c.root.b.Round,
		Conflicts: c.conflicts,
	}
}

// Certified returns the block of the highest QC with that QC, when the
// core holds the block (the root's QC is the root's).
func (c *Core) Certified() (*Block, QC, bool) {
	e := c.blocks[c.highQC.BlockHash]
	if e == nil {
		return nil, QC{}, false
	}
	return e.b, c.highQC, true
}

// Ready returns the outputs accumulated since the last call and clears
// them.
func (c *Core) Ready() Ready {
	r := c.out
	c.out = Ready{}
	return r
}

// HasReady reports whether Ready would return anything.
func (c *Core) HasReady() bool { return !c.out.Empty() }

// Leader returns the index of round's proposer.
func (c *Core) Leader(round uint64) int {
	base := round - round%leaderWindow
	w, ok := c.leaders[base]
	if !ok {
		w = c.vs.LeaderWindow(c.cfg.Seed, base)
		c.leaders[base] = w
	}
	return w[round-base]
}

func (c *Core) roundState(r uint64) *roundState {
	rs := c.rounds[r]
	if rs == nil {
		rs = &roundState{
			sets: map[voteKey]*voteSet{}, byVoter: map[uint32][]*Vote{}, evidenced: map[uint32]bool{},
			proposals: map[Hash]bool{}, newViews: map[uint32]*NewView{},
		}
		c.rounds[r] = rs
	}
	return rs
}

func (c *Core) send(to int, m *Message) {
	c.out.Messages = append(c.out.Messages, Outbound{To: to, Msg: m})
}
func (c *Core) broadcast(m *Message) { c.send(Broadcast, m) }

// Step processes a message from validator index from (or -1 if unknown).
// An error means the message was invalid; the state is unchanged by it.
func (c *Core) Step(from int, m *Message) error {
	switch {
	case m == nil:
		return fmt.Errorf("%w: nil", ErrInvalidMessage)
	case m.Proposal != nil:
		return c.onProposal(from, m.Proposal)
	case m.Vote != nil:
		return c.onVote(m.Vote)
	case m.NewView != nil:
		return c.onNewView(from, m.NewView)
	case m.Fetch != nil:
		c.onFetch(from, m.Fetch)
		return nil
	case m.Blocks != nil:
		return c.onBlocks(from, m.Blocks)
	}
	return fmt.Errorf("%w: empty", ErrInvalidMessage)
}

// Tick advances abstract time by one unit.
func (c *Core) Tick() {
	c.elapsed++
	if rs := c.rounds[c.round]; rs != nil && rs.deferred {
		rs.deferred = false
		c.tryVote()
	}
	if c.elapsed >= c.timeoutTicks() {
		c.elapsed = 0
		if c.self >= 0 && c.timeoutRound < c.round {
			c.timeout()
		} else if c.myTimeout != nil && c.myTimeout.Round == c.round {
			// Still stuck: say it again (messages may have been lost).
			c.broadcast(&Message{NewView: c.myTimeout})
			if c.lastVote != nil && c.lastVote.Round == c.round {
				c.broadcast(&Message{Vote: c.lastVote})
			}
		}
		c.retryPending()
		c.maybePropose()
		c.tryVote()
		for _, h := range sortedKeys(c.wanted) {
			n := c.wanted[h]
			c.wanted[h] = n + 1
			if n+1 > 8 {
				delete(c.wanted, h)
				continue
			}
			c.broadcast(&Message{Fetch: &Fetch{Hash: h, Depth: uint32(c.cfg.FetchDepth)}})
		}
	}
}

// timeoutTicks is the current round timeout: TimeoutTicks, plus half of it
// for every consecutive round that ended without a QC, up to 3×, so that
// rounds eventually outlast any fixed network delay (partial synchrony).
func (c *Core) timeoutTicks() int {
	return c.cfg.TimeoutTicks + c.cfg.TimeoutTicks*min(c.failures, 4)/2
}

// Propose hands in the payload for the last BuildRequest.
func (c *Core) Propose(round uint64, payload []byte) error {
	if c.self < 0 || round != c.round || c.building != round || (c.myProposal != nil && c.myProposal.Block.Round >= round) {
		return fmt.Errorf("%w: round %d, current %d", ErrStale, round, c.round)
	}
	c.building = 0
	parent := c.blocks[c.buildQC.BlockHash]
	if parent == nil {
		return fmt.Errorf("%w: parent pruned", ErrStale)
	}
	height := parent.b.Height + 1
	out, proof := vrfProve(c.cfg.Signer, c.cfg.Seed, height)
	b := Block{
		Height: height, Round: round, Parent: parent.hash, Proposer: c.cfg.Self,
		VRFOutput: out, VRFProof: proof, Justify: c.buildQC, Payload: payload,
	}
	h := b.Hash()
	p := &Proposal{Block: b, TC: c.buildTC, Signature: c.cfg.Signer.Sign(ProposalMessage(c.cfg.ChainID, h, height, round))}
	c.myProposal = p
	c.out.Persist = append(c.out.Persist, Record{Proposal: p})
	c.broadcast(&Message{Proposal: p})
	return c.onProposal(c.self, p)
}

// Leave is called before the node discards this core (an epoch switch):
// it times out the current round, so that the NEW_VIEW carries this
// validator's highest QC to peers still running the configuration. A
// timeout is always allowed to an honest validator; it only stops voting
// in the round.
func (c *Core) Leave() {
	if c.self < 0 {
		return
	}
	if c.timeoutRound < c.round {
		c.timeout()
	} else if c.myTimeout != nil {
		c.broadcast(&Message{NewView: c.myTimeout})
	}
}

func (c *Core) timeout() {
	r := c.round
	c.timeoutRound = r
	nv := &NewView{Round: r, HighQC: c.highQC, Voter: uint32(c.self)}
	nv.Signature = c.cfg.Signer.Sign(TimeoutMessage(c.cfg.ChainID, r, c.highQC.Round))
	c.myTimeout = nv
	c.out.Persist = append(c.out.Persist, Record{Timeout: nv})
	c.broadcast(&Message{NewView: nv})
	_ = c.onNewView(c.self, nv)
}

func (c *Core) enterRound(r uint64) {
	if r <= c.round {
		return
	}
	if c.highQC.Round+1 == r {
		c.failures = 0 // the previous round produced a QC
	} else {
		c.failures++
	}
	c.round, c.elapsed = r, 0
	if c.out.Build != nil && c.out.Build.Round < r {
		c.out.Build = nil
	}
	c.maybePropose()
	c.tryVote()
}

// maybePropose asks the application for a payload when this validator
// leads the current round and can justify a block.
func (c *Core) maybePropose() {
	r := c.round
	if c.self < 0 || c.Leader(r) != c.self || c.building == r || (c.myProposal != nil && c.myProposal.Block.Round >= r) {
		return
	}
	qc := c.highQC
	var tc *TC
	if qc.Round+1 != r {
		if rs := c.rounds[r-1]; rs != nil {
			tc = rs.tc
		}
		if tc == nil || qc.Round < tc.MaxHighQCRound() {
			return
		}
	}
	parent := c.blocks[qc.BlockHash]
	if parent == nil {
		c.want(qc.BlockHash, -1)
		return
	}
	path, ok := c.pathTo(qc.BlockHash)
	if !ok {
		return
	}
	c.building, c.buildQC, c.buildTC = r, qc, tc
	c.out.Build = &BuildRequest{Round: r, Height: parent.b.Height + 1, Parent: parent.b, Path: path}
}

// pathTo returns the blocks after the finalized root up to and including h,
// oldest first. ok is false if a block is missing (it is fetched) or h does
// not descend from the root.
func (c *Core) pathTo(h Hash) ([]*Block, bool) {
	es, st := c.chainTo(h)
	if st != chainOK {
		return nil, false
	}
	path := make([]*Block, len(es))
	for i, e := range es {
		path[i] = e.b
	}
	return path, true
}

const (
	chainOK = iota
	chainMissing
	chainConflict
)

func (c *Core) chainTo(h Hash) ([]*entry, int) {
	var path []*entry
	for h != c.root.hash {
		e := c.blocks[h]
		if e == nil {
			c.want(h, -1)
			return nil, chainMissing
		}
		if e.b.Height <= c.root.b.Height {
			return nil, chainConflict
		}
		path = append(path, e)
		h = e.b.Parent
	}
	slices.Reverse(path)
	return path, chainOK
}

// finalizedAt returns the retained finalized block at height, if any.
func (c *Core) finalizedAt(height uint64) *entry {
	first := c.retained[0].b.Height
	if height < first || height > c.root.b.Height {
		return nil
	}
	return c.retained[height-first]
}

// verifyQC checks a QC and returns the verified instance to keep. A QC
// identical to one already verified is not checked again; any other,
// even for the same block, is (an embedded QC must verify for everyone).
func (c *Core) verifyQC(qc *QC) (*QC, error) {
	if e := c.blocks[qc.BlockHash]; e != nil && sameQC(e.qc, qc) {
		return e.qc, nil
	}
	if k := c.certs[qc.BlockHash]; sameQC(k, qc) {
		return k, nil
	}
	if qc.Round == 0 {
		return nil, fmt.Errorf("%w: round 0 QC for a block other than the root", ErrInvalidQC)
	}
	st, ok := c.vs.bitmapStake(qc.Signers)
	if !ok || st < c.vs.Quorum() {
		return nil, fmt.Errorf("%w: signers below quorum", ErrInvalidQC)
	}
	pks := make([]PublicKey, 0, bitCount(qc.Signers))
	for i := range c.vs.Len() {
		if bitHas(qc.Signers, i) {
			pks = append(pks, c.vs.Key(i))
		}
	}
	if !c.cfg.Verifier.VerifyAggregate(pks, [][]byte{VoteMessage(c.cfg.ChainID, qc.BlockHash, qc.Height, qc.Round)}, qc.Signature) {
		return nil, fmt.Errorf("%w: %w", ErrInvalidQC, ErrInvalidSignature)
	}
	q := *qc
	return &q, nil
}

func sameQC(a, b *QC) bool {
	return a != nil && a.BlockHash == b.BlockHash && a.Round == b.Round && a.Height == b.Height &&
		bytes.Equal(a.Signers, b.Signers) && bytes.Equal(a.Signature, b.Signature)
}

func (c *Core) verifyTC(tc *TC) error {
	st, ok := c.vs.bitmapStake(tc.Signers)
	if !ok || st < c.vs.Quorum() || len(tc.HighQCRounds) != bitCount(tc.Signers) {
		return fmt.Errorf("%w: TC signers", ErrInvalidMessage)
	}
	var pks []PublicKey
	var msgs [][]byte
	j := 0
	for i := range c.vs.Len() {
		if bitHas(tc.Signers, i) {
			if tc.HighQCRounds[j] >= tc.Round {
				return fmt.Errorf("%w: TC reports a QC from its own round", ErrInvalidMessage)
			}
			pks = append(pks, c.vs.Key(i))
			msgs = append(msgs, TimeoutMessage(c.cfg.ChainID, tc.Round, tc.HighQCRounds[j]))
			j++
		}
	}
	if !c.cfg.Verifier.VerifyAggregate(pks, msgs, tc.Signature) {
		return fmt.Errorf("%w: TC %w", ErrInvalidMessage, ErrInvalidSignature)
	}
	return nil
}

func (c *Core) onProposal(from int, p *Proposal) error {
	b := &p.Block
	if b.Round <= c.root.b.Round || b.Height <= c.root.b.Height {
		return nil // old
	}
	h := b.Hash()
	rs := c.roundState(b.Round)
	if rs.proposals[h] {
		return nil
	}
	li := c.Leader(b.Round)
	if c.vs.Validator(li).Address != b.Proposer {
		return fmt.Errorf("%w: round %d", ErrNotProposer, b.Round)
	}
	pk := c.vs.Key(li)
	if !c.cfg.Verifier.Verify(pk, ProposalMessage(c.cfg.ChainID, h, b.Height, b.Round), p.Signature) {
		return fmt.Errorf("%w: proposal", ErrInvalidSignature)
	}
	if rs.first != nil && !rs.propEvidenced {
		// Proposer equivocation: two signed proposals in one round.
		f := &rs.first.Block
		rs.propEvidenced = true
		c.out.Evidence = append(c.out.Evidence, newEvidence(DoubleProposal, c.cfg.ChainID, b.Proposer,
			SignedHeader{BlockHash: rs.firstHash, Height: f.Height, Round: f.Round, Signature: rs.first.Signature},
			SignedHeader{BlockHash: h, Height: b.Height, Round: b.Round, Signature: p.Signature}))
	}
	if !vrfVerify(c.cfg.Verifier, pk, c.cfg.Seed, b.Height, b.VRFOutput, b.VRFProof) {
		return fmt.Errorf("%w: VRF proof", ErrInvalidBlock)
	}
	if b.Parent != b.Justify.BlockHash || b.Height != b.Justify.Height+1 || b.Round <= b.Justify.Round {
		return fmt.Errorf("%w: does not extend its QC", ErrInvalidBlock)
	}
	jqc, err := c.verifyQC(&b.Justify)
	if err != nil {
		return err
	}
	if b.Round != b.Justify.Round+1 {
		if p.TC == nil || p.TC.Round+1 != b.Round {
			return fmt.Errorf("%w: round %d skips rounds without a TC", ErrInvalidBlock, b.Round)
		}
		if b.Justify.Round < p.TC.MaxHighQCRound() {
			return fmt.Errorf("%w: extends QC round %d below the TC's %d", ErrInvalidBlock, b.Justify.Round, p.TC.MaxHighQCRound())
		}
		if err := c.verifyTC(p.TC); err != nil {
			return err
		}
	} else if p.TC != nil {
		return fmt.Errorf("%w: unexpected TC", ErrInvalidBlock)
	}
	rs.proposals[h] = true
	if rs.first == nil {
		rs.first, rs.firstHash = p, h
	}
	c.addBlock(b, h, from)
	c.onQC(jqc, from)
	if p.TC != nil {
		c.onTC(p.TC)
	}
	c.tryVote()
	return nil
}

// tryVote votes for the current round's proposal if the voting rule
// allows: one vote per round, never after timing out in it, only for a
// valid, justified block extending the finalized chain.
func (c *Core) tryVote() {
	r := c.round
	if c.self < 0 || c.votedRound >= r || c.timeoutRound >= r {
		return
	}
	rs := c.rounds[r]
	if rs == nil || rs.first == nil || rs.rejected {
		return
	}
	b := &rs.first.Block
	path, ok := c.pathTo(b.Parent)
	if !ok {
		return
	}
	if err := c.cfg.App.Verify(b, path); err != nil {
		if errors.Is(err, ErrNotReady) {
			rs.deferred = true // asked again on the next Tick
			return
		}
		rs.rejected = true
		return
	}
	h := rs.firstHash
	v := &Vote{BlockHash: h, Height: b.Height, Round: r, Voter: uint32(c.self)}
	v.Signature = c.cfg.Signer.Sign(VoteMessage(c.cfg.ChainID, h, b.Height, r))
	c.votedRound, c.lastVote = r, v
	j := b.Justify
	c.out.Persist = append(c.out.Persist, Record{Vote: v, Justify: &j})
	c.broadcast(&Message{Vote: v})
	_ = c.onVote(v)
}

func (c *Core) onVote(v *Vote) error {
	if int(v.Voter) >= c.vs.Len() {
		return fmt.Errorf("%w: voter %d", ErrInvalidMessage, v.Voter)
	}
	if v.Round <= c.root.b.Round || v.Height <= c.root.b.Height || v.Round > c.round+maxFutureRounds {
		return nil
	}
	rs := c.roundState(v.Round)
	k := voteKey{v.BlockHash, v.Height}
	prev := rs.byVoter[v.Voter]
	for _, o := range prev {
		if o.BlockHash == k.hash && o.Height == k.height {
			return nil // duplicate
		}
	}
	if len(prev) > 0 && !rs.evidenced[v.Voter] {
		pk := c.vs.Key(int(v.Voter))
		o := prev[0]
		if c.cfg.Verifier.Verify(pk, VoteMessage(c.cfg.ChainID, v.BlockHash, v.Height, v.Round), v.Signature) &&
			c.cfg.Verifier.Verify(pk, VoteMessage(c.cfg.ChainID, o.BlockHash, o.Height, o.Round), o.Signature) {
			rs.evidenced[v.Voter] = true
			c.out.Evidence = append(c.out.Evidence, newEvidence(DoubleVote, c.cfg.ChainID, c.vs.Validator(int(v.Voter)).Address,
				SignedHeader{BlockHash: o.BlockHash, Height: o.Height, Round: o.Round, Signature: o.Signature},
				SignedHeader{BlockHash: v.BlockHash, Height: v.Height, Round: v.Round, Signature: v.Signature}))
		}
	}
	if len(prev) >= 2 {
		return nil // a voter gets at most two buffered votes per round
	}
	rs.byVoter[v.Voter] = append(prev, v)
	set := rs.sets[k]
	if set == nil {
		set = &voteSet{votes: map[uint32]*Vote{}}
		rs.sets[k] = set
	}
	if set.done {
		return nil
	}
	set.votes[v.Voter] = v
	set.stake += c.vs.Validator(int(v.Voter)).Stake
	if set.stake >= c.vs.Quorum() {
		c.certify(v.Round, k, set)
	}
	return nil
}

// certify batch-verifies a vote set that reached quorum: one aggregate
// check, falling back to single checks to weed out bad signatures.
func (c *Core) certify(round uint64, k voteKey, set *voteSet) {
	msg := VoteMessage(c.cfg.ChainID, k.hash, k.height, round)
	agg, bm, ok := c.aggregate(set)
	if ok {
		ok = c.cfg.Verifier.VerifyAggregate(c.keys(bm), [][]byte{msg}, agg)
	}
	if !ok {
		for id, v := range set.votes {
			if !c.cfg.Verifier.Verify(c.vs.Key(int(id)), msg, v.Signature) {
				delete(set.votes, id)
				set.stake -= c.vs.Validator(int(id)).Stake
			}
		}
		if set.stake < c.vs.Quorum() {
			return
		}
		if agg, bm, ok = c.aggregate(set); !ok {
			return
		}
	}
	set.done = true
	qc := &QC{BlockHash: k.hash, Height: k.height, Round: round, Signers: bm, Signature: agg}
	c.onQC(qc, -1)
}

func (c *Core) aggregate(set *voteSet) ([]byte, Bitmap, bool) {
	bm := NewBitmap(c.vs.Len())
	var sigs [][]byte
	for i := range c.vs.Len() {
		if v := set.votes[uint32(i)]; v != nil {
			bitSet(bm, i)
			sigs = append(sigs, v.Signature)
		}
	}
	agg, err := c.cfg.Verifier.Aggregate(sigs)
	return agg, bm, err == nil
}

func (c *Core) keys(bm Bitmap) []PublicKey {
	var pks []PublicKey
	for i := range c.vs.Len() {
		if bitHas(bm, i) {
			pks = append(pks, c.vs.Key(i))
		}
	}
	return pks
}

// onQC takes a verified QC: remember the certificate, raise the high QC,
// move past its round and check the finality rule.
func (c *Core) onQC(qc *QC, from int) {
	if qc.Height <= c.root.b.Height {
		return
	}
	if e := c.blocks[qc.BlockHash]; e != nil {
		if e.qc == nil && e.b.Round == qc.Round && e.b.Height == qc.Height {
			e.qc = qc
		}
	} else if c.certs[qc.BlockHash] == nil {
		c.certs[qc.BlockHash] = qc
		c.want(qc.BlockHash, from)
	}
	c.raiseHighQC(qc)
	if qc.Round >= c.round {
		c.enterRound(qc.Round + 1)
	}
	c.checkFinal(qc.BlockHash)
}

// checkFinal applies the finality rule with h as the certified child: if
// h's block has a QC and was proposed in the round right after its
// parent's, the parent is final.
func (c *Core) checkFinal(h Hash) {
	e := c.blocks[h]
	if e == nil || e.qc == nil {
		return
	}
	if b := e.b; b.Round == b.Justify.Round+1 {
		j := b.Justify
		c.finalize(b.Parent, &j, &FinalityProof{Child: b.ID(), ChildQC: *e.qc})
	}
}

func (c *Core) finalize(h Hash, qc *QC, proof *FinalityProof) {
	if e := c.blocks[h]; e != nil && e.final {
		return
	}
	if qc.Height <= c.root.b.Height {
		if f := c.finalizedAt(qc.Height); f != nil && f.hash != h {
			c.conflicts++ // a different block at a finalized height: safety violated
		}
		return
	}
	path, st := c.chainTo(h)
	switch st {
	case chainMissing:
		c.pending[h] = pendingFinal{qc, proof}
		return
	case chainConflict:
		c.conflicts++
		return
	}
	delete(c.pending, h)
	for i, e := range path {
		b := e.b
		cert := *qc
		if i+1 < len(path) {
			cert = path[i+1].b.Justify
		}
		e.final = true
		if e.qc == nil {
			q := cert
			e.qc = &q
		}
		f := Finalized{Block: b, Hash: e.hash, QC: cert}
		if i+1 == len(path) {
			f.Proof = proof
		}
		c.out.Finalized = append(c.out.Finalized, f)
		c.root = e
		c.retained = append(c.retained, e)
	}
	c.prune()
}

// prune forgets what finality made irrelevant.
func (c *Core) prune() {
	rh, rr := c.root.b.Height, c.root.b.Round
	for h, e := range c.blocks {
		if !e.final && e.b.Height <= rh {
			delete(c.blocks, h)
		}
	}
	if n := len(c.retained) - c.cfg.Retain; n > 0 {
		for _, e := range c.retained[:n] {
			delete(c.blocks, e.hash)
		}
		c.retained = slices.Delete(c.retained, 0, n)
	}
	for h, q := range c.certs {
		if q.Height <= rh {
			delete(c.certs, h)
		}
	}
	for h, q := range c.pending {
		if q.qc.Height <= rh {
			delete(c.pending, h)
		}
	}
	for r := range c.rounds {
		if r < rr {
			delete(c.rounds, r)
		}
	}
	for r := range c.leaders {
		if r+leaderWindow <= rr {
			delete(c.leaders, r)
		}
	}
}

func (c *Core) addBlock(b *Block, h Hash, from int) *entry {
	if e := c.blocks[h]; e != nil {
		return e
	}
	e := &entry{b: b, hash: h}
	if q := c.certs[h]; q != nil {
		if q.Round == b.Round && q.Height == b.Height {
			e.qc = q
		}
		delete(c.certs, h)
	}
	c.blocks[h] = e
	delete(c.wanted, h)
	if c.blocks[b.Parent] == nil && b.Height-1 > c.root.b.Height {
		c.want(b.Parent, from)
	}
	c.checkFinal(h)
	return e
}

func (c *Core) want(h Hash, from int) {
	if c.blocks[h] != nil {
		return
	}
	if _, ok := c.wanted[h]; ok {
		return
	}
	c.wanted[h] = 0
	to := Broadcast
	if from >= 0 && from != c.self {
		to = from
	}
	c.send(to, &Message{Fetch: &Fetch{Hash: h, Depth: uint32(c.cfg.FetchDepth)}})
}

func (c *Core) onFetch(from int, f *Fetch) {
	if from < 0 || from == c.self {
		return
	}
	var bs []Block
	h := f.Hash
	size := 0
	for range min(int(f.Depth), c.cfg.FetchDepth) + 1 {
		e := c.blocks[h]
		if e == nil || (len(bs) > 0 && size+len(e.b.Payload) > maxFetchBytes) {
			break
		}
		size += len(e.b.Payload)
		bs = append(bs, *e.b)
		if e == c.retained[0] {
			break
		}
		h = e.b.Parent
	}
	if len(bs) > 0 {
		c.send(from, &Message{Blocks: bs})
	}
}

func (c *Core) onBlocks(from int, bs []Block) error {
	added := false
	for i := range bs {
		b := &bs[i]
		h := b.Hash()
		if _, ok := c.wanted[h]; !ok || c.blocks[h] != nil {
			continue // unsolicited
		}
		if b.Height <= c.root.b.Height || b.Parent != b.Justify.BlockHash || b.Height != b.Justify.Height+1 {
			continue
		}
		jqc, err := c.verifyQC(&b.Justify)
		if err != nil {
			if b.Justify.BlockHash != c.root.hash {
				return err
			}
			jqc = c.root.qc
		}
		bc := *b
		c.addBlock(&bc, h, from)
		c.onQC(jqc, from)
		added = true
	}
	if added {
		c.retryPending()
		c.maybePropose()
		c.tryVote()
	}
	return nil
}

func (c *Core) onTC(tc *TC) {
	rs := c.roundState(tc.Round)
	if rs.tc == nil {
		rs.tc = tc
	}
	if tc.Round >= c.round {
		c.enterRound(tc.Round + 1)
	}
}

func (c *Core) onNewView(from int, nv *NewView) error {
	if int(nv.Voter) >= c.vs.Len() {
		return fmt.Errorf("%w: voter %d", ErrInvalidMessage, nv.Voter)
	}
	if nv.Round <= c.root.b.Round {
		return nil
	}
	if nv.HighQC.Round >= nv.Round {
		return fmt.Errorf("%w: NEW_VIEW reports a QC of its own round", ErrInvalidMessage)
	}
	future := nv.Round > c.round+maxFutureRounds
	var rs *roundState
	if !future {
		rs = c.roundState(nv.Round)
		if rs.newViews[nv.Voter] != nil {
			return nil
		}
	} else if c.latestNV[nv.Voter] >= nv.Round {
		return nil
	}
	if !c.cfg.Verifier.Verify(c.vs.Key(int(nv.Voter)), TimeoutMessage(c.cfg.ChainID, nv.Round, nv.HighQC.Round), nv.Signature) {
		return fmt.Errorf("%w: NEW_VIEW", ErrInvalidSignature)
	}
	var hqc *QC
	if nv.HighQC.BlockHash == c.root.hash && nv.HighQC.Round == c.root.b.Round {
		hqc = nil // the finalized root: nothing to learn
	} else {
		q, err := c.verifyQC(&nv.HighQC)
		if err != nil {
			return err
		}
		hqc = q
	}
	c.latestNV[nv.Voter] = max(c.latestNV[nv.Voter], nv.Round)
	if hqc != nil {
		c.onQC(hqc, from)
	}
	if future {
		c.syncRound()
		return nil
	}
	rs.newViews[nv.Voter] = nv
	rs.nvStake += c.vs.Validator(int(nv.Voter)).Stake
	if rs.tc == nil && rs.nvStake >= c.vs.Quorum() {
		c.onTC(c.formTC(nv.Round, rs))
		return nil
	}
	c.syncRound()
	return nil
}

func (c *Core) formTC(r uint64, rs *roundState) *TC {
	tc := &TC{Round: r, Signers: NewBitmap(c.vs.Len())}
	var sigs [][]byte
	for i := range c.vs.Len() {
		if nv := rs.newViews[uint32(i)]; nv != nil {
			bitSet(tc.Signers, i)
			tc.HighQCRounds = append(tc.HighQCRounds, nv.HighQC.Round)
			sigs = append(sigs, nv.Signature)
		}
	}
	agg, err := c.cfg.Verifier.Aggregate(sigs) // individually verified already
	if err != nil {
		panic(fmt.Sprintf("consensus: aggregate verified timeouts: %v", err))
	}
	tc.Signature = agg
	return tc
}

// syncRound joins a higher round when validators holding more than the
// faulty stake bound (so at least one honest validator) have timed out in
// it or later, and times out in the current round when they have timed out
// here. Rounds only matter for liveness; this never affects safety.
func (c *Core) syncRound() {
	if c.self < 0 {
		return
	}
	type vr struct {
		round uint64
		stake uint64
	}
	var rs []vr
	for id, r := range c.latestNV {
		if int(id) != c.self && r >= c.round {
			rs = append(rs, vr{r, c.vs.Validator(int(id)).Stake})
		}
	}
	slices.SortFunc(rs, func(a, b vr) int {
		switch {
		case a.round > b.round:
			return -1
		case a.round < b.round:
			return 1
		}
		return 0
	})
	var acc uint64
	for _, x := range rs {
		acc += x.stake
		if acc > c.vs.maxFaulty() {
			if x.round > c.round {
				c.enterRound(x.round)
			}
			if x.round == c.round && c.timeoutRound < c.round {
				c.timeout()
			}
			return
		}
	}
}

func (c *Core) retryPending() {
	for _, h := range sortedKeys(c.pending) {
		if q, ok := c.pending[h]; ok {
			c.finalize(h, q.qc, q.proof)
		}
	}
}

// sortedKeys gives map iteration a fixed order so that outputs are
// deterministic.
func sortedKeys[V any](m map[Hash]V) []Hash {
	ks := make([]Hash, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b Hash) int { return bytes.Compare(a[:], b[:]) })
	return ks
}
