package consensus_test

import (
	"bytes"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

func seedMessages() [][]byte {
	qc := consensus.QC{BlockHash: types.Hash{1}, Height: 3, Round: 4, Signers: consensus.Bitmap{0x07}, Signature: bytes.Repeat([]byte{9}, 96)}
	b := consensus.Block{Height: 4, Round: 6, Parent: types.Hash{1}, Proposer: types.Address{2}, VRFOutput: types.Hash{3},
		VRFProof: bytes.Repeat([]byte{4}, 96), Justify: qc, Payload: types.Bytes("payload")}
	tc := &consensus.TC{Round: 5, Signers: consensus.Bitmap{0x0b}, HighQCRounds: []uint64{4, 4, 2}, Signature: bytes.Repeat([]byte{5}, 96)}
	msgs := []*consensus.Message{
		{Proposal: &consensus.Proposal{Block: b, TC: tc, Signature: bytes.Repeat([]byte{6}, 96)}},
		{Proposal: &consensus.Proposal{Block: b, Signature: bytes.Repeat([]byte{6}, 96)}},
		{Vote: &consensus.Vote{BlockHash: types.Hash{7}, Height: 1, Round: 1, Voter: 3, Signature: []byte{1, 2}}},
		{NewView: &consensus.NewView{Round: 9, HighQC: qc, Voter: 1, Signature: []byte{3}}},
		{Fetch: &consensus.Fetch{Hash: types.Hash{8}, Depth: 64}},
		{Blocks: []consensus.Block{b, b}},
	}
	var out [][]byte
	for _, m := range msgs {
		out = append(out, m.Encode())
	}
	return out
}

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range seedMessages() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := consensus.DecodeMessage(data)
		if err != nil {
			return
		}
		if again := m.Encode(); !bytes.Equal(again, data) {
			t.Fatalf("round trip changed bytes:\n%x\n%x", data, again)
		}
		if m.Proposal != nil {
			_ = m.Proposal.Block.Hash()
		}
	})
}

func FuzzDecodeRecord(f *testing.F) {
	v := &consensus.Vote{BlockHash: types.Hash{7}, Height: 1, Round: 1, Voter: 3, Signature: []byte{1, 2}}
	f.Add((&consensus.Record{Vote: v, Justify: &consensus.QC{Round: 0}}).Encode())
	f.Add((&consensus.Record{Timeout: &consensus.NewView{Round: 2}}).Encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := consensus.DecodeRecord(data)
		if err != nil {
			return
		}
		if again := r.Encode(); !bytes.Equal(again, data) {
			t.Fatalf("round trip changed bytes:\n%x\n%x", data, again)
		}
	})
}

func FuzzDecodeEvidence(f *testing.F) {
	f.Add((&consensus.Evidence{Kind: consensus.DoubleVote, ChainID: 7, A: consensus.SignedHeader{Round: 1}, B: consensus.SignedHeader{Round: 1, Height: 2}}).Encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := consensus.DecodeEvidence(data)
		if err != nil {
			return
		}
		if again := e.Encode(); !bytes.Equal(again, data) {
			t.Fatalf("round trip changed bytes:\n%x\n%x", data, again)
		}
	})
}

func TestMessageRejectsEmptyAndDouble(t *testing.T) {
	if _, err := consensus.DecodeMessage((&consensus.Message{}).Encode()); err == nil {
		t.Fatal("empty message accepted")
	}
	two := &consensus.Message{Fetch: &consensus.Fetch{}, Vote: &consensus.Vote{}}
	if _, err := consensus.DecodeMessage(two.Encode()); err == nil {
		t.Fatal("message with two bodies accepted")
	}
	for _, s := range seedMessages() {
		if _, err := consensus.DecodeMessage(s); err != nil {
			t.Fatal(err)
		}
	}
}
