package types

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cowboy-foundation/cowboy/chain/codec"
)

// TestDeployManifestEncoding: a deploy without a manifest keeps its
// 5-element encoding (old payloads decode unchanged); with one it gains a
// sixth element; an explicitly empty sixth element is refused.
func TestDeployManifestEncoding(t *testing.T) {
	old := &Deploy{Code: Bytes("class A: pass\n"), Salt: Bytes("s"), InitHandler: "init", InitArgs: Bytes{0x80}}
	b, err := EncodeInstruction(old)
	if err != nil {
		t.Fatal(err)
	}
	legacy := codec.MustMarshal([]any{uint64(KindDeploy), []byte("class A: pass\n"), []byte("s"), "init", []byte{0x80}})
	if !bytes.Equal(b, legacy) {
		t.Fatalf("manifest-less deploy changed encoding:\n%x\n%x", b, legacy)
	}
	in, err := DecodeInstruction(legacy)
	if err != nil || in.(*Deploy).Requires != nil || in.(*Deploy).InitHandler != "init" {
		t.Fatalf("legacy decode: %+v %v", in, err)
	}
	withM := &Deploy{Code: old.Code, Salt: old.Salt, Requires: Bytes{0x81, 0x01}}
	b, err = EncodeInstruction(withM)
	if err != nil {
		t.Fatal(err)
	}
	var head []any
	if err := codec.Unmarshal(b, &head); err != nil || len(head) != 6 {
		t.Fatalf("with manifest: %d elements, %v", len(head), err)
	}
	in, err = DecodeInstruction(b)
	if err != nil || !bytes.Equal(in.(*Deploy).Requires, withM.Requires) {
		t.Fatalf("round trip: %+v %v", in, err)
	}
	empty := codec.MustMarshal([]any{uint64(KindDeploy), []byte("x"), []byte("s"), "", []byte{}, []byte{}})
	if _, err := DecodeInstruction(empty); err == nil || !strings.Contains(err.Error(), "empty manifest") {
		t.Fatalf("empty manifest accepted: %v", err)
	}
	seven := codec.MustMarshal([]any{uint64(KindDeploy), []byte("x"), []byte("s"), "", []byte{}, []byte{1}, []byte{2}})
	if _, err := DecodeInstruction(seven); err == nil {
		t.Fatal("7-element deploy accepted")
	}
}

// FuzzDeployRoundTrip: a Deploy payload (either form) that decodes
// re-encodes to exactly the same bytes.
func FuzzDeployRoundTrip(f *testing.F) {
	f.Add(codec.MustMarshal([]any{uint64(KindDeploy), []byte("x"), []byte("s"), "", []byte{}}))
	f.Add(codec.MustMarshal([]any{uint64(KindDeploy), []byte("x"), []byte("s"), "init", []byte{0x80}, []byte{0x81, 0x01}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := DecodeInstruction(data)
		if err != nil {
			return
		}
		d, ok := in.(*Deploy)
		if !ok {
			return
		}
		out, err := EncodeInstruction(d)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("round trip changed bytes: %x -> %x", data, out)
		}
	})
}
