package node

import (
	"bytes"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
	"github.com/cowboy-foundation/cowboy/chain/consensus"
	"github.com/cowboy-foundation/cowboy/chain/types"
)

// The node's own wire and disk encodings (block payloads, finalized-block
// records, sync and hello messages) decode and re-encode to the same bytes.

func fuzzRoundTrip[T any](t *testing.T, data []byte) {
	var v T
	if err := codec.Unmarshal(data, &v); err != nil {
		return
	}
	if again := codec.MustMarshal(&v); !bytes.Equal(again, data) {
		t.Fatalf("%T: decode → encode changed the bytes:\n%x\n%x", v, data, again)
	}
}

func FuzzNodeEncodings(f *testing.F) {
	qc := consensus.QC{BlockHash: types.Hash{1}, Height: 3, Round: 4, Signers: consensus.Bitmap{0x07}, Signature: bytes.Repeat([]byte{9}, 96)}
	b := consensus.Block{Height: 4, Round: 5, Parent: types.Hash{1}, Proposer: types.Address{2}, VRFOutput: types.Hash{3},
		VRFProof: bytes.Repeat([]byte{4}, 96), Justify: qc, Payload: codec.MustMarshal(&payload{Timestamp: 7, Txs: []types.Bytes{{1, 2}}})}
	rec := finalRecord{Block: b, QC: qc, Proof: &consensus.FinalityProof{Child: b.ID(), ChildQC: qc, Via: []consensus.BlockID{b.ID()}}}
	for i, v := range []any{
		&payload{Timestamp: 7, Txs: []types.Bytes{{1, 2}}}, &rec, &finalRecord{Block: b, QC: qc},
		&syncRequest{From: 9}, &syncReply{Records: []finalRecord{rec}},
		&hello{Addr: "127.0.0.1:1", Peers: []peerAddr{{Index: 1, Addr: "127.0.0.1:2"}}, Finalized: 3},
	} {
		f.Add(uint8(i), codec.MustMarshal(v))
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		switch kind % 5 {
		case 0:
			fuzzRoundTrip[payload](t, data)
		case 1:
			fuzzRoundTrip[finalRecord](t, data)
		case 2:
			fuzzRoundTrip[syncRequest](t, data)
		case 3:
			fuzzRoundTrip[syncReply](t, data)
		case 4:
			fuzzRoundTrip[hello](t, data)
		}
	})
}
