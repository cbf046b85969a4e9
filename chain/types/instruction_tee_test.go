package types

import (
	"bytes"
	"reflect"
	"testing"
)

func TestTEEInstructionsRoundTrip(t *testing.T) {
	for _, in := range []Instruction{
		&TEEAttest{Evidence: Bytes{1, 2}, SealKey: make(Bytes, 32)},
		&TEEAttestResult{JobID: Hash{1}, ResultHash: Hash{2}, Evidence: Bytes{3}},
		&SecretPut{Name: "k", Policy: Bytes{0x87}, Ciphertext: Bytes{4}, OwnerKey: Bytes{5}},
		&SecretGrant{Name: "k", Runner: Address{6}, SealKey: Bytes{7}, SealedKey: Bytes{8}},
		&SecretRevoke{Name: "k", Runner: Address{9}},
		&SecretDelete{Name: "k"},
	} {
		b, err := EncodeInstruction(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := DecodeInstruction(b)
		if err != nil {
			t.Fatalf("%T: %v", in, err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("%T: %+v != %+v", in, in, out)
		}
		again, _ := EncodeInstruction(out)
		if !bytes.Equal(b, again) {
			t.Fatalf("%T: re-encoding differs", in)
		}
		if name := in.InstructionKind().String(); name == "" || name[:4] == "kind" {
			t.Fatalf("%T has no name: %s", in, name)
		}
	}
}
