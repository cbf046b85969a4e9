package consensus_test

import (
	"errors"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/sim"
	"github.com/cowboy-foundation/cowboy/chain/consensus/vrf"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// gateApp answers Verify with err until it is cleared.
type gateApp struct{ err error }

func (a *gateApp) Verify(*consensus.Block, []*consensus.Block) error { return a.err }

// votes returns the votes the core sent since the last call.
func votes(c *consensus.Core) []*consensus.Vote {
	var out []*consensus.Vote
	for _, m := range c.Ready().Messages {
		if m.Msg.Vote != nil {
			out = append(out, m.Msg.Vote)
		}
	}
	return out
}

// TestVoteDeferredUntilReady: an application that cannot check a block yet
// (ErrNotReady: the validator has not executed the height the proposal
// commits to) holds the vote back; the core asks again on each tick and
// votes once the application accepts. Any other error rejects the
// proposal for the round for good.
func TestVoteDeferredUntilReady(t *testing.T) {
	for _, tc := range []struct {
		name     string
		first    error
		wantVote bool
	}{
		{"not ready, then ready", consensus.ErrNotReady, true},
		{"rejected", consensus.ErrUncommitted, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, -1)
			l := h.vs.Leader(h.seed, 1)
			self := (l + 1) % 4
			app := &gateApp{err: tc.first}
			core, err := consensus.New(consensus.Config{
				ChainID: chainID, Validators: h.vs, Seed: h.seed, Self: h.vs.Validator(self).Address, Signer: h.signers[self],
				Verifier: sim.InsecureVerifier{}, App: app, Root: h.genesis, RootQC: h.gqc, TimeoutTicks: 1000,
			})
			if err != nil {
				t.Fatal(err)
			}
			votes(core)
			proof := h.signers[l].Sign(vrf.Message(h.seed, 1))
			b := consensus.Block{Height: 1, Round: 1, Parent: h.genesis.Hash(), Proposer: h.vs.Validator(l).Address,
				VRFOutput: vrf.Output(proof), VRFProof: proof, Justify: h.gqc, Payload: types.Bytes("b1")}
			p := &consensus.Proposal{Block: b, Signature: h.signers[l].Sign(consensus.ProposalMessage(chainID, b.Hash(), 1, 1))}
			if err := core.Step(l, &consensus.Message{Proposal: p}); err != nil {
				t.Fatal(err)
			}
			if v := votes(core); len(v) != 0 {
				t.Fatalf("voted before the application could check the block: %+v", v)
			}
			core.Tick()
			if v := votes(core); len(v) != 0 {
				t.Fatalf("voted while the application still could not check: %+v", v)
			}
			app.err = nil
			core.Tick()
			v := votes(core)
			if got := len(v) == 1 && v[0].BlockHash == b.Hash() && v[0].Voter == uint32(self); got != tc.wantVote {
				t.Fatalf("after the application accepts: votes %+v, want a vote: %v", v, tc.wantVote)
			}
		})
	}
}

// TestEpochOf: epoch k covers heights k·L+1 … (k+1)·L.
func TestEpochOf(t *testing.T) {
	for _, c := range [][3]uint64{{0, 16, 0}, {1, 16, 0}, {16, 16, 0}, {17, 16, 1}, {32, 16, 1}, {33, 16, 2}, {5, 0, 0}} {
		if got := consensus.EpochOf(c[0], c[1]); got != c[2] {
			t.Errorf("EpochOf(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

// TestVerifyChain: headers must link by parent hash and height.
func TestVerifyChain(t *testing.T) {
	a := types.Header{ChainID: 1, Height: 4}
	b := types.Header{ChainID: 1, Height: 5, ParentHash: a.Hash()}
	if last, err := consensus.VerifyChain([]types.Header{a, b}); err != nil || last.Height != 5 {
		t.Fatalf("linked chain: %v", err)
	}
	b.ParentHash[0] ^= 1
	if _, err := consensus.VerifyChain([]types.Header{a, b}); !errors.Is(err, consensus.ErrUncommitted) {
		t.Fatalf("broken link: %v", err)
	}
}
