package types

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
)

func TestStorageInstructionsRoundTrip(t *testing.T) {
	ins := []Instruction{
		&CommitManifest{Volume: Hash{1}, Root: Hash{2}, Version: 3, Size: 4},
		&CommitManifest{Volume: Hash{1}, Root: Hash{2}, Version: 3, Size: 4,
			Placement: []RelayPlacement{{Relay: Address{5}, Bytes: 6, Count: 1, ShardsRoot: Hash{7}}}},
		&VolumeFund{Volume: Hash{1}},
		&StorageProof{Volume: Hash{1}, Epoch: 2, ShardID: Hash{3}, ShardHash: Hash{4}, ShardSize: 5,
			LeafPath: []Hash{{6}}, Chunk: Bytes("chunk"), ChunkPath: []Hash{{7}, {8}}},
		&ClaimRent{Epoch: 9, Volumes: []Hash{{1}, {2}}},
		&RefusePlacement{Volume: Hash{1}, Version: 2},
	}
	for _, in := range ins {
		b, err := EncodeInstruction(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := DecodeInstruction(b)
		if err != nil {
			t.Fatalf("%T: %v", in, err)
		}
		if !reflect.DeepEqual(out, in) {
			t.Fatalf("round trip %T: %+v != %+v", in, out, in)
		}
	}
	// Without a placement the commitment keeps its original 5-element form.
	b, _ := EncodeInstruction(&CommitManifest{Volume: Hash{1}, Root: Hash{2}, Version: 3, Size: 4})
	old, _ := codec.Marshal([]any{uint64(KindCommitManifest), Hash{1}, Hash{2}, uint64(3), uint64(4)})
	if !bytes.Equal(b, old) {
		t.Fatalf("5-element form changed:\n%x\n%x", b, old)
	}
	// An explicitly empty placement is not canonical.
	bad, _ := codec.Marshal([]any{uint64(KindCommitManifest), Hash{1}, Hash{2}, uint64(3), uint64(4), []RelayPlacement{}})
	if _, err := DecodeInstruction(bad); err == nil {
		t.Fatal("empty placement element accepted")
	}
}

func FuzzCommitManifestRoundTrip(f *testing.F) {
	for _, in := range []*CommitManifest{{Version: 1}, {Version: 2, Placement: []RelayPlacement{{Count: 1}}}} {
		b, _ := EncodeInstruction(in)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := DecodeInstruction(b)
		if err != nil || in == nil {
			return
		}
		if _, ok := in.(*CommitManifest); !ok {
			return
		}
		re, err := EncodeInstruction(in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeInstruction(re)
		if err != nil || !reflect.DeepEqual(again, in) {
			t.Fatalf("re-decode: %v %+v %+v", err, again, in)
		}
	})
}
