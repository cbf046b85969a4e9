package types

import (
	"bytes"
	"testing"
)

func FuzzValidatorInstructions(f *testing.F) {
	for _, in := range []Instruction{
		&ValidatorRegister{BLSKey: bytes.Repeat([]byte{1}, 48), BLSPoP: bytes.Repeat([]byte{2}, 96)},
		&ValidatorExit{}, &ValidatorWithdraw{}, &ValidatorUnjail{},
		&ValidatorEvidence{Evidence: []byte{0x85, 1, 2}, Epoch: 3},
	} {
		b, err := EncodeInstruction(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := DecodeInstruction(data)
		if err != nil || in == nil || in.InstructionKind().Lane() != LaneSystem {
			return
		}
		again, err := EncodeInstruction(in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("%s: decode → encode changed the bytes", in.InstructionKind())
		}
	})
}

func TestValidatorInstructionNames(t *testing.T) {
	for k, want := range map[InstructionKind]string{70: "validator_register", 71: "validator_exit", 72: "validator_withdraw", 73: "validator_evidence", 74: "validator_unjail"} {
		if k.String() != want {
			t.Errorf("%d: %s", k, k.String())
		}
	}
}
