// Package sim is a deterministic simulator for chain/consensus: N
// validators exchange encoded messages over a virtual network on a single
// goroutine, in virtual time, driven by one seeded math/rand/v2 source.
// The network delays, drops and partitions messages and crashes and
// restarts validators (from their WAL) until a heal time; byzantine
// validators equivocate as proposers and double-vote. Run checks safety
// throughout (no two honest validators ever finalize different blocks at
// one height, and every finalized chain is contiguous) and liveness after
// the heal (every honest validator finalizes new blocks).
//
// The same seed always produces the same run.
package sim

import (
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/consensus/vrf"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// Config describes one simulated run. The zero value (plus a Seed) is a
// fault-free network of four validators.
type Config struct {
	Seed       uint64
	N          int      // validators; default 4
	Stakes     []uint64 // per validator; default all 1
	Byzantine  int      // the last Byzantine validators misbehave
	Equivocate bool     // byzantine proposers send conflicting proposals to the two halves of the network
	DoubleVote bool     // byzantine validators vote for every proposal they see
	// Adversarial byzantine validators time out almost at once in every
	// round, report the lowest QC they can in NEW_VIEW and send each vote
	// to a random half of the validators, so that QCs are seen by few and
	// timeout certificates hide them: the schedule that breaks a two-chain
	// rule without the consecutive-round condition.
	Adversarial bool
	MinDelay    int     // message delay in ticks; default 1
	MaxDelay    int     // default 3
	Drop        float64 // drop probability before the heal
	Partitions  bool    // random partitions before the heal
	Crashes     bool    // crash and restart honest validators before the heal
	HealAt      int     // tick at which faults stop; default 150
	Ticks       int     // length of the run; default HealAt + 300
	Timeout     int     // consensus TimeoutTicks; default 12
	MinGrowth   uint64  // finalized blocks every honest validator must add after the heal; default 3
	BLS         bool    // real BLS12-381 instead of InsecureVerifier
}

func (c *Config) fill() {
	if c.N <= 0 {
		c.N = 4
	}
	if c.MinDelay <= 0 {
		c.MinDelay = 1
	}
	if c.MaxDelay < c.MinDelay {
		c.MaxDelay = max(c.MinDelay, 3)
	}
	if c.HealAt <= 0 {
		c.HealAt = 150
	}
	if c.Ticks <= 0 {
		c.Ticks = c.HealAt + 300
	}
	if c.Timeout <= 0 {
		c.Timeout = 12
	}
	if c.MinGrowth == 0 {
		c.MinGrowth = 3
	}
}

// Result summarises a run.
type Result struct {
	FinalizedAtHeal uint64   // highest honest finalized height at the heal
	Finalized       []uint64 // finalized height of every validator at the end
	Evidence        int      // equivocation evidence produced by honest validators (all verified)
	Messages        int      // messages delivered
	Restarts        int
	Rounds          uint64 // highest round reached
	LowProposals    int    // adversarial proposals built below the proposer's highest QC
	CertifiedForks  int    // heights with QCs for two different blocks
}

// ErrSafety and ErrLiveness classify run failures.
var (
	ErrSafety   = errors.New("sim: safety violated")
	ErrLiveness = errors.New("sim: no progress after heal")
	ErrProtocol = errors.New("sim: honest message rejected")
)

type event struct {
	at   int
	seq  uint64
	from int
	to   int
	data []byte
}

type queue []*event

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *queue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

type app struct{}

func (app) Verify(b *consensus.Block, path []*consensus.Block) error {
	if len(b.Payload) == 0 {
		return errors.New("empty payload")
	}
	return nil
}

type node struct {
	id        int
	core      *consensus.Core
	signer    consensus.Signer
	wal       []consensus.Record
	final     []consensus.Finalized
	down      bool
	downUntil int
	byz       bool
}

type simulation struct {
	cfg      Config
	rng      *rand.Rand
	vs       *consensus.ValidatorSet
	verifier consensus.Verifier
	addrs    []types.Address
	seed     types.Hash
	genesis  *consensus.Block
	nodes    []*node
	q        queue
	seq      uint64
	now      int
	group    []int // partition group per validator; nil = connected
	byHeight map[uint64]types.Hash
	seen     map[types.Hash]*consensus.Block // every proposed block (the adversary is omniscient)
	certs    map[types.Hash]consensus.QC     // every QC sent in any message
	nvs      map[uint64]map[uint32]*consensus.NewView
	res      Result
	err      error
}

// Run executes one simulation.
func Run(cfg Config) (*Result, error) {
	s, err := run(cfg)
	if s == nil {
		return nil, err
	}
	return &s.res, err
}

func run(cfg Config) (*simulation, error) {
	cfg.fill()
	s := &simulation{
		cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x636f77626f79)), byHeight: map[uint64]types.Hash{},
		seen: map[types.Hash]*consensus.Block{}, certs: map[types.Hash]consensus.QC{},
		nvs: map[uint64]map[uint32]*consensus.NewView{},
	}
	if err := s.setup(); err != nil {
		return nil, err
	}
	nextNet := 0
	for s.now = 0; s.now < cfg.Ticks && s.err == nil; s.now++ {
		if s.now < cfg.HealAt && s.now >= nextNet {
			s.perturb()
			nextNet = s.now + 20 + s.rng.IntN(60)
		}
		if s.now == cfg.HealAt {
			s.group = nil
			for _, n := range s.nodes {
				if n.down {
					s.restart(n)
				}
			}
			s.res.FinalizedAtHeal = s.maxHonestFinal()
		}
		for _, n := range s.nodes {
			if n.down && s.now >= n.downUntil {
				s.restart(n)
			}
		}
		for len(s.q) > 0 && s.q[0].at <= s.now && s.err == nil {
			s.deliver(heap.Pop(&s.q).(*event))
		}
		for _, n := range s.nodes {
			if !n.down {
				n.core.Tick()
				s.drain(n)
			}
		}
	}
	if s.err != nil {
		return s, s.err
	}
	byHeight := map[uint64]types.Hash{}
	for _, q := range s.certs {
		if h, ok := byHeight[q.Height]; ok && h != q.BlockHash {
			s.res.CertifiedForks++
		}
		byHeight[q.Height] = q.BlockHash
	}
	for _, n := range s.nodes {
		st := n.core.Status()
		s.res.Finalized = append(s.res.Finalized, st.FinalizedHeight)
		s.res.Rounds = max(s.res.Rounds, st.Round)
		if n.byz {
			continue
		}
		if st.Conflicts != 0 {
			return s, fmt.Errorf("%w: validator %d saw %d conflicting finalizations", ErrSafety, n.id, st.Conflicts)
		}
		if st.FinalizedHeight < s.res.FinalizedAtHeal+cfg.MinGrowth {
			return s, fmt.Errorf("%w: validator %d finalized %d, %d at heal (round %d)", ErrLiveness, n.id, st.FinalizedHeight, s.res.FinalizedAtHeal, st.Round)
		}
	}
	return s, nil
}

func (s *simulation) setup() error {
	n := s.cfg.N
	s.seed = types.Keccak256([]byte("sim-epoch"), binary.BigEndian.AppendUint64(nil, s.cfg.Seed))
	var vals []consensus.Validator
	signers := make([]consensus.Signer, n)
	if s.cfg.BLS {
		s.verifier = consensus.BLS{}
	} else {
		s.verifier = InsecureVerifier{}
	}
	for i := range n {
		ikm := types.Keccak256([]byte("sim-key"), []byte{byte(i), byte(i >> 8)})
		var pub []byte
		if s.cfg.BLS {
			sk, err := bls.KeyFromSeed(ikm[:])
			if err != nil {
				return err
			}
			pub, signers[i] = sk.PublicKey().Bytes(), consensus.BLSSigner{Key: sk}
		} else {
			pub, signers[i] = ikm[:], InsecureSigner{PubKey: ikm[:]}
		}
		var addr types.Address
		h := types.Keccak256(pub)
		copy(addr[:], h[12:])
		stake := uint64(1)
		if i < len(s.cfg.Stakes) {
			stake = s.cfg.Stakes[i]
		}
		vals = append(vals, consensus.Validator{Address: addr, PubKey: pub, Stake: stake})
		s.addrs = append(s.addrs, addr)
	}
	vs, err := consensus.NewValidatorSet(vals, s.verifier)
	if err != nil {
		return err
	}
	s.vs = vs
	var byz uint64
	for i := n - s.cfg.Byzantine; i < n; i++ {
		byz += vals[i].Stake
	}
	if byz > vs.TotalStake()-vs.Quorum() {
		return fmt.Errorf("sim: byzantine stake %d exceeds the fault bound", byz)
	}
	s.genesis = &consensus.Block{Payload: types.Bytes("genesis")}
	for i := range n {
		nd := &node{id: i, signer: signers[i], byz: i >= n-s.cfg.Byzantine}
		s.nodes = append(s.nodes, nd)
		if err := s.start(nd); err != nil {
			return err
		}
	}
	return nil
}

func (s *simulation) start(n *node) error {
	timeout := s.cfg.Timeout
	if n.byz && s.cfg.Adversarial {
		timeout = 2
	}
	root, rootQC := s.genesis, consensus.QC{BlockHash: s.genesis.Hash()}
	if k := len(n.final); k > 0 {
		root, rootQC = n.final[k-1].Block, n.final[k-1].QC
	}
	core, err := consensus.New(consensus.Config{
		ChainID: 7, Validators: s.vs, Seed: s.seed, Self: s.addrs[n.id], Signer: n.signer,
		Verifier: s.verifier, App: app{}, Root: root, RootQC: rootQC,
		WAL: append([]consensus.Record(nil), n.wal...), TimeoutTicks: timeout,
	})
	if err != nil {
		return err
	}
	n.core = core
	s.drain(n)
	return nil
}

func (s *simulation) restart(n *node) {
	n.down = false
	s.res.Restarts++
	if err := s.start(n); err != nil {
		s.err = err
	}
}

// perturb draws the network conditions for the next period.
func (s *simulation) perturb() {
	s.group = nil
	if s.cfg.Partitions && s.rng.IntN(2) == 0 {
		k := 2 + s.rng.IntN(2)
		s.group = make([]int, s.cfg.N)
		for i := range s.group {
			s.group[i] = s.rng.IntN(k)
		}
	}
	if s.cfg.Crashes && s.rng.IntN(3) == 0 {
		i := s.rng.IntN(s.cfg.N - s.cfg.Byzantine)
		if n := s.nodes[i]; !n.down {
			n.down = true
			n.downUntil = s.now + 10 + s.rng.IntN(80)
		}
	}
}

func (s *simulation) maxHonestFinal() uint64 {
	var m uint64
	for _, n := range s.nodes {
		if !n.byz {
			m = max(m, uint64(len(n.final)))
		}
	}
	return m
}

func (s *simulation) connected(a, b int) bool {
	return s.group == nil || s.group[a] == s.group[b]
}

func (s *simulation) enqueue(from, to int, data []byte) {
	if s.now < s.cfg.HealAt && s.cfg.Drop > 0 && s.rng.Float64() < s.cfg.Drop {
		return
	}
	if !s.connected(from, to) {
		return
	}
	d := s.cfg.MinDelay + s.rng.IntN(s.cfg.MaxDelay-s.cfg.MinDelay+1)
	s.seq++
	heap.Push(&s.q, &event{at: s.now + d, seq: s.seq, from: from, to: to, data: data})
}

func (s *simulation) send(from int, o consensus.Outbound) {
	data := o.Msg.Encode()
	if o.To != consensus.Broadcast {
		s.enqueue(from, o.To, data)
		return
	}
	n := s.nodes[from]
	s.observe(o.Msg)
	if n.byz && s.cfg.Adversarial {
		switch m := o.Msg; {
		case m.Proposal != nil && m.Proposal.Block.Proposer == s.addrs[from]:
			if low := s.lowProposal(n, m.Proposal); low != nil {
				o.Msg = &consensus.Message{Proposal: low}
				data = o.Msg.Encode()
				s.observe(o.Msg)
			}
		case m.Vote != nil && m.Vote.Voter == uint32(from):
			for to := range s.cfg.N {
				if to != from && s.rng.IntN(2) == 0 {
					s.enqueue(from, to, data)
				}
			}
			return
		case m.NewView != nil && m.NewView.Voter == uint32(from):
			nv := *m.NewView
			nv.HighQC = consensus.QC{BlockHash: s.genesis.Hash()}
			if k := len(n.final); k > 0 {
				nv.HighQC = n.final[k-1].QC // the lowest QC still worth reporting
			}
			nv.Signature = n.signer.Sign(consensus.TimeoutMessage(7, nv.Round, nv.HighQC.Round))
			data = (&consensus.Message{NewView: &nv}).Encode()
		}
	}
	var alt []byte
	if n.byz && s.cfg.Equivocate && o.Msg.Proposal != nil && o.Msg.Proposal.Block.Proposer == s.addrs[from] {
		alt = s.equivocate(n, o.Msg.Proposal)
	}
	for to := range s.cfg.N {
		if to == from {
			continue
		}
		if alt != nil && to%2 == 1 {
			s.enqueue(from, to, alt)
		} else {
			s.enqueue(from, to, data)
		}
	}
	if alt != nil && from != 0 {
		s.enqueue(from, 0, alt) // validator 0 sees both and must report it
	}
}

// observe records blocks and QCs for the adversary.
func (s *simulation) observe(m *consensus.Message) {
	switch {
	case m.Proposal != nil:
		b := &m.Proposal.Block
		s.seen[b.Hash()] = b
		s.certs[b.Justify.BlockHash] = b.Justify
	case m.NewView != nil:
		nv := m.NewView
		s.certs[nv.HighQC.BlockHash] = nv.HighQC
		if s.nvs[nv.Round] == nil {
			s.nvs[nv.Round] = map[uint32]*consensus.NewView{}
		}
		if s.nvs[nv.Round][nv.Voter] == nil {
			s.nvs[nv.Round][nv.Voter] = nv
		}
	}
}

// lowProposal rebuilds a byzantine proposal that entered its round through
// a timeout certificate on the lowest QC the certificate allows and that
// is not below what honest validators finalized (honest proposers use their
// highest): the move that makes a non-consecutive two-chain rule finalize
// conflicting blocks.
func (s *simulation) lowProposal(n *node, p *consensus.Proposal) *consensus.Proposal {
	tc := s.lowTC(p.Block.Round - 1)
	if tc == nil {
		return nil
	}
	floor := tc.MaxHighQCRound()
	final := s.maxHonestFinal() // honest validators would not vote below it
	var best *consensus.QC
	for _, q := range s.certs {
		if q.Round < floor || q.Round >= p.Block.Round || (q.Round > 0 && s.seen[q.BlockHash] == nil) || q.Height < final {
			continue
		}
		if best == nil || q.Round < best.Round || (q.Round == best.Round && string(q.BlockHash[:]) < string(best.BlockHash[:])) {
			best = &q
		}
	}
	if best == nil || (best.BlockHash == p.Block.Justify.BlockHash && p.TC != nil) {
		return nil
	}
	s.res.LowProposals++
	parentHeight := uint64(0)
	if best.Round > 0 {
		parentHeight = s.seen[best.BlockHash].Height
	}
	b := p.Block
	b.Height, b.Parent, b.Justify = parentHeight+1, best.BlockHash, *best
	b.VRFProof = n.signer.Sign(vrf.Message(s.seed, b.Height))
	b.VRFOutput = vrf.Output(b.VRFProof)
	b.Payload = append(append(types.Bytes(nil), p.Block.Payload...), " (low)"...)
	h := b.Hash()
	if best.Round+1 == b.Round {
		tc = nil // a direct successor needs no certificate
	}
	return &consensus.Proposal{Block: b, TC: tc, Signature: n.signer.Sign(consensus.ProposalMessage(7, h, b.Height, b.Round))}
}

// lowTC picks, among all NEW_VIEWs of round ever sent, a quorum whose
// highest reported QC is as low as possible (a proposer chooses which
// timeouts go into its certificate).
func (s *simulation) lowTC(round uint64) *consensus.TC {
	var nvs []*consensus.NewView
	for _, nv := range s.nvs[round] {
		nvs = append(nvs, nv)
	}
	slices.SortFunc(nvs, func(a, b *consensus.NewView) int {
		if a.HighQC.Round != b.HighQC.Round {
			return cmp.Compare(a.HighQC.Round, b.HighQC.Round)
		}
		return cmp.Compare(a.Voter, b.Voter)
	})
	chosen := map[uint32]*consensus.NewView{}
	var stake uint64
	for _, nv := range nvs {
		if stake >= s.vs.Quorum() {
			break
		}
		chosen[nv.Voter] = nv
		stake += s.vs.Validator(int(nv.Voter)).Stake
	}
	if stake < s.vs.Quorum() {
		return nil
	}
	tc := &consensus.TC{Round: round, Signers: consensus.NewBitmap(s.cfg.N)}
	var sigs [][]byte
	for i := range s.cfg.N {
		if nv := chosen[uint32(i)]; nv != nil {
			tc.Signers[i/8] |= 1 << (i % 8)
			tc.HighQCRounds = append(tc.HighQCRounds, nv.HighQC.Round)
			sigs = append(sigs, nv.Signature)
		}
	}
	agg, err := s.verifier.Aggregate(sigs)
	if err != nil {
		return nil
	}
	tc.Signature = agg
	return tc
}

// equivocate builds a second, conflicting proposal for the same round.
func (s *simulation) equivocate(n *node, p *consensus.Proposal) []byte {
	q := *p
	q.Block.Payload = append(append(types.Bytes(nil), p.Block.Payload...), " (equivocation)"...)
	h := q.Block.Hash()
	q.Signature = n.signer.Sign(consensus.ProposalMessage(7, h, q.Block.Height, q.Block.Round))
	return (&consensus.Message{Proposal: &q}).Encode()
}

func (s *simulation) deliver(e *event) {
	n := s.nodes[e.to]
	if n.down || !s.connected(e.from, e.to) {
		return
	}
	m, err := consensus.DecodeMessage(e.data)
	if err != nil {
		s.err = fmt.Errorf("sim: decode: %w", err)
		return
	}
	s.res.Messages++
	if err := n.core.Step(e.from, m); err != nil && !s.nodes[e.from].byz {
		s.err = fmt.Errorf("%w: %d -> %d at %d: %w", ErrProtocol, e.from, e.to, s.now, err)
		return
	}
	if n.byz && s.cfg.DoubleVote && m.Proposal != nil {
		b := &m.Proposal.Block
		h := b.Hash()
		v := &consensus.Vote{BlockHash: h, Height: b.Height, Round: b.Round, Voter: uint32(n.id)}
		v.Signature = n.signer.Sign(consensus.VoteMessage(7, h, b.Height, b.Round))
		s.send(n.id, consensus.Outbound{To: consensus.Broadcast, Msg: &consensus.Message{Vote: v}})
	}
	s.drain(n)
}

// drain handles a core's Ready in the documented order.
func (s *simulation) drain(n *node) {
	for n.core.HasReady() && s.err == nil {
		rd := n.core.Ready()
		for _, r := range rd.Persist {
			dec, err := consensus.DecodeRecord(r.Encode())
			if err != nil {
				s.err = err
				return
			}
			n.wal = append(n.wal, *dec)
		}
		for _, o := range rd.Messages {
			s.send(n.id, o)
		}
		for _, f := range rd.Finalized {
			s.finalized(n, f)
		}
		for _, ev := range rd.Evidence {
			s.evidence(n, ev)
		}
		if b := rd.Build; b != nil {
			payload := fmt.Appendf(nil, "block h=%d r=%d by=%d", b.Height, b.Round, n.id)
			if err := n.core.Propose(b.Round, payload); err != nil && !errors.Is(err, consensus.ErrStale) {
				s.err = fmt.Errorf("sim: propose: %w", err)
			}
		}
	}
}

func (s *simulation) finalized(n *node, f consensus.Finalized) {
	if k := len(n.final); f.Block.Height != uint64(k)+1 || (k > 0 && f.Block.Parent != n.final[k-1].Hash) ||
		(k == 0 && f.Block.Parent != s.genesis.Hash()) {
		s.err = fmt.Errorf("%w: validator %d finalized height %d after %d (not contiguous)", ErrSafety, n.id, f.Block.Height, k)
		return
	}
	if f.QC.BlockHash != f.Hash || f.Block.Hash() != f.Hash {
		s.err = fmt.Errorf("%w: validator %d finalized a block with a wrong certificate", ErrSafety, n.id)
		return
	}
	n.final = append(n.final, f)
	if n.byz {
		return
	}
	if h, ok := s.byHeight[f.Block.Height]; ok && h != f.Hash {
		s.err = fmt.Errorf("%w: two blocks finalized at height %d (%s, %s)", ErrSafety, f.Block.Height, h, f.Hash)
		return
	}
	s.byHeight[f.Block.Height] = f.Hash
}

func (s *simulation) evidence(n *node, ev consensus.Evidence) {
	i := s.vs.Index(ev.Validator)
	if i < 0 {
		s.err = fmt.Errorf("sim: evidence against a non-validator")
		return
	}
	if err := ev.Verify(s.verifier, s.vs.Key(i)); err != nil {
		s.err = fmt.Errorf("sim: evidence from %d does not verify: %w", n.id, err)
		return
	}
	if !s.nodes[i].byz {
		s.err = fmt.Errorf("%w: evidence of equivocation by honest validator %d (kind %d)", ErrSafety, i, ev.Kind)
		return
	}
	if !n.byz {
		s.res.Evidence++
	}
}
