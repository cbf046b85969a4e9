package consensus_test

import (
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/consensus/bls"
	"github.com/cowboy-foundation/cowboy/chain/consensus/vrf"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// BenchmarkRoundBLS100 measures what one validator of a 100-validator set
// spends on a round with real BLS: verify the proposal (signature, VRF),
// buffer 67 votes, aggregate them and check the aggregate once (batch
// verification at quorum).
func BenchmarkRoundBLS100(b *testing.B) {
	const n = 100
	keys := make([]*bls.SecretKey, n)
	vals := make([]consensus.Validator, n)
	for i := range n {
		seed := types.Keccak256([]byte("bench"), []byte{byte(i)})
		keys[i], _ = bls.KeyFromSeed(seed[:])
		var a types.Address
		a[0], a[1] = byte(i), 1
		vals[i] = consensus.Validator{Address: a, PubKey: keys[i].PublicKey().Bytes(), Stake: 1}
	}
	vs, err := consensus.NewValidatorSet(vals, consensus.BLS{})
	if err != nil {
		b.Fatal(err)
	}
	seed := types.Keccak256([]byte("bench-seed"))
	genesis := &consensus.Block{Payload: types.Bytes("genesis")}
	gqc := consensus.QC{BlockHash: genesis.Hash()}
	l := vs.Leader(seed, 1)
	out, proof := vrf.Prove(keys[l], seed, 1)
	blk := consensus.Block{Height: 1, Round: 1, Parent: genesis.Hash(), Proposer: vals[l].Address, VRFOutput: out, VRFProof: proof, Justify: gqc, Payload: types.Bytes("x")}
	h := blk.Hash()
	prop := &consensus.Message{Proposal: &consensus.Proposal{Block: blk, Signature: keys[l].Sign(consensus.ProposalMessage(chainID, h, 1, 1)).Bytes()}}
	var votes []*consensus.Message
	for i := range n*2/3 + 1 {
		sig := keys[i].Sign(consensus.VoteMessage(chainID, h, 1, 1)).Bytes()
		votes = append(votes, &consensus.Message{Vote: &consensus.Vote{BlockHash: h, Height: 1, Round: 1, Voter: uint32(i), Signature: sig}})
	}
	b.ResetTimer()
	for b.Loop() {
		core, err := consensus.New(consensus.Config{ChainID: chainID, Validators: vs, Seed: seed, Self: types.Address{0xee},
			Verifier: consensus.BLS{}, App: okApp{}, Root: genesis, RootQC: gqc})
		if err != nil {
			b.Fatal(err)
		}
		if err := core.Step(l, prop); err != nil {
			b.Fatal(err)
		}
		for i, v := range votes {
			if err := core.Step(i, v); err != nil {
				b.Fatal(err)
			}
		}
		if core.Status().HighQCRound != 1 {
			b.Fatal("no QC")
		}
	}
}
