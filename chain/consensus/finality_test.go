package consensus_test

import (
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/sim"
	"github.com/cowboy-foundation/cowboy/chain/consensus/vrf"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

const chainID = 7

// harness drives one observer Core with hand-made messages from four
// validators whose keys it holds.
type harness struct {
	t       *testing.T
	vs      *consensus.ValidatorSet
	signers []consensus.Signer
	seed    types.Hash
	core    *consensus.Core
	genesis *consensus.Block
	gqc     consensus.QC
	final   []consensus.Finalized
	ev      []consensus.Evidence
}

type okApp struct{}

func (okApp) Verify(*consensus.Block, []*consensus.Block) error { return nil }

func newHarness(t *testing.T, self int) *harness {
	h := &harness{t: t, seed: types.Keccak256([]byte("finality-test"))}
	var vals []consensus.Validator
	for i := range 4 {
		pk := types.Keccak256([]byte{byte(i)})
		var a types.Address
		a[0] = byte(i + 1)
		vals = append(vals, consensus.Validator{Address: a, PubKey: pk[:], Stake: 1})
		h.signers = append(h.signers, sim.InsecureSigner{PubKey: pk[:]})
	}
	vs, err := consensus.NewValidatorSet(vals, sim.InsecureVerifier{})
	if err != nil {
		t.Fatal(err)
	}
	h.vs = vs
	h.genesis = &consensus.Block{Payload: types.Bytes("genesis")}
	h.gqc = consensus.QC{BlockHash: h.genesis.Hash()}
	selfAddr := types.Address{0xee} // observer
	var signer consensus.Signer
	if self >= 0 {
		selfAddr, signer = vals[self].Address, h.signers[self]
	}
	h.core, err = consensus.New(consensus.Config{
		ChainID: chainID, Validators: vs, Seed: h.seed, Self: selfAddr, Signer: signer,
		Verifier: sim.InsecureVerifier{}, App: okApp{}, Root: h.genesis, RootQC: h.gqc, TimeoutTicks: 1000,
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) step(from int, m *consensus.Message) {
	h.t.Helper()
	if err := h.core.Step(from, m); err != nil {
		h.t.Fatalf("step: %v", err)
	}
	rd := h.core.Ready()
	h.final = append(h.final, rd.Finalized...)
	h.ev = append(h.ev, rd.Evidence...)
}

// propose makes the round's leader propose a block on parent.
func (h *harness) propose(round uint64, parent *consensus.Block, justify consensus.QC, tc *consensus.TC, payload string) *consensus.Block {
	h.t.Helper()
	l := h.vs.Leader(h.seed, round)
	height := parent.Height + 1
	proof := h.signers[l].Sign(vrf.Message(h.seed, height))
	b := consensus.Block{
		Height: height, Round: round, Parent: parent.Hash(), Proposer: h.vs.Validator(l).Address,
		VRFOutput: vrf.Output(proof), VRFProof: proof, Justify: justify, Payload: types.Bytes(payload),
	}
	hash := b.Hash()
	p := &consensus.Proposal{Block: b, TC: tc, Signature: h.signers[l].Sign(consensus.ProposalMessage(chainID, hash, height, round))}
	h.step(l, &consensus.Message{Proposal: p})
	return &p.Block
}

// certify delivers votes for b from voters and returns the resulting QC.
func (h *harness) certify(b *consensus.Block, voters ...int) consensus.QC {
	h.t.Helper()
	hash := b.Hash()
	qc := consensus.QC{BlockHash: hash, Height: b.Height, Round: b.Round, Signers: consensus.NewBitmap(4)}
	var sigs [][]byte
	for _, v := range voters {
		sig := h.signers[v].Sign(consensus.VoteMessage(chainID, hash, b.Height, b.Round))
		h.step(v, &consensus.Message{Vote: &consensus.Vote{BlockHash: hash, Height: b.Height, Round: b.Round, Voter: uint32(v), Signature: sig}})
		qc.Signers[v/8] |= 1 << (v % 8)
		sigs = append(sigs, sig)
	}
	qc.Signature, _ = sim.InsecureVerifier{}.Aggregate(sigs)
	return qc
}

// timeout delivers NEW_VIEWs for round (voter -> high QC) and returns the TC.
func (h *harness) timeout(round uint64, hqcs map[int]consensus.QC) *consensus.TC {
	h.t.Helper()
	tc := &consensus.TC{Round: round, Signers: consensus.NewBitmap(4)}
	var sigs [][]byte
	for v := range 4 {
		q, ok := hqcs[v]
		if !ok {
			continue
		}
		sig := h.signers[v].Sign(consensus.TimeoutMessage(chainID, round, q.Round))
		h.step(v, &consensus.Message{NewView: &consensus.NewView{Round: round, HighQC: q, Voter: uint32(v), Signature: sig}})
		tc.Signers[0] |= 1 << v
		tc.HighQCRounds = append(tc.HighQCRounds, q.Round)
		sigs = append(sigs, sig)
	}
	tc.Signature, _ = sim.InsecureVerifier{}.Aggregate(sigs)
	return tc
}

func TestFinalityHappyPath(t *testing.T) {
	h := newHarness(t, -1)
	b1 := h.propose(1, h.genesis, h.gqc, nil, "b1")
	q1 := h.certify(b1, 0, 1, 2)
	if st := h.core.Status(); st.CommittedHeight != 1 || st.FinalizedHeight != 0 {
		t.Fatalf("after QC(b1): %+v", st)
	}
	b2 := h.propose(2, b1, q1, nil, "b2")
	h.certify(b2, 1, 2, 3)
	st := h.core.Status()
	if st.FinalizedHeight != 1 || st.FinalizedHash != b1.Hash() || st.CommittedHeight != 2 {
		t.Fatalf("b1 must be final once its round-2 child is certified: %+v", st)
	}
	if len(h.final) != 1 || h.final[0].Hash != b1.Hash() || h.final[0].QC.BlockHash != b1.Hash() {
		t.Fatalf("finalized output: %+v", h.final)
	}
}

// TestFinalityNeedsConsecutiveRounds is the counterexample to the literal
// §6.1 rule ("a block is final when its direct child has a QC"). Every
// honest validator below follows the voting rules, yet two conflicting
// blocks at height 1 (B in round 1 and C in round 2) each get a certified
// direct child (B' in round 3, C' in round 4). The literal rule would
// finalize both; the consecutive-round rule finalizes neither, and later
// finalizes exactly one branch.
func TestFinalityNeedsConsecutiveRounds(t *testing.T) {
	h := newHarness(t, -1)
	// Round 1: B is certified by 0, 1, 3 but only validator 0 learns the QC.
	b := h.propose(1, h.genesis, h.gqc, nil, "B")
	qB := h.certify(b, 0, 1, 3)
	// Validators 1, 2, 3 time out in round 1 knowing only the genesis QC.
	tc1 := h.timeout(1, map[int]consensus.QC{1: h.gqc, 2: h.gqc, 3: h.gqc})
	// Round 2: C conflicts with B at height 1; the TC allows it.
	c := h.propose(2, h.genesis, h.gqc, tc1, "C")
	qC := h.certify(c, 1, 2, 3)
	// Round 2 times out for 0 (high QC B), 3 and 1 (who missed QC(C)).
	tc2 := h.timeout(2, map[int]consensus.QC{0: qB, 1: h.gqc, 3: h.gqc})
	// Round 3: B' extends B (QC round 1 >= max high QC round 1 in the TC).
	b2 := h.propose(3, b, qB, tc2, "B'")
	h.certify(b2, 0, 1, 3)
	// Round 3 times out for 1, 2, 3, whose highest QC is QC(C) (round 2).
	tc3 := h.timeout(3, map[int]consensus.QC{1: qC, 2: qC, 3: qC})
	// Round 4: C' extends C.
	c2 := h.propose(4, c, qC, tc3, "C'")
	qC2 := h.certify(c2, 1, 2, 3)

	// Both B and C now have a certified direct child.
	if len(h.final) != 0 {
		t.Fatalf("finalized %d blocks; the literal two-chain rule would have finalized both B and C here", len(h.final))
	}
	st := h.core.Status()
	if st.FinalizedHeight != 0 || st.CommittedHeight != 2 || st.HighQCRound != 4 {
		t.Fatalf("status: %+v", st)
	}

	// Round 5 directly follows C' (round 4): certifying its child finalizes
	// C and C', never B.
	c3 := h.propose(5, c2, qC2, nil, "C''")
	h.certify(c3, 0, 1, 2)
	if len(h.final) != 2 || h.final[0].Hash != c.Hash() || h.final[1].Hash != c2.Hash() {
		t.Fatalf("want C, C' finalized, got %d blocks", len(h.final))
	}
	if st := h.core.Status(); st.Conflicts != 0 || st.FinalizedHeight != 2 {
		t.Fatalf("status: %+v", st)
	}
}

// TestEvidence checks that a double vote and a double proposal produce
// evidence that verifies standalone and survives encoding.
func TestEvidence(t *testing.T) {
	h := newHarness(t, -1)
	b := h.propose(1, h.genesis, h.gqc, nil, "B")
	alt := h.propose(1, h.genesis, h.gqc, nil, "B-alt") // same leader, same round
	h.certify(b, 2)
	h.certify(alt, 2)
	if len(h.ev) != 2 {
		t.Fatalf("want 2 evidence, got %d", len(h.ev))
	}
	kinds := map[uint8]bool{}
	for _, ev := range h.ev {
		dec, err := consensus.DecodeEvidence(ev.Encode())
		if err != nil {
			t.Fatal(err)
		}
		i := h.vs.Index(dec.Validator)
		if err := dec.Verify(sim.InsecureVerifier{}, h.vs.Key(i)); err != nil {
			t.Fatalf("evidence %d: %v", dec.Kind, err)
		}
		kinds[dec.Kind] = true
		bad := *dec
		bad.B = bad.A
		if bad.Verify(sim.InsecureVerifier{}, h.vs.Key(i)) == nil {
			t.Fatal("non-conflicting evidence accepted")
		}
		bad = *dec
		bad.ChainID++
		if bad.Verify(sim.InsecureVerifier{}, h.vs.Key(i)) == nil {
			t.Fatal("evidence accepted on another chain")
		}
	}
	if !kinds[consensus.DoubleVote] || !kinds[consensus.DoubleProposal] {
		t.Fatalf("kinds %v", kinds)
	}
}

// TestRestartFromWALNeverEquivocates: a validator that voted in round 1 and
// restarts from its WAL does not vote again in round 1, even for a
// different proposal; without the WAL it would.
func TestRestartFromWALNeverEquivocates(t *testing.T) {
	h := newHarness(t, 0)
	leader := h.vs.Leader(h.seed, 1)
	if leader == 0 {
		t.Skip("validator 0 leads round 1 under this seed")
	}
	if err := h.core.Step(leader, &consensus.Message{Proposal: h.proposal(1, "B")}); err != nil {
		t.Fatal(err)
	}
	rd := h.core.Ready()
	if len(rd.Persist) != 1 || rd.Persist[0].Vote == nil || !sentVote(rd) {
		t.Fatalf("expected a persisted and sent vote, got %+v", rd)
	}
	wal := rd.Persist
	for _, tc := range []struct {
		name     string
		wal      []consensus.Record
		wantVote bool
	}{{"with WAL", wal, false}, {"without WAL", nil, true}} {
		core, err := consensus.New(consensus.Config{
			ChainID: chainID, Validators: h.vs, Seed: h.seed, Self: h.vs.Validator(0).Address, Signer: h.signers[0],
			Verifier: sim.InsecureVerifier{}, App: okApp{}, Root: h.genesis, RootQC: h.gqc, WAL: tc.wal, TimeoutTicks: 1000,
		})
		if err != nil {
			t.Fatal(err)
		}
		core.Ready() // re-broadcasts of the replayed vote
		if err := core.Step(leader, &consensus.Message{Proposal: h.proposal(1, "B-alt")}); err != nil {
			t.Fatal(err)
		}
		if got := sentVote(core.Ready()); got != tc.wantVote {
			t.Fatalf("%s: voted=%v, want %v", tc.name, got, tc.wantVote)
		}
	}
}

func (h *harness) proposal(round uint64, payload string) *consensus.Proposal {
	l := h.vs.Leader(h.seed, round)
	proof := h.signers[l].Sign(vrf.Message(h.seed, 1))
	b := consensus.Block{Height: 1, Round: round, Parent: h.genesis.Hash(), Proposer: h.vs.Validator(l).Address,
		VRFOutput: vrf.Output(proof), VRFProof: proof, Justify: h.gqc, Payload: types.Bytes(payload)}
	return &consensus.Proposal{Block: b, Signature: h.signers[l].Sign(consensus.ProposalMessage(chainID, b.Hash(), 1, round))}
}

func sentVote(rd consensus.Ready) bool {
	for _, o := range rd.Messages {
		if o.Msg.Vote != nil {
			return true
		}
	}
	return false
}
